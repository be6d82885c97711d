"""The rig itself, against the real emulator: if these fail, nothing else can be trusted."""

from __future__ import annotations

import http.client
import os
import random
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from github import BadCredentialsException, GithubException
from rig import PATIENCE, ROOT, SITE, Emulator, Proxy, wait_until
from rig import orion_env as make_env

BOT = {"Authorization": f"token {Emulator.BOT_TOKEN}"}


def get(proxy: Proxy, path: str, timeout: float = PATIENCE, **kw):
    kw.setdefault("headers", BOT)
    return requests.get(proxy.url + path, timeout=timeout, **kw)


def test_urls_are_rewritten_and_pygithub_paginates_through_the_proxy(repo, proxy, emulator):
    n = repo.create_issue("paging")
    for i in range(5):
        repo.comment(n, f"comment {i}")

    resp = get(proxy, f"/repos/{repo.full_name}/issues/{n}/comments?per_page=2")
    assert resp.status_code == 200
    assert f"{proxy.url}/repos/{repo.full_name}/issues/{n}/comments?per_page=2&page=2" in \
        resp.headers["Link"]
    assert f":{emulator.port}" not in resp.headers["Link"] + resp.text
    assert resp.json()[0]["url"].startswith(proxy.url + "/")
    assert int(resp.headers["Content-Length"]) == len(resp.content)

    gh = repo.client(per_page=2)
    bodies = [c.body for c in gh.get_repo(repo.full_name).get_issue(n).get_comments()]
    assert bodies == [f"comment {i}" for i in range(5)]
    pages = proxy.matching("GET", rf"/issues/{n}/comments$")
    assert len(pages) == 4  # one by hand, three pages by PyGithub, all through the proxy
    assert all(e.status == 200 and e.token == Emulator.OWNER for e in pages)


def test_unknown_token_gets_401_like_github(repo, proxy):
    resp = get(proxy, "/user", headers={"Authorization": "token not-a-token"})
    assert resp.status_code == 401
    assert resp.json()["message"] == "Bad credentials"
    with pytest.raises(BadCredentialsException):
        repo.client(token="not-a-token").get_user().login  # noqa: B018
    assert proxy.matching("GET", "/user$")[0].token == "<unknown>"

    resp = get(proxy, "/user", headers={"Authorization": f"Bearer {Emulator.OUTSIDER_TOKEN}"})
    assert resp.json()["login"] == Emulator.OUTSIDER
    resp = get(proxy, f"/repos/{repo.full_name}", headers={})  # no credentials: passed on
    assert resp.status_code == 200
    assert proxy.log[-1].token is None and proxy.log[-1].action == "forward"


def test_fail_once_then_success(repo, proxy):
    n = repo.create_issue("flaky")
    rule = proxy.fail("GET", rf"/issues/{n}$", 503, count=1)
    first = get(proxy, f"/repos/{repo.full_name}/issues/{n}")
    assert first.status_code == 503
    assert first.json()["message"] == "Service Unavailable"
    assert get(proxy, f"/repos/{repo.full_name}/issues/{n}").json()["title"] == "flaky"
    assert rule.hits == 1 and rule.count == 0
    assert [e.status for e in proxy.matching("GET", rf"/issues/{n}$")] == [503, 200]

    proxy.fail("POST", r"/comments$", 502, {"message": "Bad Gateway"}, count=1)
    with pytest.raises(GithubException) as info:
        repo.repository.get_issue(n).create_comment("x")
    assert info.value.status == 502
    assert repo.comments(n) == []  # the fault came from the proxy: nothing was written


def test_secondary_rate_limit_has_retry_after(repo, proxy):
    proxy.secondary_rate_limit("POST", r"/issues$", retry_after=7, count=1)
    with pytest.raises(GithubException) as info:
        repo.repository.create_issue("limited")
    assert info.value.status == 403
    assert "secondary rate limit" in info.value.data["message"]
    assert info.value.headers["retry-after"] == "7"
    assert repo.repository.create_issue("now it works").number == 1


