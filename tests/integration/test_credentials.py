"""The command gets no credential (docs/design.md section 7, ADRs 0031 and 0032).

A hostile command (hostile_probe.py) searches everything it can read: its environment, its
ancestors' /proc/PID/environ, cmdline and open files, the wrapper's temporary files and the
checkout's .git/config, and tries every credential-looking string it finds against the rig.
orion-action runs with every kind of credential in its environment: the job's GITHUB_TOKEN
and a GH_TOKEN (both real tokens of the rig), a GitHub App (its key mints tokens from the
emulator), ORION_RECORD_KEY and the runner's own tokens.

The control runs the same probe with the same environment, not under orion-action: it finds
and uses the tokens and the key, so a probe that finds nothing under orion-action is not a
probe that cannot find anything.

Against an emulator seeded with an App, with a proxy in front of it that accepts only the
rig's real tokens (the emulator itself takes any unknown token as its first user).
"""

from __future__ import annotations

import json
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from rig import ROOT, Emulator, Proxy, RepoHandle, orion_env
from rig.harness import PY, QUEUE, READY

APP_ID, SLUG, INSTALLATION = 4242, "orion-app", 777
PROBE = Path(__file__).with_name("hostile_probe.py")
# The App emulator has no GraphQL for the trigger check (test_trigger.py covers it): off here.
CONFIG = "heartbeat: {interval: 1, stale_after: 6}\nrun: {kill_grace: 1%s}\ntrigger: {permission: none}\n"


@pytest.fixture(scope="module")
def pem() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                             serialization.NoEncryption()).decode()


@pytest.fixture(scope="module")
def app_emulator(tmp_path_factory: pytest.TempPathFactory, pem: str) -> Iterator[Emulator]:
    seed = yaml.safe_load((ROOT / "tests" / "rig" / "seed.yaml").read_text())
    seed["github"]["apps"] = [{
        "app_id": APP_ID, "slug": SLUG, "name": "Orion App", "private_key": pem,
        "permissions": {"issues": "write", "metadata": "read", "contents": "write"},
        "installations": [{"installation_id": INSTALLATION, "account": Emulator.OWNER,
                           "repository_selection": "all"}],
    }]
    path = tmp_path_factory.mktemp("cred-seed") / "seed.yaml"
    path.write_text(json.dumps(seed))
    with Emulator(path, token_pool=8) as emu:
        yield emu


@pytest.fixture
def app_proxy(app_emulator: Emulator) -> Iterator[Proxy]:
    with Proxy(app_emulator.url, tokens=app_emulator.tokens, upstream_tokens=app_emulator.lease_tokens(),
               helper_tokens=app_emulator.lease_tokens()) as p:
        yield p


@pytest.fixture
def app_repo(app_emulator: Emulator, request: pytest.FixtureRequest) -> Iterator[RepoHandle]:
    handle = RepoHandle.create(app_emulator, app_emulator.url, hint=request.node.name)
    yield handle
    handle.dispose()


@pytest.fixture
def workspace() -> Iterator[Path]:
    """A checkout as the agent examples make it (actions/checkout, persist-credentials:
    false: the remote without any credential), in a directory any user may enter (not under
    pytest's 0700 tmp), with a 0777 directory for the probe's report."""
    top = Path(tempfile.mkdtemp(prefix="cred-ws-"))
    top.chmod(0o755)
    checkout = top / "checkout"
    checkout.mkdir()
    subprocess.run(["git", "init", "--quiet", str(checkout)], check=True)
    subprocess.run(["git", "-C", str(checkout), "remote", "add", "origin",
                    "https://github.com/orion-bot/work"], check=True)
    shutil.copy(PROBE, top / PROBE.name)
    reports = top / "reports"
    reports.mkdir()
    reports.chmod(0o777)
    (top / PROBE.name).chmod(0o644)
    yield top
    shutil.rmtree(top, ignore_errors=True)


