"""Bad input reaches the CLI as one line on stderr and exit 64, before any request is made
(defect 16 of the v0.1 audit), and secrets never appear in what it prints.

In-process: `orion_action.cli.main(argv, env)` with stderr captured. Every case here fails
before the first request, so no GitHub is needed: GITHUB_API_URL points at a port nothing
listens on, and a case that did reach the network would exit 69, not 64.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orion_action import cli
from orion_action.errors import ExitCode

TOKEN = "sekrit-token-4f9c2a"
KEY_LINE = "MIIEowIBAAKCAQEAsekritkeymaterial0123456789"
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{KEY_LINE}\n-----END RSA PRIVATE KEY-----\n"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dead_url: str) -> dict[str, str]:
    monkeypatch.chdir(tmp_path)  # no .github/orion.yml: defaults unless --config
    return {"GITHUB_TOKEN": TOKEN, "GITHUB_REPOSITORY": "octo/work", "GITHUB_API_URL": dead_url,
            "ORION_API_RETRY_SECONDS": "1"}


def _usage_line(capsys: pytest.CaptureFixture[str], code: int, *fragments: str) -> str:
    out, err = capsys.readouterr()
    assert code == ExitCode.USAGE, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("orion-action: error: "), lines[0]
    for f in fragments:
        assert f in lines[0], lines[0]
    for secret in (TOKEN, KEY_LINE, "sekrit"):
        assert secret not in err and secret not in out
    return lines[0]


def _config(tmp_path: Path, content: bytes) -> str:
    path = tmp_path / "orion.yml"
    path.write_bytes(content)
    return str(path)


CONFIGS = [
    ("not UTF-8", b"labels:\n  queue: \xff\xfe\n", "not UTF-8"),
    ("stale_after NaN", b"heartbeat: {stale_after: .nan}\n", "heartbeat.stale_after"),
    ("interval infinite", b"heartbeat: {interval: .inf, stale_after: .inf}\n", "heartbeat.interval"),
    ("interval a microsecond", b"heartbeat: {interval: 0.000001, stale_after: 0.000003}\n",
     "heartbeat.interval"),
    ("kill_grace an hour", b"run: {kill_grace: 3600}\n", "run.kill_grace"),
    ("a comma in a label", b"labels: {working: 'orion,working'}\n", "labels.working"),
    ("stage prefix begins a label", b"labels: {stage_prefix: orion}\n", "labels.stage_prefix"),
]


@pytest.mark.parametrize("command", [["status"], ["reconcile"], ["run", "--issue", "1", "--", "true"]])
@pytest.mark.parametrize("why,content,key", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_a_bad_config_is_one_line_and_64(env, tmp_path, capsys, command, why, content, key) -> None:
    path = _config(tmp_path, content)
    code = cli.main([command[0], "--config", path, *command[1:]], env)
    _usage_line(capsys, code, path, key)


BAD_URLS = ["not a url", "localhost:1", "ftp://example.com", "http://", "https:///path",
            "http://exa mple.com", "http://example.com:99999", "//example.com", "https://example.com\n"]


@pytest.mark.parametrize("url", BAD_URLS)
def test_a_garbage_api_url_is_one_line_and_64(env, capsys, url) -> None:
    code = cli.main(["status"], {**env, "GITHUB_API_URL": url})
    _usage_line(capsys, code, "GITHUB_API_URL")


def test_an_api_url_with_credentials_is_refused_without_echoing_them(env, capsys) -> None:
    code = cli.main(["status"], {**env, "GITHUB_API_URL": f"https://x:{TOKEN}@example.com"})
    _usage_line(capsys, code, "GITHUB_API_URL", "credentials")


@pytest.mark.parametrize("token", [f"{TOKEN} extra", f"{TOKEN}\nX-Injected: 1", f"{TOKEN}\u00e9"])
def test_a_token_with_spaces_or_control_characters_is_refused_unechoed(env, capsys, token) -> None:
    code = cli.main(["status"], {**env, "GITHUB_TOKEN": token})
    _usage_line(capsys, code, "GITHUB_TOKEN")


def test_a_stage_label_over_githubs_limit(env, capsys) -> None:
    code = cli.main(["run", "--issue", "1", "--stage", "s" * 40, "--", "true"], env)
    _usage_line(capsys, code, "--stage", "50")


APP_CASES = [
    ("an id without a key", {"ORION_APP_ID": "123"}, "ORION_APP_PRIVATE_KEY"),
    ("a key without an id", {"ORION_APP_PRIVATE_KEY": PEM}, "ORION_APP_ID"),
    ("an id that is not a number", {"ORION_APP_ID": "my-app", "ORION_APP_PRIVATE_KEY": PEM},
     "ORION_APP_ID"),
    ("an installation id that is not a number",
     {"ORION_APP_ID": "123", "ORION_APP_PRIVATE_KEY": PEM, "ORION_APP_INSTALLATION_ID": "x"},
     "ORION_APP_INSTALLATION_ID"),
    ("a key that is not PEM", {"ORION_APP_ID": "123", "ORION_APP_PRIVATE_KEY": KEY_LINE},
     "ORION_APP_PRIVATE_KEY"),
    ("a PEM that is not a key", {"ORION_APP_ID": "123", "ORION_APP_PRIVATE_KEY": PEM},
     "ORION_APP_PRIVATE_KEY"),
]


@pytest.mark.parametrize("why,extra,name", APP_CASES, ids=[c[0] for c in APP_CASES])
def test_bad_app_credentials_are_one_line_and_64(env, capsys, why, extra, name) -> None:
    code = cli.main(["status"], {**env, **extra})
    _usage_line(capsys, code, name)


def test_app_credentials_make_the_token_unnecessary_and_a_missing_one_is_named(env, capsys) -> None:
    del env["GITHUB_TOKEN"]
    code = cli.main(["status"], env)
    _usage_line(capsys, code, "GITHUB_TOKEN", "ORION_APP_ID")


def test_in_actions_the_app_key_is_masked_line_by_line_and_never_printed_otherwise(env, capsys) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption()).decode()
    body = [line for line in key.splitlines() if not line.startswith("-----")]
    app = {"ORION_APP_ID": "123", "ORION_APP_PRIVATE_KEY": key, "ORION_APP_INSTALLATION_ID": "9",
           "GITHUB_ACTIONS": "true"}
    code = cli.main(["status"], {**env, **app})  # nothing listens: exit 69 after the retry budget
    out, err = capsys.readouterr()
    assert code == ExitCode.UNAVAILABLE, err
    assert [line for line in out.splitlines() if line.startswith("::add-mask::")] == [
        f"::add-mask::{line}" for line in body]
    rest = [line for line in out.splitlines() if not line.startswith("::add-mask::")] + err.splitlines()
    assert not any(part in line for part in body for line in rest)


@pytest.mark.parametrize("repo", ["../x", "octo/..", "./work", "octo/work/issues", "octo", "octo/wo rk"])
def test_a_repository_that_is_not_owner_slash_name(env, capsys, repo) -> None:
    code = cli.main(["status", "--repo", repo], env)
    _usage_line(capsys, code, "OWNER/NAME")


# -- several repositories (services/fleet.py) -----------------------------------------------------

SEVERAL = ["--repo", "octo/a", "--repo", "octo/b"]


@pytest.mark.parametrize(("argv", "why"), [
    (["release", "--issue", "3", *SEVERAL], "release takes one --repo"),
    (["init", *SEVERAL], "init takes one --repo"),
    (["pause", *SEVERAL], "pause takes one --repo"),
    (["resume", *SEVERAL], "resume takes one --repo"),
    (["run", "--issue", "3", *SEVERAL, "--", "true"], "run --issue N takes one --repo"),
    (["run", "--next", "--actor", "someone", *SEVERAL, "--", "true"], "--actor goes with one --repo"),
    (["status", "--repo", "octo/a", "--repo", "octo/a"], "--repo octo/a is given more than once"),
])
def test_several_repositories_only_where_the_command_takes_them(env, capsys, argv, why) -> None:
    _usage_line(capsys, cli.main(argv, env), why)


@pytest.mark.parametrize("command", [["status"], ["reconcile"], ["run", "--next", "--", "true"]])
def test_several_repositories_are_checked_like_one(env, capsys, command) -> None:
    code = cli.main([*command[:1], "--repo", "octo/a", "--repo", "octo/..", *command[1:]], env)
    _usage_line(capsys, code, "OWNER/NAME")