def test_blackhole_one_path_while_others_answer(repo, proxy):
    n = repo.create_issue("void")
    rule = proxy.blackhole("GET", rf"/issues/{n}$")
    with pytest.raises(requests.exceptions.ReadTimeout):
        get(proxy, f"/repos/{repo.full_name}/issues/{n}", timeout=0.3)

    with ThreadPoolExecutor(1) as pool:
        parked = pool.submit(get, proxy, f"/repos/{repo.full_name}/issues/{n}", PATIENCE)
        proxy.wait_for("GET", rf"/issues/{n}$", n=2)
        assert get(proxy, f"/repos/{repo.full_name}/issues/{n}/comments").status_code == 200
        assert get(proxy, "/user").json()["login"] == Emulator.OWNER
        assert not parked.done()
        rule.remove()  # ends the blackhole: the parked connection is closed, unanswered
        with pytest.raises(requests.exceptions.ConnectionError):
            parked.result(timeout=PATIENCE)
    wait_until(lambda: [e.action for e in proxy.matching("GET", rf"/issues/{n}$")]
               == ["blackhole"] * 2, message=lambda: str(proxy.log))
    assert get(proxy, f"/repos/{repo.full_name}/issues/{n}").status_code == 200


def test_hold_then_release(repo, proxy):
    n = repo.create_issue("held")
    issue = repo.repository.get_issue(n)
    hold = proxy.hold("POST", rf"/issues/{n}/comments$")
    with ThreadPoolExecutor(1) as pool:
        posting = pool.submit(issue.create_comment, "through the hold")
        assert hold.wait_arrived() == 1
        assert repo.comments(n) == []  # parked in the proxy, not yet at the emulator
        assert not posting.done()
        hold.release()
        assert posting.result(timeout=PATIENCE).body == "through the hold"
    assert [c["body"] for c in repo.comments(n)] == ["through the hold"]
    issue.create_comment("not held any more")  # a released hold holds nothing further
    assert len(repo.comments(n)) == 2


def test_hold_then_drop(repo, proxy):
    n = repo.create_issue("held")
    issue = repo.repository.get_issue(n)
    hold = proxy.hold("POST", r"/comments$")
    with ThreadPoolExecutor(1) as pool:
        posting = pool.submit(issue.create_comment, "lost")
        hold.wait_arrived()
        hold.release(drop=True)
        with pytest.raises(requests.exceptions.ConnectionError):
            posting.result(timeout=PATIENCE)
    assert repo.comments(n) == []
    with pytest.raises(AssertionError, match="0 of 1 requests"):
        proxy.hold("PATCH", "/nothing").wait_arrived(timeout=0.1)


def test_drop_after_forward_loses_the_answer_not_the_write(repo, proxy):
    n = repo.create_issue("lossy")
    issue = repo.repository.get_issue(n)
    proxy.drop("POST", r"/comments$", after_forward=True, count=1)
    with pytest.raises(requests.exceptions.ConnectionError):
        issue.create_comment("written, but the client never heard")
    assert [c["body"] for c in repo.comments(n)] == ["written, but the client never heard"]


def test_cut_off_partitions_everything_until_healed(repo, proxy):
    proxy.cut_off()
    with pytest.raises(requests.exceptions.ReadTimeout):
        get(proxy, "/user", timeout=0.3)
    with ThreadPoolExecutor(1) as pool:
        parked = pool.submit(get, proxy, "/rate_limit", PATIENCE)
        proxy.wait_for("GET", "/rate_limit$")
        proxy.cut_off(False)
        with pytest.raises(requests.exceptions.ConnectionError):
            parked.result(timeout=PATIENCE)  # what was in flight during the partition is lost
    assert get(proxy, "/user").status_code == 200
    proxy.fail("GET", "/user$", 500)
    proxy.cut_off()
    proxy.clear()  # removes rules and the cut-off
    assert get(proxy, "/user").status_code == 200


def test_delay_and_seeded_probability(repo, proxy):
    proxy.delay("GET", "/user$", 0.3, count=1)
    started = time.monotonic()
    assert get(proxy, "/user").status_code == 200
    assert time.monotonic() - started >= 0.3

    proxy.random.seed(1234)
    proxy.fail("GET", "/rate_limit$", 500, probability=0.5)
    statuses = [get(proxy, "/rate_limit").status_code for _ in range(20)]
    draws = random.Random(1234)
    assert statuses == [500 if draws.random() < 0.5 else 200 for _ in range(20)]
    assert 0 < statuses.count(500) < 20


