"""In Actions (GITHUB_ACTIONS=true) errors are also `::error::` annotations with the real message
(on the configuration file, and its line, when that is what is wrong), and a failed dispatch a
`::warning::` with GitHub's reason; outside Actions neither appears (issue 18, "Visible")."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes.memory_github import MemoryServer

from orion_action import cli
from orion_action.adapters.actions import ActionsRunner
from orion_action.config import Config
from orion_action.errors import GitHubError
from orion_action.services.dispatch import dispatch_issues


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dead_url: str) -> dict[str, str]:
    monkeypatch.chdir(tmp_path)
    return {"GITHUB_TOKEN": "t", "GITHUB_REPOSITORY": "octo/work", "GITHUB_API_URL": dead_url,
            "ORION_API_RETRY_SECONDS": "1"}


def test_a_yaml_error_is_annotated_on_the_file_and_line(env, tmp_path, capsys) -> None:
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "orion.yml").write_text("heartbeat:\n  interval: [1\n")
    code = cli.main(["status"], {**env, "GITHUB_ACTIONS": "true"})
    out, err = capsys.readouterr()
    assert code == 64
    assert "orion-action: error: .github/orion.yml: invalid YAML" in err
    [annotation] = [line for line in out.splitlines() if line.startswith("::error")]
    assert annotation.startswith("::error file=.github/orion.yml,line=3,title=orion-action::")
    assert "invalid YAML (line 3" in annotation


def test_a_bad_key_is_annotated_on_the_file_with_the_message(env, tmp_path, capsys) -> None:
    path = tmp_path / "o.yml"
    path.write_text("run: {kill_grace: 3600}\n")
    code = cli.main(["status", "--config", str(path)], {**env, "GITHUB_ACTIONS": "true"})
    out, _ = capsys.readouterr()
    assert code == 64
    [annotation] = [line for line in out.splitlines() if line.startswith("::error")]
    assert annotation.startswith(f"::error file={path},title=orion-action::{path}: run.kill_grace")


def test_other_errors_are_annotated_without_a_file_and_nothing_outside_actions(env, capsys) -> None:
    code = cli.main(["run", "--issue", "1", "--", "no-such-command-h9"], {**env, "GITHUB_ACTIONS": "true"})
    out, _ = capsys.readouterr()
    assert code == 64
    errors = [line for line in out.splitlines() if line.startswith("::error")]
    assert errors == ["::error title=orion-action::cannot start the command: 'no-such-command-h9' "
                      "is not found on PATH; nothing was claimed"]
    code = cli.main(["run", "--issue", "1", "--", "no-such-command-h9"], env)
    out, err = capsys.readouterr()
    assert code == 64 and "::error" not in out + err


def test_a_failed_dispatch_is_a_warning_with_githubs_reason(capsys) -> None:
    s = MemoryServer()
    gh = s.client()

    def refused(*_args: object, **_kwargs: object) -> list[object]:
        raise GitHubError("HTTP 422: workflow not found")

    gh.list_workflow_runs = refused  # type: ignore[method-assign]
    lines: list[str] = []
    config = Config(dispatch_workflow="orion-worker.yml", source="test")
    in_actions = ActionsRunner({"GITHUB_ACTIONS": "true"})
    assert dispatch_issues(gh, config, [5], lines.append, lambda n: True, in_actions) == []
    out, _ = capsys.readouterr()
    assert lines and "HTTP 422: workflow not found" in lines[0] and "#5 stay(s) queued" in lines[0]
    assert out.startswith("::warning title=orion-action%3A dispatch::dispatch: starting orion-worker.yml "
                          "failed: HTTP 422: workflow not found")
    assert dispatch_issues(gh, config, [5], lines.append, lambda n: True, ActionsRunner({})) == []
    assert capsys.readouterr().out == ""  # outside Actions: the log line only
