"""A command that cannot start is refused before anything is claimed (ADR 0042): a typo in
`run:` must not claim an issue and burn an attempt to orion-failed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fakes.host import real_host
from fakes.memory_github import MemoryServer

from orion_action.config import Config
from orion_action.errors import ExitCode, UsageError
from orion_action.services.wrapper import RunRequest, Wrapper, check_command

CONFIG = Config(source="test")
LAB = CONFIG.labels


def refused(tmp_path: Path, command: list[str], drain: bool = False, path: str | None = None) -> str:
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    env = {"PATH": path or str(tmp_path)}
    w = Wrapper([s.client()], CONFIG, lambda line: None, env, real_host(env))
    with pytest.raises(UsageError) as caught:
        if drain:
            w.drain(RunRequest(command=command))
        else:
            w.run(RunRequest(command=command, issue=n))
    assert caught.value.exit_code == ExitCode.USAGE
    assert s.issue(n).labels == frozenset({LAB.queue}) and s.comments(n) == []
    return str(caught.value)


def test_a_typo_on_path_is_refused_and_nothing_is_claimed(tmp_path: Path) -> None:
    assert "'claud' is not found on PATH; nothing was claimed" in refused(tmp_path, ["claud", "-p"])
    assert "not found on PATH" in refused(tmp_path, ["claud"], drain=True)


def test_a_missing_or_non_executable_path_is_refused(tmp_path: Path) -> None:
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o644)
    assert "is not executable" in refused(tmp_path, [str(script)])
    assert "does not exist" in refused(tmp_path, [str(tmp_path / "nope.sh")])


def test_a_command_that_can_start_passes(tmp_path: Path) -> None:
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    check_command([str(script)], {})
    check_command(["agent.sh"], {"PATH": str(tmp_path)})
    check_command(["sh", "-c", "true"], {"PATH": os.defpath})


def test_a_shell_script_that_cannot_be_parsed_is_refused(tmp_path: Path) -> None:
    """The action runs `bash -c "<run>"`: an unmatched quote in `run:` is refused too, and a
    script that parses passes (parsing runs nothing)."""
    marker = tmp_path / "ran"
    message = refused(tmp_path, ["bash", "-c", f"touch {marker}; echo 'unterminated"], path=os.defpath)
    assert "bash cannot parse the script" in message and "nothing was claimed" in message
    check_command(["bash", "-c", f"touch {marker}; if true; then echo ok; fi"], {"PATH": os.defpath})
    assert not marker.exists()



@pytest.mark.parametrize("shell", ["bash", "sh"])
def test_a_typo_in_the_first_command_of_a_run_line_is_refused(tmp_path: Path, shell: str) -> None:
    """The action path: `run: ./no-such-script.sh` parses, and bash would exit 127 after the
    claim, burning the issue to orion-failed (the r3 review). The script's first command is
    looked up as the shell will, before anything is claimed."""
    message = refused(tmp_path, [shell, "-c", "# the agent\n\n  ./no-such-script.sh --fast"], path=os.defpath)
    assert message == ("cannot start the command: './no-such-script.sh', the script's first command, "
                       "does not exist; nothing was claimed")
    assert "'claud', the script's first command, is not found on PATH" in refused(
        tmp_path, [shell, "-c", "claud -p \"$(cat $ORION_ISSUE_FILE)\""], path=os.defpath)
    assert "the script's first command" in refused(tmp_path, [shell, "-c", "claud; echo"], drain=True,
                                                   path=os.defpath)


def test_a_first_command_the_shell_can_run_passes_and_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    script = tmp_path / "agent.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(0o755)
    path = f"{tmp_path}:{os.defpath}"
    for line in (f"{script} --x", "agent.sh", "cd /tmp && ./anything", "set -e\nnosuch", "(nosuch)",
                 "if true; then nosuch; fi", "FOO=1 nosuch", "\"$TOOL\" run", "[[ -e x ]] || true"):
        check_command(["bash", "-c", line], {"PATH": path})  # a later or expanded command: not judged
    assert not marker.exists()