def _secrets(pem: str) -> dict[str, str]:
    """Every credential a job may hand orion-action: real rig tokens, the App, and the rest."""
    return {
        "GITHUB_TOKEN": Emulator.BOT_TOKEN,
        "GH_TOKEN": Emulator.OUTSIDER_TOKEN,
        "ORION_APP_ID": str(APP_ID),
        "ORION_APP_PRIVATE_KEY": pem,
        "ORION_APP_INSTALLATION_ID": str(INSTALLATION),
        "ORION_RECORD_KEY": secrets.token_hex(32),
        "ACTIONS_RUNTIME_TOKEN": "rt" + secrets.token_hex(20),
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "idt" + secrets.token_hex(20),
        "ACTIONS_ID_TOKEN_REQUEST_URL": f"https://pipelines.example/idtoken/{secrets.token_hex(12)}",
        "ACTIONS_CACHE_URL": f"https://artifactcache.example/{secrets.token_hex(12)}/",
        "ACTIONS_RESULTS_URL": f"https://results.example/{secrets.token_hex(12)}/",
    }


def _secret_strings(values: dict[str, str]) -> dict[str, str]:
    """What must appear nowhere the command can read: each secret value, the key line by line.
    (The installation tokens orion mints live in its memory only, as the key does.)"""
    found = {k: v for k, v in values.items() if k not in ("ORION_APP_ID", "ORION_APP_INSTALLATION_ID",
                                                          "ORION_APP_PRIVATE_KEY")}
    for i, line in enumerate(values["ORION_APP_PRIVATE_KEY"].splitlines()):
        if len(line) >= 20 and not line.startswith("-----"):
            found[f"key line {i}"] = line
    return found


def _probe_argv(python: str, top: Path, report: Path, proxy: Proxy, emu: Emulator) -> list[str]:
    return [python, str(top / PROBE.name), str(report), proxy.url, emu.url, str(APP_ID), str(INSTALLATION)]


def _leaks(report: dict[str, Any], forbidden: dict[str, str]) -> list[str]:
    return sorted(f"{name} in {where}" for where, text in report["corpus"]
                  for name, value in forbidden.items() if value in text)


def _run_orion(app_emulator: Emulator, app_repo: RepoHandle, app_proxy: Proxy, workspace: Path,
               values: dict[str, str], extra_config: str, python: str) -> dict[str, Any]:
    n = app_repo.create_issue("work", [QUEUE])
    config = workspace / "orion.yml"
    config.write_text(CONFIG % extra_config)
    report = workspace / "reports" / f"orion-{n}.json"
    env = {**orion_env(app_repo.full_name, app_emulator.url), **values}
    # Not the harness's spawn: its output files would be more for the hostile command to read
    # (through /proc/PID/fd); pipes keep what it may find what it was.
    done = subprocess.run([PY, "-m", "orion_action", "run", "--config", str(config), "--issue", str(n), "--",
                           *_probe_argv(python, workspace, report, app_proxy, app_emulator)],
                          env=env, cwd=workspace / "checkout", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert set(app_repo.labels(n)) == {READY}
    return dict(json.loads(report.read_text()))


def test_the_probe_finds_and_uses_every_credential_it_is_given(app_emulator, app_proxy, workspace, pem):
    """The control: the probe with the credentials in its own environment, not under orion."""
    values = _secrets(pem)
    report_path = workspace / "reports" / "control.json"
    env = {**orion_env("orion-bot/work", app_emulator.url), **values}
    subprocess.run(_probe_argv(PY, workspace, report_path, app_proxy, app_emulator), env=env,
                   cwd=workspace / "checkout", check=True, timeout=120)
    report = json.loads(report_path.read_text())
    assert {Emulator.BOT_TOKEN, Emulator.OUTSIDER_TOKEN} <= set(report["worked"]), report["worked"]
    assert any(w.startswith("private key") for w in report["worked"]), report["worked"]


def test_a_hostile_command_finds_no_credential_that_works(app_emulator, app_proxy, app_repo, workspace, pem):
    """As root, like the runner: it reads its ancestors' environ (the wrapper's and the
    guardian's are among them), and finds nothing in any of them."""
    values = _secrets(pem)
    report = _run_orion(app_emulator, app_repo, app_proxy, workspace, values, "", PY)
    assert report["worked"] == [], report["worked"]
    assert report["pems"] == 0
    assert len(report["environ_read"]) >= 3, "the probe could not read the guardian's and wrapper's environ"
    assert _leaks(report, _secret_strings(values)) == []


def test_run_pass_token_gives_the_command_the_github_token_on_purpose(
        app_emulator, app_proxy, app_repo, workspace, pem):
    values = _secrets(pem)
    report = _run_orion(app_emulator, app_repo, app_proxy, workspace, values, ", pass_token: true", PY)
    assert report["worked"] == sorted([Emulator.BOT_TOKEN, Emulator.OUTSIDER_TOKEN]), report["worked"]
    forbidden = _secret_strings(values)
    del forbidden["GITHUB_TOKEN"], forbidden["GH_TOKEN"]
    assert _leaks(report, forbidden) == []


def _python_for(user: str) -> str:
    """A Python interpreter the user can run (the test's own may sit under root's 0700 home)."""
    entry = pwd.getpwnam(user)
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.path.exists(candidate) and subprocess.run(
                ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups",
                 candidate, "-c", "pass"],
                capture_output=True).returncode == 0:
            return candidate
    raise RuntimeError(f"no Python interpreter that {user} can run (/usr/bin/python3)")


