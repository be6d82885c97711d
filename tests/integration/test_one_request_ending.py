"""The holder's ending in one GraphQL request, on the rig (ADR 0076): the final record and the
outcome label as one mutation document where the node ids are known (the claim comment's from
its POST, the rest from the trigger check's query), then the lock off by REST; the REST
sequence where they are not (`trigger.permission: none`); and what the holder does when GitHub
refuses one of the two fields, or the whole request.

A run that does nothing: `run --issue N -- true`. Every wait is on the run's exit. The runs beat
once a minute (`QUIET`), so that however slowly a loaded machine runs them, no second beat
comes between the writes whose order these tests assert."""

from __future__ import annotations

from pathlib import Path

import pytest
from rig import Proxy, RepoHandle
from rig.harness import QUEUE, READY, WORKING, Child, Run, fast_config

FAILED = "orion-failed"
QUIET = "heartbeat: {interval: 60, stale_after: 240}\nrun: {kill_grace: 1}\n"


def _made_labels(repo: RepoHandle) -> None:
    """orion's labels, as `orion init` makes them: GraphQL adds only labels that exist."""
    for name in (QUEUE, WORKING, READY, FAILED):
        repo.api("POST", "/labels", json={"name": name, "color": "ededed", "description": ""})


def _run_once(repo: RepoHandle, proxy: Proxy, env: dict[str, str], tmp_path: Path, text: str = QUIET) -> int:
    n = repo.create_issue("nothing to do", [QUEUE])
    run = Run(env, tmp_path, "--issue", str(n), cmd=Child(tmp_path, hold=False).cmd,
              config=fast_config(tmp_path, text))
    assert run.wait() == 0, run.stderr
    return n


def _ending(proxy: Proxy, n: int) -> list[tuple[str, str]]:
    """The label writes, comment edits and GraphQL requests of the run, in order."""
    return [(e.method, e.path.rsplit(f"/issues/{n}", 1)[-1] if f"/issues/{n}" in e.path else
             "/comment" if "/issues/comments/" in e.path else e.path) for e in proxy.log
            if e.path == "/graphql" or f"/issues/{n}/labels" in e.path
            or (e.method == "PATCH" and "/issues/comments/" in e.path)]


def test_the_ending_writes_record_and_label_in_one_graphql_request(
        repo: RepoHandle, proxy: Proxy, orion_env: dict[str, str], tmp_path: Path) -> None:
    _made_labels(repo)
    n = _run_once(repo, proxy, orion_env, tmp_path)
    assert repo.labels(n) == [READY]
    assert _ending(proxy, n) == [
        ("POST", "/graphql"),  # the trigger check's query (and the node ids)
        ("POST", "/labels"),  # the lock
        ("PATCH", "/comment"),  # the record: running
        ("DELETE", f"/labels/{QUEUE}"),  # the unqueue
        ("POST", "/graphql"),  # the ending: the final record, then ready on
        ("DELETE", f"/labels/{WORKING}"),  # the lock off, last
    ]


def test_without_the_trigger_check_the_ending_writes_by_rest(
        repo: RepoHandle, proxy: Proxy, orion_env: dict[str, str], tmp_path: Path) -> None:
    """`trigger.permission: none` makes no query, so no node id is known: today's sequence."""
    _made_labels(repo)
    n = _run_once(repo, proxy, orion_env, tmp_path, QUIET + "trigger: {permission: none}\n")
    assert repo.labels(n) == [READY]
    assert _ending(proxy, n) == [
        ("POST", "/labels"), ("PATCH", "/comment"), ("DELETE", f"/labels/{QUEUE}"),  # the claim
        ("PATCH", "/comment"), ("POST", "/labels"), ("DELETE", f"/labels/{WORKING}"),  # the ending
    ]


def test_a_label_the_repository_lacks_is_added_by_rest(repo: RepoHandle, proxy: Proxy,
                                                      orion_env: dict[str, str], tmp_path: Path) -> None:
    """No `orion-ready` label in the repository: GraphQL would not create it, REST does."""
    n = _run_once(repo, proxy, orion_env, tmp_path)
    assert repo.labels(n) == [READY]
    assert _ending(proxy, n)[-3:] == [("PATCH", "/comment"), ("POST", "/labels"),
                                      ("DELETE", f"/labels/{WORKING}")]


def test_an_addition_refused_beside_a_landed_edit_is_made_good_before_the_lock_comes_off(
        repo: RepoHandle, proxy: Proxy, orion_env: dict[str, str], tmp_path: Path) -> None:
    """(a) GitHub ran the record edit and refused the addition: the lock is still on beside the
    finished record. The holder puts ready on by REST, then takes the lock off."""
    _made_labels(repo)
    proxy.refuse_finish_add(1)
    n = _run_once(repo, proxy, orion_env, tmp_path)
    assert repo.labels(n) == [READY]
    assert _ending(proxy, n)[-3:] == [("POST", "/graphql"), ("POST", "/labels"),
                                      ("DELETE", f"/labels/{WORKING}")]


def test_an_edit_refused_beside_a_landed_addition_is_made_good_before_the_lock_comes_off(
        repo: RepoHandle, proxy: Proxy, orion_env: dict[str, str], tmp_path: Path) -> None:
    """(b) GitHub refused the record edit and ran the addition: the lock and ready are on beside
    a record that says running. The holder writes the record by REST, then takes the lock off."""
    _made_labels(repo)
    proxy.refuse_finish_edit(1)
    n = _run_once(repo, proxy, orion_env, tmp_path)
    assert repo.labels(n) == [READY]
    assert _ending(proxy, n)[-3:] == [("POST", "/graphql"), ("PATCH", "/comment"),
                                      ("DELETE", f"/labels/{WORKING}")]


@pytest.mark.parametrize("answer", [
    {"errors": [{"message": "Something went wrong while executing your query."}]},  # no data at all
], ids=["whole-request-error"])
def test_a_refused_ending_request_falls_back_to_rest(repo: RepoHandle, proxy: Proxy,
                                                     orion_env: dict[str, str], tmp_path: Path,
                                                     answer: dict[str, object]) -> None:
    """An error on the whole request (nothing known to have landed): the REST sequence, every
    write of which is idempotent."""
    _made_labels(repo)
    proxy.delay("POST", r"^/graphql$", 0, count=1)  # the trigger check's query goes through
    proxy.fail("POST", r"^/graphql$", 200, answer, count=1)
    n = _run_once(repo, proxy, orion_env, tmp_path)
    assert repo.labels(n) == [READY]
    assert _ending(proxy, n)[-4:] == [("POST", "/graphql"), ("PATCH", "/comment"), ("POST", "/labels"),
                                      ("DELETE", f"/labels/{WORKING}")]
