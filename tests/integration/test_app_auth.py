"""GitHub App authentication (defect 14 of the v0.1 audit): orion-action as an App, whose
installation token PyGithub renews before its hour is up, so a run may outlive any one token.

Against an emulator of its own, seeded with an App whose RSA key the test generates: the
emulator verifies the JWT's RS256 signature, finds the installation by repository and mints
`ghs_` installation tokens (POST /app/installations/{id}/access_tokens). It is reached
directly, not through the rig's proxy, which answers 401 to every token it was not told about
(an App's JWTs and minted tokens are made at run time).

What the emulator cannot show: a token that really expires. It mints tokens valid for an hour,
so the renewal test marks the cached token as expired in PyGithub's cache (what an hour would
do) and checks that the next request, from the repo or its clone, mints a new one and works.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from github.InstallationAuthorization import InstallationAuthorization
from rig import ROOT, Emulator, RepoHandle, orion_env
from rig.harness import FAST, QUEUE, READY, Child, product

from orion_action.adapters.github import AppCredentials, GitHubRepo
from orion_action.core.record import ClaimRecord, State, parse_block
from orion_action.errors import AuthError

APP_ID, SLUG, INSTALLATION = 4242, "orion-app", 777
APP_LOGIN = f"{SLUG}[bot]"


def _pem() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                             serialization.NoEncryption()).decode()


@pytest.fixture(scope="module")
def pem() -> str:
    return _pem()


@pytest.fixture(scope="module")
def app_emulator(tmp_path_factory: pytest.TempPathFactory, pem: str) -> Iterator[Emulator]:
    seed = yaml.safe_load((ROOT / "tests" / "rig" / "seed.yaml").read_text())
    seed["github"]["apps"] = [{
        "app_id": APP_ID, "slug": SLUG, "name": "Orion App", "private_key": pem,
        "permissions": {"issues": "write", "metadata": "read"},
        "installations": [{"installation_id": INSTALLATION, "account": Emulator.OWNER,
                           "repository_selection": "all"}],
    }]
    path = tmp_path_factory.mktemp("app-seed") / "seed.yaml"
    path.write_text(json.dumps(seed))
    with Emulator(path, token_pool=4) as emu:
        yield emu


@pytest.fixture
def app_repo(app_emulator: Emulator, request: pytest.FixtureRequest) -> Iterator[RepoHandle]:
    handle = RepoHandle.create(app_emulator, app_emulator.url, hint=request.node.name)
    yield handle
    handle.dispose()


def _minted(emu: Emulator) -> int:
    return len(emu.request("GET", "/_emulate/installation-tokens").json()["installation_tokens"])


def test_an_app_finds_its_installation_comments_as_its_bot_and_clones_share_its_token(
        app_emulator, app_repo, pem):
    n = app_repo.create_issue("work", [QUEUE])
    before = _minted(app_emulator)
    gh = GitHubRepo(app_repo.full_name, api_url=app_emulator.url, app=AppCredentials(str(APP_ID), pem))
    assert gh.own_login() == APP_LOGIN
    posted = gh.post_comment(n, "hello from the app")
    assert posted.author == APP_LOGIN
    twin = gh.clone()
    twin.add_labels(n, [READY])
    assert set(app_repo.labels(n)) == {QUEUE, READY}
    assert _minted(app_emulator) == before + 1  # one installation token, shared by the clone
    assert pem not in repr(gh.__dict__) and "PRIVATE KEY" not in repr(AppCredentials("1", pem))


def test_an_expired_installation_token_is_renewed_for_the_repo_and_its_clone(app_emulator, app_repo, pem):
    n = app_repo.create_issue("work")
    gh = GitHubRepo(app_repo.full_name, api_url=app_emulator.url,
                    app=AppCredentials(str(APP_ID), pem, INSTALLATION))
    twin = gh.clone()
    gh.get_issue(n)
    minted = _minted(app_emulator)
    auth = gh._app.installation  # what an hour does: PyGithub's cached token has expired
    stale = {"token": "ghs_expired", "expires_at": "2000-01-01T00:00:00Z"}
    expired = InstallationAuthorization(None, {}, stale)
    assert expired.expires_at < datetime.now(timezone.utc)
    auth._AppInstallationAuth__installation_authorization = expired
    twin.post_comment(n, "after an hour")
    gh.get_issue(n)
    assert _minted(app_emulator) == minted + 1  # renewed once, for both
    assert auth.token != "ghs_expired"


def test_a_wrong_key_is_a_401_auth_error_at_once(app_emulator, app_repo):
    n = app_repo.create_issue("work")
    sleeps: list[float] = []
    gh = GitHubRepo(app_repo.full_name, api_url=app_emulator.url, sleep=sleeps.append,
                    app=AppCredentials(str(APP_ID), _pem(), INSTALLATION))
    with pytest.raises(AuthError) as info:
        gh.get_issue(n)  # the token is minted on the first request, and the JWT is refused
    assert info.value.status == 401 and "ORION_APP_PRIVATE_KEY" in str(info.value)
    assert gh.requests == 1 and sleeps == []  # never retried


def test_an_app_not_installed_on_the_repository(app_emulator, app_repo, pem):
    with pytest.raises(AuthError, match="not installed"):
        GitHubRepo("mallory/elsewhere", api_url=app_emulator.url, app=AppCredentials(str(APP_ID), pem))


def test_a_run_as_an_app_without_a_token(app_emulator, app_repo, pem, tmp_path: Path):
    """The CLI end to end: ORION_APP_* and no GITHUB_TOKEN; the record is the App's."""
    n = app_repo.create_issue("work", [QUEUE])
    config = tmp_path / "orion.yml"
    # The emulator alone has no GraphQL API (the rig's proxy answers the trigger check's query,
    # tests/integration/test_trigger.py): this test is about the App's credentials.
    config.write_text(FAST + "trigger: {permission: none}\n")
    env = orion_env(app_repo.full_name, app_emulator.url)
    del env["GITHUB_TOKEN"]
    env.update(ORION_APP_ID=str(APP_ID), ORION_APP_PRIVATE_KEY=pem)
    child = Child(tmp_path, hold=False)
    done = product(["run", "--config", str(config), "--issue", str(n), "--", *child.cmd],
                   env=env, workdir=tmp_path, cwd=Path.cwd())
    assert done.returncode == 0, done.stderr
    assert "PRIVATE KEY" not in done.stderr + done.stdout
    seen = child.info()["env"]  # the command's ORION_* variables: the key stays with orion-action
    assert seen["ORION_ISSUE"] == str(n) and "ORION_APP_PRIVATE_KEY" not in seen
    assert set(app_repo.labels(n)) == {READY}
    comments = [c for c in app_repo.comments(n) if "<!-- orion-claim" in c["body"]]
    assert [c["user"] for c in comments] == [APP_LOGIN]
    record = parse_block(comments[0]["body"])
    assert isinstance(record, ClaimRecord) and record.state is State.FINISHED
