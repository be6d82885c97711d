"""The holder's ending in one GraphQL request, on the rig (ADR 0076): the outcome label on and
the lock off as one mutation document where the trigger check's query read the node ids; the
REST sequence where it did not (`trigger.permission: none`); and what the holder does when
GitHub refuses the addition while the removal lands, or refuses the whole request.

A run that does nothing: `run --issue N -- true`. Every wait is on the run's exit."""

from __future__ import annotations

from pathlib import Path

import pytest
from rig import Proxy, RepoHandle
from rig.harness import FAST, QUEUE, READY, WORKING, Child, Run, fast_config

FAILED = "orion-failed"


def _made_labels(repo: RepoHandle) -> None:
    """orion's labels, as `orion init` makes them: GraphQL adds only labels that exist."""
    for name in (QUEUE, WORKING, READY, FAILED):
        repo.api("POST", "/labels", json={"name": name, "color": "ededed", "description": ""})


def _run_once(repo: RepoHandle, proxy: Proxy, env: dict[str, str], tmp_path: Path, text: str = FAST) -> int:
    n = repo.create_issue("nothing to do", [QUEUE])
    run = Run(env, tmp_path, "--issue", str(n), cmd=Child(tmp_path, hold=False).cmd,
              config=fast_config(tmp_path, text))
    assert run.wait() == 0, run.stderr
    return n


def _ending(proxy: Proxy, n: int) -> list[tuple[str, str]]:
    """The label writes and GraphQL requests of the run, in order."""
    return [(e.method, e.path.rsplit(f"/issues/{n}", 1)[-1] or e.path) for e in proxy.log
            if e.path == "/graphql" or f"/issues/{n}/labels" in e.path]


def test_the_ending_moves_its_labels_in_one_graphql_request(repo: RepoHandle, proxy: Proxy,
                                                           orion_env: dict[str, str], tmp_path: Path) -> None:
    _made_labels(repo)
    n = _run_once(repo, proxy, orion_env, tmp_path)
    assert repo.labels(n) == [READY]
    assert _ending(proxy, n) == [
        ("POST", "/graphql"),  # the trigger check's query (and the node ids)
        ("POST", "/labels"),  # the lock
        ("DELETE", f"/labels/{QUEUE}"),  # the unqueue
        ("POST", "/graphql"),  # the ending: ready on, then the lock off
    ]


def test_without_the_trigger_check_the_ending_writes_by_rest(
        repo: RepoHandle, proxy: Proxy, orion_env: dict[str, str], tmp_path: Path) -> None:
    """`trigger.permission: none` makes no query, so no node id is known: today's sequence."""
    _made_labels(repo)
    n = _run_once(repo, proxy, orion_env, tmp_path, FAST + "trigger: {permission: none}\n")
    assert repo.labels(n) == [READY]
    assert _ending(proxy, n) == [
        ("POST", "/labels"), ("DELETE", f"/labels/{QUEUE}"),  # the claim
        ("POST", "/labels"), ("DELETE", f"/labels/{WORKING}"),  # the ending: ready on, the lock off last
    ]


def test_a_label_the_repository_lacks_is_added_by_rest(repo: RepoHandle, proxy: Proxy,
                                                      orion_env: dict[str, str], tmp_path: Path) -> None:
    """No `orion-ready` label in the repository: GraphQL would not create it, REST does."""
    n = _run_once(repo, proxy, orion_env, tmp_path)
    assert repo.labels(n) == [READY]
    assert _ending(proxy, n)[-2:] == [("POST", "/labels"), ("DELETE", f"/labels/{WORKING}")]


def test_an_addition_refused_beside_a_landed_removal_is_made_good_at_once(
        repo: RepoHandle, proxy: Proxy, orion_env: dict[str, str], tmp_path: Path) -> None:
    """GitHub runs the removal although the addition failed: the lock is off and ready is not
    on. The holder reads that answer and puts ready on by REST before it exits."""
    _made_labels(repo)
    proxy.refuse_relabel_add(1)
    n = _run_once(repo, proxy, orion_env, tmp_path)
    assert repo.labels(n) == [READY]
    assert _ending(proxy, n)[-2:] == [("POST", "/graphql"), ("POST", "/labels")]


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
    assert _ending(proxy, n)[-3:] == [("POST", "/graphql"), ("POST", "/labels"),
                                      ("DELETE", f"/labels/{WORKING}")]