def test_with_run_user_the_command_cannot_even_open_orions_memory(
        app_emulator, app_proxy, app_repo, workspace, pem):
    """run.user: the command runs as another user. It can read neither orion's environ nor
    its memory (where the credentials are), and still has its working directory and files."""
    if os.geteuid() != 0:
        raise RuntimeError("run.user needs the tests to run as root (as tests/namespaces.py does)")
    values = _secrets(pem)
    report = _run_orion(app_emulator, app_repo, app_proxy, workspace, values, ", user: nobody",
                        _python_for("nobody"))
    assert report["uid"] == pwd.getpwnam("nobody").pw_uid
    assert report["worked"] == [] and report["pems"] == 0
    assert report["memory_open"] == [] and report["environ_read"] == []
    where = {w for w, _ in report["corpus"]}
    assert any(w.endswith("issue.json") for w in where), "the command could not read its issue file"
    assert report["progress_written"], "the command could not write its progress file"
    assert _leaks(report, _secret_strings(values)) == []



@pytest.mark.parametrize("command", [["status"], ["reconcile"], ["init"], ["release", "--issue", "1"]])
def test_no_orion_command_keeps_a_credential_in_its_environment_block(repo, proxy, orion_env, command):
    """Every command, not only `run`: while its first request to GitHub is parked, the
    process (the same pid after the re-exec) shows no credential in /proc/PID/environ."""
    # No App here (this emulator has none): every other credential, the token a real one.
    values = {k: v for k, v in _secrets("unused").items() if not k.startswith("ORION_APP_")}
    values["GITHUB_TOKEN"] = orion_env["GITHUB_TOKEN"]
    held = proxy.hold(None, r".*", count=1)
    proc = subprocess.Popen([PY, "-m", "orion_action", *command], env={**orion_env, **values},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        held.wait_arrived()
        block = Path(f"/proc/{proc.pid}/environ").read_bytes().split(b"\0")
    finally:
        held.release()
        proc.communicate(timeout=120)
    names = {item.split(b"=", 1)[0].decode() for item in block if item}
    assert "GITHUB_REPOSITORY" in names, "not the orion process's block"
    assert "ORION_CREDENTIALS_FD" in names, "no handover happened: the test would prove nothing"
    assert not names & set(values), names
    assert not [v for v in values.values() if any(v.encode() in item for item in block)]

