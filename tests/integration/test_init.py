"""`orion-action init` against the emulator: creates every label the configuration names
(the four orion moves, the cancel label, the priority labels), is idempotent, and repairs a
label whose colour is wrong. Those decisions run in-process in unit/test_init_in_process.py;
here, `init` end to end and its exit-64 line without a token."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rig import ROOT, RepoHandle
from rig.harness import Proc, product

EXPECTED = {
    "orion": "1d76db",
    "orion-working": "fbca04",
    "orion-ready": "0e8a16",
    "orion-failed": "b60205",
    "orion-cancel": "d93f0b",
}


def _init(env: dict[str, str], workdir: Path) -> Proc:
    return product(["init"], env=env, workdir=workdir, cwd=ROOT)


def _labels(repo: RepoHandle) -> dict[str, dict[str, Any]]:
    return {label["name"]: label for label in repo.api("GET", "/labels", params={"per_page": 100})}


def test_init_creates_the_four_labels_with_colours(repo: RepoHandle, orion_env: dict[str, str],
                                                   tmp_path: Path) -> None:
    result = _init(orion_env, tmp_path)
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


def test_init_without_a_token_is_a_usage_error(repo: RepoHandle, orion_env: dict[str, str],
                                               tmp_path: Path) -> None:
    env = {**orion_env, "GITHUB_TOKEN": ""}
    result = _init(env, tmp_path)
    assert result.returncode == 64
    assert "GITHUB_TOKEN" in result.stderr
    assert _labels(repo).keys().isdisjoint(EXPECTED)
