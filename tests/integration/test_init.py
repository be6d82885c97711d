"""`orion-action init` against the emulator: creates every label the configuration names
(the four orion moves, the cancel label, the priority labels), is idempotent, and repairs a
label whose colour is wrong."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from rig import ROOT, RepoHandle

EXPECTED = {
    "orion": "1d76db",
    "orion-working": "fbca04",
    "orion-ready": "0e8a16",
    "orion-failed": "b60205",
    "orion-cancel": "d93f0b",
}


def _init(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "orion_action", "init", *args], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=60)


def _labels(repo: RepoHandle) -> dict[str, dict[str, Any]]:
    return {label["name"]: label for label in repo.api("GET", "/labels", params={"per_page": 100})}


def test_init_creates_the_four_labels_with_colours(repo: RepoHandle,
                                                   orion_env: dict[str, str]) -> None:
    result = _init(orion_env)
    assert result.returncode == 0, result.stderr
    labels = _labels(repo)
    for name, colour in EXPECTED.items():
        assert name in labels, f"{name} not created: {sorted(labels)}"
        assert labels[name]["color"].lower() == colour
        assert labels[name]["description"], f"{name} has no description"
        assert f"label {name!r}" in result.stdout and "created" in result.stdout
    assert "Next steps" in result.stdout
    assert "orion-action release" in result.stdout
    assert "trusted_authors" in result.stdout


def test_init_twice_reports_unchanged(repo: RepoHandle, orion_env: dict[str, str]) -> None:
    assert _init(orion_env).returncode == 0
    before = _labels(repo)
    second = _init(orion_env)
    assert second.returncode == 0, second.stderr
    for name in EXPECTED:
        assert f"label {name!r}" in second.stdout
    lines = [line for line in second.stdout.splitlines() if line.startswith("label ")]
    assert len(lines) == len(EXPECTED) and all(": unchanged " in line for line in lines), second.stdout
    assert "created" not in second.stdout and "updated" not in second.stdout
    assert _labels(repo) == before


def test_init_updates_a_label_with_a_wrong_colour(repo: RepoHandle,
                                                  orion_env: dict[str, str]) -> None:
    repo.api("POST", "/labels", json={"name": "orion-failed", "color": "ffffff",
                                      "description": "someone else's idea"})
    result = _init(orion_env)
    assert result.returncode == 0, result.stderr
    assert "label 'orion-failed' (failed): updated" in result.stdout
    labels = _labels(repo)
    assert labels["orion-failed"]["color"].lower() == EXPECTED["orion-failed"]
    assert labels["orion-failed"]["description"] != "someone else's idea"
    for name in ("orion", "orion-working", "orion-ready"):
        assert f"label {name!r}" in result.stdout
        assert labels[name]["color"].lower() == EXPECTED[name]


def test_init_uses_the_configured_label_names(repo: RepoHandle, orion_env: dict[str, str],
                                               tmp_path: Any) -> None:
    config = tmp_path / "orion.yml"
    config.write_text("labels: {queue: todo, working: busy, ready: done, failed: broken, cancel: stop}\n")
    result = _init(orion_env, "--config", str(config))
    assert result.returncode == 0, result.stderr
    labels = _labels(repo)
    assert {"todo", "busy", "done", "broken", "stop"} <= set(labels)
    assert labels["busy"]["color"].lower() == EXPECTED["orion-working"]
    assert not set(EXPECTED) & set(labels)


def test_init_without_a_token_is_a_usage_error(repo: RepoHandle, orion_env: dict[str, str]) -> None:
    env = {**orion_env, "GITHUB_TOKEN": ""}
    result = _init(env)
    assert result.returncode == 64
    assert "GITHUB_TOKEN" in result.stderr
    assert _labels(repo).keys().isdisjoint(EXPECTED)


def test_init_creates_the_priority_labels(repo: RepoHandle, orion_env: dict[str, str],
                                          tmp_path: Any) -> None:
    """A person adds priority labels in the web interface, where a label must exist first."""
    config = tmp_path / "orion.yml"
    config.write_text("labels: {priority: [orion-p0, orion-p1]}\n")
    result = _init(orion_env, "--config", str(config))
    assert result.returncode == 0, result.stderr
    labels = _labels(repo)
    assert "priority 1 of 2" in labels["orion-p0"]["description"]
    assert "priority 2 of 2" in labels["orion-p1"]["description"]
    assert "label 'orion-p1' (priority): created" in result.stdout
    assert "7 of 7 labels created or updated" in result.stderr