def test_synthetic_workflow_run(repo, proxy):
    assert repo.repository.get_issues().totalCount == 0  # plain traffic still forwarded
    with pytest.raises(GithubException) as info:
        repo.repository.get_workflow_run(42)
    assert info.value.status == 404  # the emulator has no runs

    proxy.set_workflow_run(repo.owner, repo.name, 42, "in_progress", run_attempt=2)
    run = repo.repository.get_workflow_run(42)
    assert (run.id, run.status, run.conclusion, run.run_attempt) == (42, "in_progress", None, 2)
    assert run.url == f"{proxy.url}/repos/{repo.full_name}/actions/runs/42"

    proxy.set_workflow_run(repo.owner, repo.name, 42, "completed", "cancelled")
    body = get(proxy, f"/repos/{repo.full_name}/actions/runs/42").json()
    assert (body["status"], body["conclusion"], body["run_attempt"]) == ("completed",
                                                                         "cancelled", 1)
    assert get(proxy, f"/repos/{repo.full_name}/actions/runs/42/attempts/1").status_code == 200
    assert get(proxy, f"/repos/{repo.full_name}/actions/runs/42/attempts/2").status_code == 404
    assert get(proxy, f"/repos/{repo.full_name}/actions/runs/42",
               headers={"Authorization": "token nope"}).status_code == 401
    with pytest.raises(ValueError):
        proxy.set_workflow_run(repo.owner, repo.name, 43, "running")


def test_request_log_counts_and_waits(repo, proxy):
    n = repo.create_issue("counted")
    assert proxy.count() == 0  # direct helpers do not go through the proxy

    def traffic():
        for _ in range(3):
            get(proxy, f"/repos/{repo.full_name}/issues/{n}")
        requests.post(f"{proxy.url}/repos/{repo.full_name}/issues/{n}/comments",
                      json={"body": "hi"}, headers=BOT, timeout=PATIENCE)

    worker = threading.Thread(target=traffic)
    worker.start()
    seen = proxy.wait_for("GET", rf"/issues/{n}$", n=3)
    assert len(seen) == 3 and all(e.time > 0 and e.query == "" for e in seen)
    proxy.wait_for("post", r"/comments$", status=201)
    worker.join(PATIENCE)
    assert proxy.count("GET", rf"/issues/{n}$") == 3
    assert proxy.count("*", "/issues/") == 4
    assert proxy.count(status=201) == 1
    with pytest.raises(AssertionError, match="saw 0 of 1"):
        proxy.wait_for("DELETE", timeout=0.1)


def test_every_method_keep_alive_and_chunked_bodies(repo, proxy):
    n = repo.create_issue("methods", labels=["a"])
    conn = http.client.HTTPConnection("localhost", proxy.port, timeout=PATIENCE)
    try:  # one keep-alive connection for everything
        hdrs = {**BOT, "Content-Type": "application/json"}
        base = f"/repos/{repo.full_name}/issues/{n}"
        for method, path, body, status in [
            ("PUT", f"{base}/labels", b'{"labels": ["b", "c"]}', 200),
            ("DELETE", f"{base}/labels/c", None, 200),
            ("PATCH", base, b'{"title": "renamed"}', 200),
            ("HEAD", "/user", None, 200),
            ("GET", base, None, 200),
        ]:
            conn.request(method, path, body=body, headers=hdrs)
            resp = conn.getresponse()
            data = resp.read()
            assert resp.status == status, (method, data)
        assert b'"renamed"' in data
    finally:
        conn.close()
    assert repo.labels(n) == ["b"] and repo.issue(n)["title"] == "renamed"
    resp = requests.post(f"{proxy.url}/repos/{repo.full_name}/issues/{n}/comments",
                         data=iter([b'{"body": ', b'"chunked"}']), timeout=PATIENCE,
                         headers={**BOT, "Content-Type": "application/json"})
    assert resp.status_code == 201 and resp.request.headers["Transfer-Encoding"] == "chunked"
    assert [c["body"] for c in repo.comments(n)] == ["chunked"]


def test_concurrent_clients_through_one_proxy(repo, proxy):
    n = repo.create_issue("busy")

    def client(i: int) -> int:
        issue = repo.client().get_repo(repo.full_name).get_issue(n)
        for j in range(10):
            assert issue.get_labels().totalCount == 0
            if j % 5 == 0:
                issue.create_comment(f"{i}/{j}")
        return i

    with ThreadPoolExecutor(8) as pool:
        assert sorted(pool.map(client, range(8))) == list(range(8))
    assert len(repo.comments(n)) == 16
    assert proxy.count("POST", rf"/issues/{n}/comments$", status=201) == 16
    assert {e.status for e in proxy.log} == {200, 201}


