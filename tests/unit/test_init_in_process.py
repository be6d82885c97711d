"""`init` decisions in-process on the in-memory GitHub (the service and the report layer, as
cli.py calls them): idempotent, repairs a wrong colour, uses the configured names, creates the
priority labels. (Issue 17: these were product subprocesses in integration/test_init.py, which
keeps `init` end to end against the emulator and its exit-64 line without a token.)"""

from __future__ import annotations

import pytest
from fakes.memory_github import MemoryServer

from orion_action import report
from orion_action.config import Config, parse_config
from orion_action.services.setup import init_command

EXPECTED = {
    "orion": "1d76db",
    "orion-working": "fbca04",
    "orion-ready": "0e8a16",
    "orion-failed": "b60205",
    "orion-cancel": "d93f0b",
}


DEFAULTS = Config()


def init(s: MemoryServer, capsys: pytest.CaptureFixture[str],
         config: Config = DEFAULTS) -> tuple[str, list[str]]:
    """`init`: what it printed and what it logged (exit 0)."""
    logs: list[str] = []
    capsys.readouterr()
    assert report.lines(init_command(s.client(), config, logs.append)) == 0
    return capsys.readouterr().out, logs


def test_init_twice_reports_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    s = MemoryServer()
    init(s, capsys)
    before = dict(s.labels)
    out, _ = init(s, capsys)
    for name in EXPECTED:
        assert f"label {name!r}" in out
    lines = [line for line in out.splitlines() if line.startswith("label ")]
    assert len(lines) == len(EXPECTED) and all(": unchanged " in line for line in lines), out
    assert "created" not in out and "updated" not in out
    assert s.labels == before


def test_init_updates_a_label_with_a_wrong_colour(capsys: pytest.CaptureFixture[str]) -> None:
    s = MemoryServer()
    s.labels["orion-failed"] = ("ffffff", "someone else's idea")
    out, _ = init(s, capsys)
    assert "label 'orion-failed' (failed): updated" in out
    assert s.labels["orion-failed"][0].lower() == EXPECTED["orion-failed"]
    assert s.labels["orion-failed"][1] != "someone else's idea"
    for name in ("orion", "orion-working", "orion-ready"):
        assert f"label {name!r}" in out
        assert s.labels[name][0].lower() == EXPECTED[name]


def test_init_uses_the_configured_label_names(capsys: pytest.CaptureFixture[str]) -> None:
    s = MemoryServer()
    config = parse_config({"labels": {"queue": "todo", "working": "busy", "ready": "done", "failed": "broken",
                                      "cancel": "stop"}}, source="orion.yml")
    init(s, capsys, config)
    assert {"todo", "busy", "done", "broken", "stop"} <= set(s.labels)
    assert s.labels["busy"][0].lower() == EXPECTED["orion-working"]
    assert not set(EXPECTED) & set(s.labels)


def test_init_creates_the_priority_labels(capsys: pytest.CaptureFixture[str]) -> None:
    """A person adds priority labels in the web interface, where a label must exist first."""
    s = MemoryServer()
    config = parse_config({"labels": {"priority": ["orion-p0", "orion-p1"]}}, source="orion.yml")
    out, logs = init(s, capsys, config)
    assert "priority 1 of 2" in s.labels["orion-p0"][1]
    assert "priority 2 of 2" in s.labels["orion-p1"][1]
    assert "label 'orion-p1' (priority): created" in out
    assert any("7 of 7 labels created or updated" in line for line in logs), logs
