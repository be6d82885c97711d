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
