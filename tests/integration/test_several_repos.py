"""One worker pool and one reconciler for several repositories (docs/design.md section 12,
"Several repositories"; docs/adr/0021-several-repositories.md), against two emulated
repositories whose issue numbers collide on purpose (both start at #1), so that a claim, a
label or a repair landing in the wrong repository shows. A paused repository among several is
decided in-process (unit/test_several_repos_paused.py, issue 17)."""

# ruff: noqa: F811  (the `runner` fixture is imported, then named as a parameter)

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from rig import ROOT, RepoHandle, parse_github_output, wait_until
from rig.harness import (
    FAST,
    QUEUE,
    READY,
    WORKING,
    Child,
    Proc,
    Run,
    exited_pid,
    fast_config,
    local_holder,
    outputs,
    post_claim,
    product,
    records,
)
from test_action import action_env, runner  # noqa: F401  (fixtures: action.yml as the runner runs it)

P0, P1 = "orion-p0", "orion-p1"
CONFIG = FAST + f"labels: {{priority: [{P0}, {P1}]}}\n"
# A child that appends which issue of which repository it was given, and exits 0.
LOG_CHILD = "import json, os, sys; open(sys.argv[1], 'a').write(json.dumps([os.environ['ORION_REPO'], " \
            "int(os.environ['ORION_ISSUE'])]) + '\\n')"


@pytest.fixture
def repo_b(emulator, proxy, request) -> Iterator[RepoHandle]:
    """A second fresh repository behind the same proxy, under the same token."""
    handle = RepoHandle.create(emulator, proxy.url, hint=request.node.name + "-b")
    yield handle
    handle.dispose()


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return fast_config(tmp_path, CONFIG)


def orion(env: dict[str, str], config: Path, command: str, *args: str) -> Proc:
    return product([command, "--config", str(config), *args], env=env, workdir=config.parent, cwd=ROOT)


def both(a: RepoHandle, b: RepoHandle) -> list[str]:
    return ["--repo", a.full_name, "--repo", b.full_name]


def test_next_takes_priority_then_age_across_both_and_claims_in_the_right_one(
        repo, repo_b, orion_env, tmp_path, config):
    a, b = repo, repo_b
    a_plain = a.create_issue("A: plain, the oldest", [QUEUE])  # A#1
    b_p1 = b.create_issue("B: p1", [QUEUE, P1])  # B#1
    a_p0 = a.create_issue("A: p0", [QUEUE, P0])  # A#2
    b_plain = b.create_issue("B: plain, newer", [QUEUE])  # B#2
    b_p1_newer = b.create_issue("B: p1, newer", [QUEUE, P1])  # B#3
    assert (a_plain, b_p1, a_p0, b_plain, b_p1_newer) == (1, 1, 2, 2, 3)
    order = [[a.full_name, a_p0], [b.full_name, b_p1], [b.full_name, b_p1_newer], [a.full_name, a_plain],
             [b.full_name, b_plain]]

    summary = tmp_path / "step_summary"
    st = orion({**orion_env, "GITHUB_STEP_SUMMARY": str(summary)}, config, "status", "--json", *both(a, b))
    assert st.returncode == 0, st.stderr
    titles = [line.replace("\\", "") for line in summary.read_text().splitlines() if line.startswith("## ")]
    assert titles == [f"## orion queue: {a.full_name}", f"## orion queue: {b.full_name}"]
    doc = json.loads(st.stdout)
    assert doc["repos"] == [a.full_name, b.full_name] and doc["claims"] == []
    assert [[q["repo"], q["issue"]] for q in doc["queue"]] == order
    assert [q["priority"] for q in doc["queue"]] == [P0, P1, P1, None, None]
    assert doc["paused"] is False and doc["paused_repos"] == []

    log = tmp_path / "worked.jsonl"
    r = Run(orion_env, tmp_path, "--next", "--drain", *both(a, b),
            cmd=[sys.executable, "-c", LOG_CHILD, str(log)], config=config, name="drain")
    assert r.wait() == 0, r.stderr
    assert [json.loads(line) for line in log.read_text().splitlines()] == order
    for handle, numbers in ((a, [a_plain, a_p0]), (b, [b_p1, b_plain, b_p1_newer])):
        for n in numbers:  # each ran once, in its own repository: one record, ready
            assert len(records(handle, n)) == 1, (handle.full_name, n)
            assert set(handle.labels(n)) & {QUEUE, WORKING, READY} == {READY}, (handle.full_name, n)


