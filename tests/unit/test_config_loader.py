"""config.load_config's YAML loader and the bounds of single values, at their edges: the
nesting limit, duplicate keys (merge keys excepted), values no constructor can build, and
the longest title, label and duration accepted (docs/configuration.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from orion_action.config import (
    LABEL_MAX,
    MAX_DEPTH,
    MAX_DURATION,
    TITLE_MAX,
    load_config,
    parse_config,
    parse_duration,
)
from orion_action.errors import ConfigError


def load(tmp_path: Path, text: str):
    path = tmp_path / "orion.yml"
    path.write_text(text, encoding="utf-8")
    return load_config(str(path))


def test_nesting_up_to_the_limit_is_read_and_one_deeper_is_refused(tmp_path: Path) -> None:
    assert MAX_DEPTH == 32
    # a top-level mapping holding a key whose value nests lists: the mapping, its key and
    # value nodes count as levels too
    deep = "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)
    with pytest.raises(ConfigError, match="trusted_authors: expected a list of GitHub logins"):
        load(tmp_path, f"trusted_authors: {deep}\n")
    with pytest.raises(ConfigError, match=f"nested deeper than {MAX_DEPTH} levels"):
        load(tmp_path, f"trusted_authors: [{deep}]\n")


def test_many_siblings_are_not_depth(tmp_path: Path) -> None:
    """The depth counter goes back down after each node: width is not nesting."""
    logins = ", ".join(f"user{i}" for i in range(3 * MAX_DEPTH))
    assert len(load(tmp_path, f"trusted_authors: [{logins}]\n").trusted_authors) == 3 * MAX_DEPTH


def test_a_key_given_twice_is_refused_at_its_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"invalid YAML \(line 3, column 3\): duplicate key 'permission'"):
        load(tmp_path, "trigger:\n  permission: write\n  permission: none\n")
    with pytest.raises(ConfigError, match="duplicate key"):
        load(tmp_path, "retry: {max_attempts: 2}\nretry: {max_attempts: 3}\n")


def test_keys_alike_only_in_type_are_not_duplicates(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown key"):  # read, then refused by the schema
        load(tmp_path, "1: a\n'1': b\n")


def test_a_merge_key_may_override(tmp_path: Path) -> None:
    config = load(tmp_path, "labels: &base {queue: todo}\nrun:\n  <<: {kill_grace: 2}\n  kill_grace: 3\n")
    assert config.labels.queue == "todo" and config.kill_grace == 3


def test_a_value_no_constructor_can_build_is_an_error_at_its_line(tmp_path: Path) -> None:
    month = r"\(line 1, column 20\): cannot read this value \(month must be in 1\.\.12\)"
    with pytest.raises(ConfigError, match=month):
        load(tmp_path, "dashboard: {title: 2026-13-01}\n")


def test_invalid_yaml_names_the_problem(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"invalid YAML \(line 2, column 1\): expected ',' or ']'"):
        load(tmp_path, "trusted_authors: [a\n")


def test_the_longest_values_accepted() -> None:
    assert parse_config({"dashboard": {"title": "t" * TITLE_MAX}}, "f").dashboard_title == "t" * TITLE_MAX
    with pytest.raises(ConfigError, match="at most 256 characters"):
        parse_config({"dashboard": {"title": "t" * (TITLE_MAX + 1)}}, "f")
    longest = "p" * LABEL_MAX
    assert parse_config({"labels": {"priority": [longest]}}, "f").labels.priority == (longest,)
    with pytest.raises(ConfigError, match="labels.priority"):
        parse_config({"labels": {"priority": [longest + "p"]}}, "f")
    assert (TITLE_MAX, LABEL_MAX) == (256, 50)  # GitHub's limits


def test_a_week_is_the_longest_duration() -> None:
    assert parse_duration("168h") == MAX_DURATION == 7 * 24 * 3600
    with pytest.raises(ValueError, match="at most a week"):
        parse_duration(MAX_DURATION + 1)


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"run": {"on_signal": "stop"}}, "run.on_signal: expected one of cancel, requeue, got 'stop'"),
        ({"trigger": {"permission": 3}}, "trigger.permission: expected one of none, read, triage, write, "
                                         "maintain, admin, got 3"),
        ({"run": {"user": 7}}, "run.user: expected a user name of the machine, got 7"),
        ({"run": {"user": "bad name"}}, "run.user: expected a user name of the machine, got 'bad name'"),
        ({"dispatch": {"workflow": "w.txt"}},
         "dispatch.workflow: expected a workflow file name like \"worker.yml\" or \"\", got 'w.txt'"),
    ],
)
def test_choices_and_patterns_refuse_with_one_line(doc: dict, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config(doc, "f.yml")
    assert str(err.value) == f"f.yml: {message}"


def test_choices_and_patterns_keep_what_they_accept() -> None:
    doc = {"run": {"on_signal": "requeue", "user": "agent"}, "trigger": {"permission": "none"},
           "dispatch": {"workflow": "worker.yaml"}}
    config = parse_config(doc, "f.yml")
    assert (config.on_signal, config.run_user, config.trigger_permission, config.dispatch_workflow) == (
        "requeue", "agent", "none", "worker.yaml")
    assert parse_config({"labels": {"queue": "todo", "cancel": "stop"}}, "f").labels.cancel == "stop"


def test_counts_start_at_one() -> None:
    assert parse_config({"retry": {"max_attempts": 1}}, "f").max_attempts == 1
    with pytest.raises(ConfigError, match="retry.max_attempts: expected a whole number of at least 1, got 0"):
        parse_config({"retry": {"max_attempts": 0}}, "f")


def test_a_default_stale_after_too_short_for_the_interval_blames_the_interval_set() -> None:
    """Blame the key the user set, not a default (docs/configuration.md)."""
    blamed = r"^f: heartbeat\.interval: 300s is too long for heartbeat\.stale_after \(600s, the default\)"
    with pytest.raises(ConfigError, match=blamed):
        parse_config({"heartbeat": {"interval": "300s"}}, "f")
    given = r"^f: heartbeat\.stale_after: must be at least 3 x heartbeat\.interval \(300s\), got 600s"
    with pytest.raises(ConfigError, match=given):
        parse_config({"heartbeat": {"interval": "300s", "stale_after": "600s"}}, "f")


def test_max_interval_is_at_least_the_interval() -> None:
    config = parse_config({"heartbeat": {"interval": "2m", "max_interval": "2m"}}, "f")
    assert config.heartbeat_max_interval == 120
    shorter = r"heartbeat\.max_interval: must be at least heartbeat\.interval \(120s\)"
    with pytest.raises(ConfigError, match=shorter):
        parse_config({"heartbeat": {"interval": "2m", "max_interval": "119s"}}, "f")


def test_max_interval_stretches_stale_after_to_at_most_a_week() -> None:
    """ADR 0045: a beat stretched to max_interval stretches stale_after by the same factor
    (here x 10), and that must stay a duration: 1,008 min x 10 is exactly a week."""
    beat = {"interval": "1m", "stale_after": "10m"}
    assert parse_config({"heartbeat": {**beat, "max_interval": "1008m"}}, "f").heartbeat_max_interval == 60480
    with pytest.raises(ConfigError, match=r"stretch stale_after \(x 10\) to at most a week; got 60540s"):
        parse_config({"heartbeat": {**beat, "max_interval": "1009m"}}, "f")


def test_a_number_too_long_to_read_names_the_limit_not_the_advice(tmp_path: Path) -> None:
    """Python's refusal says the limit, then (after ';') how to lift it: only the first part
    is shown."""
    limit = r"cannot read this value \(Exceeds the limit \(4300 digits\) for integer string conversion: "
    with pytest.raises(ConfigError, match=limit + r"value has 5000 digits\)$"):
        load(tmp_path, f"retry: {{max_attempts: {'9' * 5000}}}\n")


def test_a_null_key_given_twice_is_a_duplicate(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\(line 2, column 1\): duplicate key 'None'"):
        load(tmp_path, "~: a\n~: b\n")


@pytest.mark.parametrize(("text", "message"), [
    ("trusted_authors: &a [*a]\n", "trusted_authors: expected a list of GitHub logins"),
    ("labels: &a {queue: *a}\n", r"labels\.queue: expected a non-empty string, got \{'queue': \{\.\.\.\}\}"),
])
def test_a_value_that_contains_itself_is_read_as_safe_load_reads_it_and_refused_by_the_schema(
        tmp_path: Path, text: str, message: str) -> None:
    """The stricter loader builds values as yaml.safe_load does (collections filled after
    they are made, so an alias to an enclosing one is allowed): the schema then says what is
    wrong with the value, at its key."""
    with pytest.raises(ConfigError, match=message):
        load(tmp_path, text)
