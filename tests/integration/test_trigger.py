"""The trigger check against the emulator's collaborator permission API: a label added by
someone with less than `trigger.permission` starts nothing (exit 75, nothing written), one
added by someone with enough starts the run, and the check costs one request."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers_run import BOT, FAST, NOT_CLAIMED, QUEUE, USAGE, WORKING, Child, Run, claim_comments, fast_config
from rig import Proxy, RepoHandle

from orion_action.config import PERMISSIONS
from orion_action.services.trigger import at_least

PERMISSION_PATH = "/collaborators/"


def _grant(repo: RepoHandle, login: str, permission: str) -> None:
    """Make `login` a collaborator (the API's names: pull, triage, push, maintain, admin)."""
    repo.api("PUT", f"/collaborators/{login}", json={"permission": permission})


def _permission_requests(proxy: Proxy) -> int:
    return sum(1 for e in proxy.log if e.method == "GET" and PERMISSION_PATH in e.path
               and e.path.split("?")[0].endswith("/permission"))


def test_levels_are_ordered() -> None:
    assert at_least("admin", "write") and at_least("write", "write") and at_least("maintain", "triage")
    assert not at_least("triage", "write") and not at_least("none", "read")
    assert not at_least("something-custom", "read")
    assert all(at_least(level, "none") for level in PERMISSIONS)


def test_a_non_collaborator_starts_nothing(repo: RepoHandle, orion_env: dict[str, str],
                                           proxy: Proxy, tmp_path: Path) -> None:
    n = repo.create_issue("work", labels=[QUEUE])
    child = Child(tmp_path)
    run = Run(orion_env, tmp_path, "--issue", str(n), "--actor", "mallory", cmd=child.cmd,
              config=fast_config(tmp_path))
    assert run.wait() == NOT_CLAIMED, run.stderr
    lines = [line for line in run.stderr.splitlines() if "trigger" in line]
    assert len(lines) == 1, run.stderr
    assert "mallory has none access" in lines[0] and "needs write or more" in lines[0]
    assert not child.marker.exists(), "the command ran"
    assert repo.labels(n) == [QUEUE] and claim_comments(repo, n) == []
    assert _permission_requests(proxy) == 1
    assert not [e for e in proxy.log if e.method != "GET"], "something was written"


def test_a_triager_starts_nothing_but_a_writer_does(repo: RepoHandle, orion_env: dict[str, str],
                                                    proxy: Proxy, tmp_path: Path) -> None:
    n = repo.create_issue("work", labels=[QUEUE])
    _grant(repo, "mallory", "triage")
    denied = Run(orion_env, tmp_path, "--issue", str(n), "--actor", "mallory",
                 cmd=Child(tmp_path, "denied", hold=False).cmd, config=fast_config(tmp_path),
                 name="denied")
    assert denied.wait() == NOT_CLAIMED, denied.stderr
    assert "mallory has triage access" in denied.stderr
    assert repo.labels(n) == [QUEUE]

    _grant(repo, "mallory", "push")  # the API's name for write
    child = Child(tmp_path, "allowed", hold=False)
    allowed = Run(orion_env, tmp_path, "--issue", str(n), "--actor", "mallory", cmd=child.cmd,
                  config=fast_config(tmp_path), name="allowed")
    assert allowed.wait() == 0, allowed.stderr
    assert child.marker.exists()
    assert "trigger: mallory has write access" in allowed.stderr
    assert WORKING not in repo.labels(n) and "orion-ready" in repo.labels(n)
    assert _permission_requests(proxy) == 2


def test_the_repository_owner_is_admin(repo: RepoHandle, orion_env: dict[str, str],
                                       tmp_path: Path) -> None:
    n = repo.create_issue("work", labels=[QUEUE])
    config = fast_config(tmp_path, text="heartbeat: {interval: 1, stale_after: 4}\nrun: {kill_grace: 1}\n"
                                        "trigger: {permission: admin}\n")
    child = Child(tmp_path, hold=False)
    run = Run(orion_env, tmp_path, "--issue", str(n), "--actor", BOT, cmd=child.cmd, config=config)
    assert run.wait() == 0, run.stderr
    assert f"trigger: {BOT} has admin access" in run.stderr


@pytest.mark.parametrize("args,config_text", [
    (("--actor", "mallory"), "trigger: {permission: none}\n"),  # the check is off
    ((), ""),  # no actor: a dispatch, a schedule, a person at a terminal
], ids=["permission-none", "no-actor"])
def test_no_check_costs_no_request(repo: RepoHandle, orion_env: dict[str, str], proxy: Proxy,
                                   tmp_path: Path, args: tuple[str, ...], config_text: str) -> None:
    n = repo.create_issue("work", labels=[QUEUE])
    child = Child(tmp_path, hold=False)
    run = Run(orion_env, tmp_path, "--issue", str(n), *args, cmd=child.cmd,
              config=fast_config(tmp_path, text=FAST + config_text))
    assert run.wait() == 0, run.stderr
    assert child.marker.exists()
    assert _permission_requests(proxy) == 0 and "trigger" not in run.stderr


def test_a_bad_trigger_permission_is_a_usage_error(repo: RepoHandle, orion_env: dict[str, str],
                                                   proxy: Proxy, tmp_path: Path) -> None:
    n = repo.create_issue("work", labels=[QUEUE])
    config = fast_config(tmp_path, text="trigger: {permission: push}\n")
    run = Run(orion_env, tmp_path, "--issue", str(n), "--actor", "mallory", cmd=["true"], config=config)
    assert run.wait() == USAGE
    (line,) = run.stderr.strip().splitlines()
    assert str(config) in line and "trigger.permission" in line
    assert proxy.log == []