def test_rate_limit_counter_is_per_test(repo, proxy, emulator):
    first = int(get(proxy, "/user").headers["x-ratelimit-remaining"])
    emulator.request("GET", "/user")  # the shared session token: another counter
    repo.labels(repo.create_issue("x"))  # the helpers' alias: yet another
    assert int(get(proxy, "/user").headers["x-ratelimit-remaining"]) == first - 1


def test_proxy_stop_closes_connections_and_joins_threads(emulator):
    before = set(threading.enumerate())
    proxy = Proxy(emulator.url, tokens=emulator.tokens).start()
    idle = http.client.HTTPConnection("localhost", proxy.port, timeout=PATIENCE)
    idle.request("GET", "/user", headers=BOT)
    assert idle.getresponse().read()  # the connection stays open, its thread idle
    proxy.blackhole("GET", "/rate_limit$")
    hold = proxy.hold("GET", "/user$")
    with ThreadPoolExecutor(2) as pool:
        futures = [pool.submit(get, proxy, p, PATIENCE) for p in ("/rate_limit", "/user")]
        proxy.wait_for("GET", "/rate_limit$")
        hold.wait_arrived()
        proxy.stop()
        for future in futures:
            with pytest.raises(requests.exceptions.ConnectionError):
                future.result(timeout=PATIENCE)
    idle.close()
    assert set(threading.enumerate()) <= before
    proxy.stop()  # idempotent


def test_emulator_lifecycle_kills_the_process():
    with Emulator() as emu:
        pid = emu.pid
        assert emu.running and emu.url == f"http://localhost:{emu.port}"
        assert emu.request("GET", "/user").json()["login"] == Emulator.OWNER
        assert emu.request("GET", "/user", Emulator.OUTSIDER_TOKEN).json()["login"] == "mallory"
    assert not emu.running
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_orion_env_and_wait_until(repo, proxy, orion_env):
    assert orion_env["GITHUB_API_URL"] == proxy.url
    assert orion_env["GITHUB_TOKEN"] == Emulator.BOT_TOKEN
    assert orion_env["GITHUB_REPOSITORY"] == repo.full_name
    assert orion_env["PYTHONPATH"].split(os.pathsep)[0] == str(ROOT) and (ROOT / "pyproject.toml").is_file()
    env = make_env("o/r", proxy.url, base={"GITHUB_ACTIONS": "true", "GITHUB_RUN_ID": "9",
                                            "GITHUB_OUTPUT": "/x", "GITHUB_STEP_SUMMARY": "/y",
                                            "HOME": "/home"})
    assert env == {"HOME": "/home", "GITHUB_API_URL": proxy.url, "GITHUB_TOKEN": "bot_token",
                   "GITHUB_REPOSITORY": "o/r", "PYTHONPATH": f"{ROOT}{os.pathsep}{SITE}",
                   "ORION_TEST_LIST_SETTLE_S": "0"}
    out = subprocess.run([sys.executable, "-c", "import os, sys; print(sys.path[1])"],
                         env=orion_env, capture_output=True, text=True, check=True, timeout=PATIENCE)
    assert out.stdout.strip() == str(ROOT)

    calls = []
    assert wait_until(lambda: calls.append(1) or len(calls) >= 3, interval=0) is True
    with pytest.raises(AssertionError, match="never: 1"):
        wait_until(lambda: False, timeout=0.05, message=lambda: f"never: {len(calls) - 2}")


def test_the_settle_seam_reaches_only_the_rigs_product_processes(orion_env):
    """rig/site/sitecustomize.py: a product process started with `orion_env` claims without
    the 1 s list settle; one started without it (the composite action's tests, a user) keeps
    the product's constant, and the product reads no variable for it."""
    show = [sys.executable, "-c", "from orion_action.services import claiming; print(claiming.LIST_SETTLE_S)"]

    def settle(env: dict[str, str]) -> str:
        return subprocess.run(show, env=env, cwd=ROOT, capture_output=True, text=True, check=True,
                              timeout=PATIENCE).stdout.strip()

    assert settle(orion_env) == "0.0"
    assert settle({**orion_env, "PYTHONPATH": str(ROOT)}) == "1.0"  # the variable alone does nothing
    assert settle({k: v for k, v in orion_env.items() if k != "ORION_TEST_LIST_SETTLE_S"}) == "1.0"
