"""Which variables are credentials, what the command gets, and the handover's reading end
(ADR 0031). The handover's exec itself is shown by tests/integration/test_credentials.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from orion_action import credentials
from orion_action.adapters import run_as
from orion_action.config import parse_config
from orion_action.errors import ConfigError, UsageError

ENV = {
    "PATH": "/usr/bin",
    "GITHUB_REPOSITORY": "octo/work",
    "GITHUB_API_URL": "https://api.github.com",
    "GITHUB_TOKEN": "ghs_job",
    "GH_TOKEN": "ghs_gh",
    "GH_ENTERPRISE_TOKEN": "ghe",
    "GITHUB_PAT_TOKEN": "pat",
    "ORION_APP_ID": "1",
    "ORION_APP_PRIVATE_KEY": "-----BEGIN",
    "ORION_APP_INSTALLATION_ID": "2",
    "ORION_RECORD_KEY": "k",
    "ACTIONS_RUNTIME_TOKEN": "rt",
    "ACTIONS_RUNTIME_URL": "https://r/",
    "ACTIONS_CACHE_URL": "https://c/",
    "ACTIONS_RESULTS_URL": "https://res/",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "idt",
    "ACTIONS_ID_TOKEN_REQUEST_URL": "https://id/",
    "ORION_CLAIM_TOKEN": "public",  # not a credential: it is in the claim comment
}
KEPT = {"PATH", "GITHUB_REPOSITORY", "GITHUB_API_URL", "ORION_CLAIM_TOKEN"}


def test_the_command_gets_no_credential_by_default() -> None:
    assert set(credentials.command_env(ENV, pass_token=False)) == KEPT


def test_pass_token_gives_the_command_the_github_token_and_nothing_else() -> None:
    assert set(credentials.command_env(ENV, pass_token=True)) == KEPT | {"GITHUB_TOKEN", "GH_TOKEN"}


def test_the_reading_end_takes_the_credentials_and_closes_the_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, json.dumps({"GITHUB_TOKEN": "ghs_job"}).encode())
    os.close(write_end)
    monkeypatch.setenv(credentials.HANDOVER_FD, str(read_end))
    monkeypatch.setattr(credentials, "_not_dumpable", lambda: None)
    assert credentials.take_over() == {"GITHUB_TOKEN": "ghs_job"}
    assert credentials.HANDOVER_FD not in os.environ
    with pytest.raises(OSError):
        os.fstat(read_end)


@pytest.mark.parametrize("payload", [b"not json", b'["GITHUB_TOKEN"]', b'{"PATH": "/evil"}'])
def test_a_bad_handover_is_one_usage_error(monkeypatch: pytest.MonkeyPatch, payload: bytes) -> None:
    """Only credential names come over the pipe: it cannot set PATH or anything else."""
    read_end, write_end = os.pipe()
    os.write(write_end, payload)
    os.close(write_end)
    monkeypatch.setenv(credentials.HANDOVER_FD, str(read_end))
    with pytest.raises(UsageError):
        credentials.take_over()


def test_run_user_and_pass_token_are_parsed() -> None:
    config = parse_config({"run": {"user": "agent", "pass_token": True}}, "t.yml")
    assert (config.run_user, config.pass_token) == ("agent", True)
    assert (parse_config({}, "t.yml").run_user, parse_config({}, "t.yml").pass_token) == ("", False)


@pytest.mark.parametrize("value", ["a b", "-x", "x" * 33, 5, "a;rm", "é"])
def test_a_bad_run_user_is_refused(value: object) -> None:
    with pytest.raises(ConfigError, match="run.user"):
        parse_config({"run": {"user": value}}, "t.yml")


def test_run_user_is_refused_unless_orion_is_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(UsageError, match="must run as root"):
        run_as.resolve("nobody", "/")


def test_run_user_must_exist_not_be_root_and_reach_the_working_directory(tmp_path: Path) -> None:
    """Asked in a child that has become the user (root's access() says yes to anything)."""
    if os.geteuid() != 0:
        raise RuntimeError("run.user needs the tests to run as root (as tests/namespaces.py does)")
    with pytest.raises(UsageError, match="no user"):
        run_as.resolve("no-such-user-here", "/")
    with pytest.raises(UsageError, match="is root"):
        run_as.resolve("root", "/")
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    with pytest.raises(UsageError, match="cannot enter and read the working directory"):
        run_as.resolve("nobody", str(closed))
    user = run_as.resolve("nobody", "/")
    assert user.uid != 0 and user.env({"HOME": "/root"})["HOME"] == user.home
