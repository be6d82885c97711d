"""Configuration: defaults, durations, and errors that name the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orion_action.config import Config, Labels, load_config, parse_config, parse_duration
from orion_action.errors import ConfigError, ExitCode


@pytest.mark.parametrize("value,seconds", [
    (90, 90.0), (1.5, 1.5), ("90", 90.0), ("90s", 90.0), ("5m", 300.0), ("1h", 3600.0),
    ("500ms", 0.5), (" 2m ", 120.0), ("1.5h", 5400.0), ("2 s", 2.0),
])
def test_durations(value, seconds) -> None:
    assert parse_duration(value) == seconds


@pytest.mark.parametrize("value", [True, False, None, "", "5 minutes", "m", "-5s", "5d", "0",
                                   0, -1, [5], {"s": 5}, "1e3"])
def test_bad_durations(value) -> None:
    with pytest.raises(ValueError):
        parse_duration(value)


@given(st.integers(min_value=1, max_value=10**6), st.sampled_from(["", "s", "m", "h"]))
def test_duration_units(n: int, unit: str) -> None:
    factor = {"": 1, "s": 1, "m": 60, "h": 3600}[unit]
    if n * factor <= 7 * 24 * 3600:
        assert parse_duration(f"{n}{unit}") == n * factor
    else:
        with pytest.raises(ValueError, match="at most a week"):
            parse_duration(f"{n}{unit}")


def test_defaults() -> None:
    c = parse_config(None, "x.yml")
    assert (c.heartbeat_interval, c.stale_after, c.max_attempts, c.kill_grace) == (120, 600, 3, 5)
    assert c.labels == Labels() and c.trusted_authors == ()
    assert c.renew_deadline == pytest.approx(400)
    assert parse_config({}, "x.yml") == Config(source="x.yml")


def test_a_full_file() -> None:
    c = parse_config({
        "labels": {"queue": "todo", "working": "busy", "ready": "done", "failed": "help",
                   "stage_prefix": "at-"},
        "heartbeat": {"interval": "30s", "stale_after": "2m"},
        "retry": {"max_attempts": 5},
        "run": {"kill_grace": 2},
        "trusted_authors": ["alice", "ci-bot[bot]"],
        "trigger": {"permission": "maintain"},
    }, "f.yml")
    assert c.labels.queue == "todo" and c.labels.stage("lint") == "at-lint"
    assert (c.heartbeat_interval, c.stale_after, c.max_attempts, c.kill_grace) == (30, 120, 5, 2)
    assert c.trusted_authors == ("alice", "ci-bot[bot]")
    assert c.trigger_permission == "maintain"


@pytest.mark.parametrize("level", ["admin", "maintain", "write", "triage", "read", "none"])
def test_trigger_permission_levels(level: str) -> None:
    assert parse_config({"trigger": {"permission": level}}, "f.yml").trigger_permission == level
    assert Config().trigger_permission == "write"


@pytest.mark.parametrize("choice", ["cancel", "requeue"])
def test_on_signal_choices(choice: str) -> None:
    assert parse_config({"run": {"on_signal": choice}}, "f.yml").on_signal == choice
    assert Config().on_signal == "cancel"  # a cancelled Actions job cancels the run (ADR 0043)


@pytest.mark.parametrize("bad", ["Cancel", "hand-back", "", True, 1])
def test_on_signal_refuses_anything_else(bad: object) -> None:
    with pytest.raises(ConfigError, match=r"f.yml: run.on_signal: expected one of cancel, requeue"):
        parse_config({"run": {"on_signal": bad}}, "f.yml")


def test_stale_after_exactly_three_intervals_is_fine() -> None:
    c = parse_config({"heartbeat": {"interval": 1, "stale_after": 3}, "run": {"kill_grace": "900ms"}},
                     "f.yml")
    assert c.stale_after == 3


@pytest.mark.parametrize("doc", [
    {"heartbeat": {"interval": 1}, "run": {"kill_grace": 7}},  # the cap itself
    {"heartbeat": {"interval": 1, "stale_after": 4}, "run": {"kill_grace": 1}},  # the tests' fast config
    {"heartbeat": {"interval": "1s", "stale_after": "168h"}},  # a week
    {"labels": {"queue": "q" * 50, "stage_prefix": "s" * 49}},  # GitHub's limits
    {"labels": {"queue": "todo", "stage_prefix": "todo-stage-"}},  # another label begins the prefix
])
def test_values_at_the_limits_are_accepted(doc) -> None:
    parse_config(doc, "f.yml")


ERRORS = [
    # (why, document, key the message must name)
    ("top level a list", [1, 2], "top level"),
    ("unknown section", {"heartbeats": {}}, "heartbeats"),
    ("unknown key", {"heartbeat": {"intervall": 5}}, "heartbeat.intervall"),
    ("section not a mapping", {"heartbeat": 5}, "heartbeat"),
    ("interval a word", {"heartbeat": {"interval": "often"}}, "heartbeat.interval"),
    ("interval zero", {"heartbeat": {"interval": 0}}, "heartbeat.interval"),
    ("interval a boolean", {"heartbeat": {"interval": True}}, "heartbeat.interval"),
    ("stale_after too short", {"heartbeat": {"interval": 60, "stale_after": "2m"}},
     "heartbeat.stale_after"),
    ("stale_after below the default interval", {"heartbeat": {"stale_after": "5m"}},
     "heartbeat.stale_after"),
    ("max_attempts a string", {"retry": {"max_attempts": "3"}}, "retry.max_attempts"),
    ("max_attempts zero", {"retry": {"max_attempts": 0}}, "retry.max_attempts"),
    ("max_attempts a float", {"retry": {"max_attempts": 2.5}}, "retry.max_attempts"),
    ("max_attempts a boolean", {"retry": {"max_attempts": True}}, "retry.max_attempts"),
    ("kill_grace negative", {"run": {"kill_grace": "-1s"}}, "run.kill_grace"),
    ("label a number", {"labels": {"queue": 5}}, "labels.queue"),
    ("label empty", {"labels": {"working": "  "}}, "labels.working"),
    ("labels collide", {"labels": {"ready": "orion"}}, "labels"),
    ("trusted_authors a string", {"trusted_authors": "alice"}, "trusted_authors"),
    ("trusted_authors with a number", {"trusted_authors": ["alice", 5]}, "trusted_authors"),
    ("trigger permission unknown", {"trigger": {"permission": "push"}}, "trigger.permission"),
    ("trigger permission capitalised", {"trigger": {"permission": "Write"}}, "trigger.permission"),
    ("trigger permission a boolean", {"trigger": {"permission": False}}, "trigger.permission"),
    ("trigger unknown key", {"trigger": {"who": "write"}}, "trigger.who"),
    ("trigger not a mapping", {"trigger": "write"}, "trigger"),
    # Defect 16 of the v0.1 audit: values that passed and then broke the protocol.
    ("stale_after NaN", {"heartbeat": {"stale_after": float("nan")}}, "heartbeat.stale_after"),
    ("interval NaN", {"heartbeat": {"interval": float("nan")}}, "heartbeat.interval"),
    ("stale_after infinite", {"heartbeat": {"interval": float("inf"), "stale_after": float("inf")}},
     "heartbeat.interval"),
    ("kill_grace infinite", {"run": {"kill_grace": float("inf")}}, "run.kill_grace"),
    ("a duration over a week", {"heartbeat": {"stale_after": "169h"}}, "heartbeat.stale_after"),
    ("interval a microsecond", {"heartbeat": {"interval": 0.000001, "stale_after": 0.000003}},
     "heartbeat.interval"),
    ("interval under a second", {"heartbeat": {"interval": "500ms", "stale_after": 3}},
     "heartbeat.interval"),
    ("kill_grace an hour", {"run": {"kill_grace": 3600}, "heartbeat": {"interval": 1, "stale_after": 3}},
     "run.kill_grace"),
    ("kill_grace over the Actions cancel window", {"run": {"kill_grace": 8}}, "run.kill_grace"),
    ("kill_grace a third of stale_after", {"run": {"kill_grace": 2},
                                          "heartbeat": {"interval": 1, "stale_after": 6}},
     "run.kill_grace"),
    ("kill_grace over a third of stale_after", {"run": {"kill_grace": 2},
                                               "heartbeat": {"interval": 1, "stale_after": 4}},
     "run.kill_grace"),
    ("a comma in a label", {"labels": {"working": "orion,working"}}, "labels.working"),
    ("a comma in the stage prefix", {"labels": {"stage_prefix": "at,"}}, "labels.stage_prefix"),
    ("a label over 50 characters", {"labels": {"failed": "f" * 51}}, "labels.failed"),
    ("a stage prefix leaving no room", {"labels": {"stage_prefix": "s" * 50}}, "labels.stage_prefix"),
    ("an empty label", {"labels": {"queue": ""}}, "labels.queue"),
    ("an empty stage prefix", {"labels": {"stage_prefix": ""}}, "labels.stage_prefix"),
    ("a label with edge spaces", {"labels": {"ready": " ready"}}, "labels.ready"),
    ("queue same as working", {"labels": {"queue": "busy", "working": "busy"}}, "labels.working"),
    ("labels differing only in case", {"labels": {"failed": "Orion-Ready"}}, "labels.failed"),
    ("cancel same as queue", {"labels": {"cancel": "orion"}}, "labels.cancel"),
    ("stage prefix begins the queue label", {"labels": {"stage_prefix": "orion"}},
     "labels.stage_prefix"),
    ("stage prefix begins another label", {"labels": {"stage_prefix": "orion-w"}},
     "labels.stage_prefix"),
    ("a stage label that is a configured label", {"labels": {"stage_prefix": "s-", "failed": "s-x"}},
     "labels.stage_prefix"),
    ("stage prefix case-folded", {"labels": {"stage_prefix": "ORION-"}}, "labels.stage_prefix"),
    ("dashboard enabled a string", {"dashboard": {"enabled": "yes"}}, "dashboard.enabled"),
    ("dashboard enabled a number", {"dashboard": {"enabled": 1}}, "dashboard.enabled"),
    ("dashboard title empty", {"dashboard": {"title": " "}}, "dashboard.title"),
    ("dashboard title too long", {"dashboard": {"title": "t" * 257}}, "dashboard.title"),
    ("dashboard unknown key", {"dashboard": {"label": "x"}}, "dashboard.label"),
    ("a priority label that is the dashboard label", {"labels": {"priority": ["orion-dashboard"]}},
     "labels.priority"),
]


def test_the_dashboard_keys() -> None:
    config = parse_config({"dashboard": {"enabled": True, "title": "fleet"}}, "t.yml")
    assert (config.dashboard_enabled, config.dashboard_title) == (True, "fleet")
    assert (Config().dashboard_enabled, Config().dashboard_title) == (False, "orion queue")
    assert Labels(queue="todo").dashboard == "todo-dashboard"


@pytest.mark.parametrize("why,doc,key", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_name_the_file_and_the_key(why, doc, key) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(doc, ".github/orion.yml")
    message = str(info.value)
    assert message.startswith(".github/orion.yml: ")
    assert key in message
    assert "\n" not in message
    assert info.value.exit_code == ExitCode.USAGE


def test_load_reads_yaml_and_durations(tmp_path: Path) -> None:
    f = tmp_path / "orion.yml"
    f.write_text("heartbeat: {interval: 1, stale_after: 4}\nrun: {kill_grace: 500ms}\n")
    c = load_config(str(f))
    assert (c.heartbeat_interval, c.stale_after, c.kill_grace) == (1, 4, 0.5)
    assert c.source == str(f)


def test_an_empty_file_is_the_defaults(tmp_path: Path) -> None:
    f = tmp_path / "orion.yml"
    f.write_text("# nothing here\n")
    assert load_config(str(f)).heartbeat_interval == 120


def test_missing_default_file_means_defaults(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert load_config(None) == Config()


def test_missing_explicit_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_config(str(tmp_path / "nope.yml"))


def test_invalid_yaml_names_file_and_line(tmp_path: Path) -> None:
    f = tmp_path / "orion.yml"
    f.write_text("heartbeat:\n  interval: [1\n")
    with pytest.raises(ConfigError) as info:
        load_config(str(f))
    assert str(info.value).startswith(f"{f}: invalid YAML (line ")
    assert "\n" not in str(info.value)


def test_a_file_that_is_not_utf8_names_the_file(tmp_path: Path) -> None:
    f = tmp_path / "orion.yml"
    f.write_bytes(b"labels:\n  queue: \xff\xfe\n")
    with pytest.raises(ConfigError) as info:
        load_config(str(f))
    assert str(info.value) == f"{f}: not UTF-8 text (byte 17 cannot be decoded)"


def test_a_yaml_nan_is_an_error(tmp_path: Path) -> None:
    f = tmp_path / "orion.yml"
    f.write_text("heartbeat: {interval: 1, stale_after: .nan}\n")
    with pytest.raises(ConfigError, match=r"heartbeat\.stale_after: must be a finite number"):
        load_config(str(f))


def test_a_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(str(tmp_path))