def test_a_claim_and_its_outputs_are_the_issues_repository(repo, repo_b, orion_env, tmp_path, config):
    a, b = repo, repo_b
    a.create_issue("A#1: not queued", ["bug"])
    a.create_issue("A#2: not queued", ["bug"])
    n = b.create_issue("B#1: queued", [QUEUE])
    assert n == 1
    out = tmp_path / "github_output"
    child = Child(tmp_path, name="held")
    r = Run(orion_env, tmp_path, "--next", *both(a, b), cmd=child.cmd, config=config, name="held",
            extra_env={"GITHUB_OUTPUT": str(out)})
    child.wait_started()
    assert child.info()["env"]["ORION_REPO"] == b.full_name and child.info()["env"]["ORION_ISSUE"] == "1"
    assert WORKING in b.labels(n) and QUEUE not in b.labels(n) and len(records(b, n)) == 1
    assert a.labels(1) == ["bug"] and a.comments(1) == []  # the same number in A: untouched
    child.release()
    assert r.wait() == 0, r.stderr
    assert READY in b.labels(n) and a.labels(1) == ["bug"] and a.comments(1) == []
    got = outputs(out)
    assert (got["repo"], got["issue"], got["exit-code"]) == (b.full_name, "1", "0")


def test_one_reconcile_pass_repairs_a_dead_claim_in_each_and_reports_a_failing_one(
        repo, repo_b, orion_env, tmp_path, config):
    a, b = repo, repo_b
    dead_a = a.create_issue("A: dead holder", [QUEUE])
    b.create_issue("B#1: not held", ["bug"])
    dead_b = b.create_issue("B#2: dead holder", [QUEUE])
    post_claim(a, dead_a, local_holder(), child_pid=exited_pid())
    post_claim(b, dead_b, local_holder(), child_pid=exited_pid())
    assert wait_until(lambda: WORKING in a.labels(dead_a) and WORKING in b.labels(dead_b))

    st = orion(orion_env, config, "status", "--json", *both(a, b))
    assert st.returncode == 0, st.stderr
    claims = json.loads(st.stdout)["claims"]
    assert sorted((c["repo"], c["issue"], c["verdict"]) for c in claims) == sorted(
        [(a.full_name, dead_a, "dead"), (b.full_name, dead_b, "dead")])

    missing = f"{a.owner}/no-such-repository-{a.name}"
    out, summary = tmp_path / "github_output", tmp_path / "step_summary"
    env = {**orion_env, "GITHUB_OUTPUT": str(out), "GITHUB_STEP_SUMMARY": str(summary)}
    result = orion(env, config, "reconcile", "--json", "--repo", a.full_name, "--repo", missing,
                   "--repo", b.full_name)
    assert result.returncode == 64, result.stderr  # the missing one's 404, after both others ran
    doc = json.loads(result.stdout)
    assert [(e["repo"], e["ok"]) for e in doc["repos"]] == [(a.full_name, True), (missing, False),
                                                            (b.full_name, True)]
    assert all(e["requests"] > 0 for e in doc["repos"])
    assert [(x["repo"], x["issue"], x["action"]) for x in doc["actions"]] == [
        (a.full_name, dead_a, "requeue"), (b.full_name, dead_b, "requeue")]
    assert f"{missing}: the reconcile pass failed" in result.stderr
    got = parse_github_output(out.read_text())  # the sums over the repositories, last
    assert (got["requeue"], json.loads(got["plan"])) == ("2", doc) and got["exit-code"] == "64"
    headers = [line for line in summary.read_text().splitlines() if line.startswith("#### ")]
    assert headers == [f"#### {a.full_name}", f"#### {missing}", f"#### {b.full_name}"]
    for handle, n in ((a, dead_a), (b, dead_b)):
        assert set(handle.labels(n)) & {QUEUE, WORKING} == {QUEUE}, (handle.full_name, n)
    assert b.labels(1) == ["bug"] and b.comments(1) == []  # B#1 has A's dead issue's number

    again = orion(orion_env, config, "reconcile", *both(a, b))
    assert again.returncode == 0, again.stderr
    lines = again.stdout.splitlines()
    assert f"== {a.full_name}" in lines and f"== {b.full_name}" in lines
    assert [line.split(";")[0] for line in lines if line.startswith("reconcile ")] == [
        f"reconcile {a.full_name}: ok", f"reconcile {b.full_name}: ok"]
    for handle in (a, b):
        assert f"{handle.full_name}: " in again.stderr and "API requests (" in again.stderr


def test_the_actions_repos_input_takes_several_and_sets_the_repo_output(repo, repo_b, runner, tmp_path):
    a, b = repo, repo_b
    n = b.create_issue("B: the only queued issue", [QUEUE])
    seen = tmp_path / "seen.txt"
    result = runner.run({"command": "run", "next": "true", "repos": f"{a.full_name}\n  {b.full_name}\n",
                         "run": f'echo "$ORION_REPO#$ORION_ISSUE" > {seen}'})
    assert result.ok, result.log
    assert seen.read_text().split() == [f"{b.full_name}#{n}"]
    assert (result.outputs["repo"], result.outputs["issue"]) == (b.full_name, str(n)), result.log
    refused = runner.run({"command": "release", "issue": "1", "repos": f"{a.full_name} {b.full_name}"})
    assert result.step("orion").returncode == 0 and refused.step("orion").returncode == 64, refused.log
