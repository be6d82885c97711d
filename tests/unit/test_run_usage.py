"""`run` refuses bad arguments with one line and exit 64, before any request, with its token
nowhere in the output. In-process through `cli.main` (issue 17: these were seven product
subprocesses in integration/test_run.py; its bad-config cases remain the end-to-end smoke test
of the same refusal path). The API URL is a closed port: a request would end in a different
error, not in this one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from orion_action import cli
from orion_action.errors import ExitCode

TOKEN = "ghp_usage_test_token_never_printed"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dead_url: str) -> dict[str, str]:
    monkeypatch.chdir(tmp_path)
    return {"GITHUB_TOKEN": TOKEN, "GITHUB_REPOSITORY": "octo/work", "GITHUB_API_URL": dead_url,
            "ORION_API_RETRY_SECONDS": "1"}


def _exit_code(argv: list[str], env: dict[str, str]) -> int:
    """cli.main's code; argparse's refusals leave through SystemExit, as `python -m` sees them."""
    try:
        return cli.main(argv, env)
    except SystemExit as exc:
        assert isinstance(exc.code, int), exc.code
        return exc.code


def _one_line(capsys: pytest.CaptureFixture[str], code: int, *fragments: str) -> None:
    out, err = capsys.readouterr()
    assert code == ExitCode.USAGE, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("orion-action: error: "), lines[0]
    for f in fragments:
        assert f in lines[0], lines[0]
    assert TOKEN not in err and TOKEN not in out


@pytest.mark.parametrize("args,says", [
    (["--issue", "x"], "--issue"),
    (["--issue", "0"], "--issue"),
    (["--stage", "a b", "--next"], "--stage"),
    ([], "--issue --next"),
    (["--issue", "1", "--next"], "not allowed"),
    (["--issue", "2", "--require", "gpu"], "--require goes with --next"),
    (["--issue", "2", "--drain"], "--drain works with --next only"),
    (["--next", "--max-runs", "2"], "--max-runs works with --drain only"),
])
def test_bad_arguments_exit_64(env, tmp_path, capsys, args, says) -> None:
    config = tmp_path / "orion.yml"
    config.write_text("heartbeat: {interval: 1, stale_after: 4}\nrun: {kill_grace: 1}\n")
    code = _exit_code(["run", "--config", str(config), *args, "--", "true"], env)
    _one_line(capsys, code, says)


@pytest.mark.parametrize("tail", [["--"], []], ids=["separator", "no separator"])
def test_no_command_after_the_separator_exits_64(env, capsys, tail) -> None:
    code = _exit_code(["run", "--issue", "3", *tail], env)
    _one_line(capsys, code, "no command")
