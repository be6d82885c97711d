"""The dashboard issue against the emulator, with real processes (docs/design.md section 12
"Dashboard", docs/adr/0020-dashboard-issue.md): `init` makes it, every `reconcile` pass
rewrites it only when its content changed (at most one write), an outsider's look-alike is
ignored. That `status` writes the same tables to $GITHUB_STEP_SUMMARY is decided in-process
(unit/test_reconcile_in_process.py)."""

from __future__ import annotations

import re
from pathlib import Path

from fakes.dashboard_text import issues_in, row, section
from rig import Emulator, Proxy, RepoHandle
from rig.harness import (
    Orion,
    post_claim,
    queued_issue,
    remote_holder,
    write_config,
)

from orion_action.adapters import machine
from orion_action.core.dashboard import MARKER
from orion_action.core.record import State

LABEL, P0 = "orion-dashboard", "orion-p0"


def dashboard_config(tmp: Path) -> Path:
    path = write_config(tmp, name="dash.yml")
    path.write_text(path.read_text() + f"labels: {{priority: [{P0}]}}\n"
                    "dashboard: {enabled: true, title: fleet queue}\n", encoding="utf-8")
    return path


def init(o: Orion, config: Path) -> int:
    result = o.command("init", config=config)
    assert result.returncode == 0, result.stderr
    m = re.search(r"dashboard: issue #(\d+) (created|already exists)", result.stdout)
    assert m, result.stdout
    return int(m.group(1))


def dashboards(repo: RepoHandle) -> list[dict]:
    return repo.api("GET", "/issues", params={"labels": LABEL, "state": "all", "per_page": 100})


def dashboard_writes(proxy: Proxy, number: int) -> int:
    return proxy.count("PATCH", rf"/issues/{number}$")


def test_the_dashboard_shows_the_true_state_and_is_written_only_on_change(
        orion: Orion, repo: RepoHandle, proxy: Proxy, tmp_path: Path):
    config = dashboard_config(tmp_path)
    number = init(orion, config)
    assert init(orion, config) == number  # idempotent: found again, not made twice
    assert [d["number"] for d in dashboards(repo)] == [number]
    created = repo.issue(number)
    assert created["title"] == "fleet queue" and created["body"].startswith(MARKER)

    plain = queued_issue(repo, "plain, oldest")
    urgent = queued_issue(repo, "urgent", P0)
    held = queued_issue(repo, "held by a real wrapper")
    wrapper = orion.running(held, stage="build", config=config)
    far = queued_issue(repo, "held far away")
    post_claim(repo, far, remote_holder("far-away"), stale_after=600, stage="qa")
    failed = repo.create_issue("broke", [])
    post_claim(repo, failed, remote_holder(), state=State.FINISHED, exit_code=3, lock=False)
    repo.add_label(failed, "orion-failed")
    done = repo.create_issue("done | closed", ["orion-ready"])
    repo.close(done)
    done_open = repo.create_issue("done, still open", ["orion-ready"])

    plan = orion.reconcile(config=config)
    assert {a["issue"]: a["action"] for a in plan["actions"]} == {held: "keep", far: "keep"}
    assert f"dashboard: #{number} updated" in plan["_stderr"]
    body = repo.issue(number)["body"]
    assert body.startswith(MARKER)

    # Each section against the issues as GitHub has them.
    assert "**The queue is running**" in body
    assert issues_in(section(body, "Queue")) == [urgent, plain]  # priority first, then oldest
    assert row(section(body, "Queue"), urgent)[-1] == P0
    assert row(section(body, "Queue"), urgent)[0] == repo.issue(urgent)["title"]  # titles in the queue
    working = section(body, "Working")
    assert sorted(issues_in(working)) == sorted(
        i["number"] for i in repo.api("GET", "/issues", params={"labels": "orion-working"}))
    title, state, stage, holder, attempt, started, progress = row(working, held)
    assert (state, stage, attempt, progress) == ("alive", "build", "1", "-")
    assert holder == f"{machine.this_machine().host} pid {wrapper.pid}"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", started)
    assert row(working, far)[1:5] == ["alive", "qa", "far-away pid 4242", "1"]
    fails = section(body, "Failed")
    assert issues_in(fails) == [failed]
    # The reason, and no link: the run was outside Actions and its result named no pull request.
    assert row(fails, failed)[-2:] == ["the command exited with code 3 (attempt 1)", "-"]
    finished = section(body, "Finished in the last 24 hours")
    assert sorted(issues_in(finished)) == [done, done_open]
    assert row(finished, done)[0] == "done | closed" and row(finished, done)[1] == "orion-ready"
    assert "### Cost" not in body and "adr/" not in body  # no operator notes

    # A second pass with nothing changed writes nothing (the wrapper's beats change no cell).
    writes, comment_reads = dashboard_writes(proxy, number), proxy.count("GET", rf"/issues/{failed}/comments")
    plan = orion.reconcile(config=config)
    # docs/design.md section 10: five listings (dashboard, pause, queue, failed, finished), no write
    assert f"dashboard: #{number} unchanged (5 requests)" in plan["_stderr"]
    assert dashboard_writes(proxy, number) == writes
    assert proxy.count("GET", rf"/issues/{failed}/comments") == comment_reads  # the reason is cached
    assert repo.issue(number)["body"] == body

    # Two changes, one write: the queue paused and a new issue queued.
    result = orion.command("pause", "--reason", "maintenance window", config=config)
    assert result.returncode == 0, result.stderr
    late = queued_issue(repo, "late")
    orion.reconcile(config=config)
    assert dashboard_writes(proxy, number) == writes + 1
    body = repo.issue(number)["body"]
    assert "**The queue is paused**: maintenance window." in body
    assert issues_in(section(body, "Queue")) == [urgent, plain, late]
    assert wrapper.proc.poll() is None  # the dashboard never touched the run


def test_a_look_alike_by_an_outsider_is_ignored(orion: Orion, repo: RepoHandle, tmp_path: Path):
    config = dashboard_config(tmp_path)
    repo.api("POST", "/labels", json={"name": LABEL, "color": "ffffff"})
    fake_body = f"{MARKER}\nmallory's queue"
    fake = repo.api("POST", "/issues", token=Emulator.OUTSIDER_TOKEN,
                    json={"title": "fleet queue", "body": fake_body, "labels": [LABEL]})
    assert fake["user"]["login"] == Emulator.OUTSIDER and [x["name"] for x in fake["labels"]] == [LABEL]

    number = init(orion, config)
    assert number != fake["number"]
    assert sorted(d["number"] for d in dashboards(repo)) == sorted([fake["number"], number])
    queued = queued_issue(repo, "work")
    plan = orion.reconcile(config=config)
    assert f"dashboard: #{number} updated" in plan["_stderr"]
    assert issues_in(section(repo.issue(number)["body"], "Queue")) == [queued]
    assert repo.issue(fake["number"])["body"] == fake_body  # never written, never believed
