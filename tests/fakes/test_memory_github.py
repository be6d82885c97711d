"""The fake's knobs for the model checker (what the emulator cannot do, so the contract suite
cannot cover): lagging lists, the call hook, injected failures, deadlines, the clock."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from fakes.memory_github import FIRST_COMMENT_ID, MemoryServer, ServerTime
from orion_action.errors import NotFound, Unavailable
from orion_action.ports import Policy


@pytest.fixture
def server() -> MemoryServer:
    return MemoryServer()


def test_a_lagging_list_misses_new_comments_and_shows_old_bodies(server: MemoryServer) -> None:
    gh = server.client()
    n = server.create_issue("lag")
    kept = gh.post_comment(n, "v1")
    server.list_lag = 10
    new = gh.post_comment(n, "new")
    gh.edit_comment(kept.id, "v2")
    listed, _ = gh.list_comments(n)
    assert [(c.id, c.body) for c in listed] == [(kept.id, "v1")]
    assert gh.get_comment(new.id)[0].body == "new"  # a direct read is always current
    assert gh.get_comment(kept.id)[0].body == "v2"
    assert gh.get_issue(n)[0].comments == 2
    assert server.lagging() == [kept.id, new.id]
    since = kept.created_at
    assert [c.body for c in gh.list_repo_comments(since)[0]] == ["v1"]
    server.settle(new.id)
    assert [c.body for c in gh.list_comments(n)[0]] == ["v1", "new"]
    server.clock.advance(9.999)
    assert [c.body for c in gh.list_comments(n)[0]] == ["v1", "new"]
    server.clock.advance(0.001)  # the lag has elapsed
    assert [c.body for c in gh.list_comments(n)[0]] == ["v2", "new"]
    assert server.lagging() == []


def test_a_write_after_an_expired_lag_shows_only_the_body_just_before_it(server: MemoryServer) -> None:
    """A lag that has run out shows nothing any more, though no listing came to expire it: the
    next write lags from the body it replaced, never from one older (a list shows a write's
    previous state for at most the lag, as GitHub's replicas do; ADR 0064 found the fake
    extending the old entry instead, which showed a 9 s old body under a 2.5 s lag)."""
    gh = server.client()
    n = server.create_issue("lag")
    c = gh.post_comment(n, "v1")
    server.list_lag = 2
    gh.edit_comment(c.id, "v2")
    server.clock.advance(5)  # v2's lag is over; nobody listed
    gh.edit_comment(c.id, "v3")
    assert [x.body for x in gh.list_comments(n)[0]] == ["v2"]
    server.clock.advance(2)
    assert [x.body for x in gh.list_comments(n)[0]] == ["v3"]


def test_a_lagging_list_still_shows_a_deleted_comment(server: MemoryServer) -> None:
    gh = server.client()
    n = server.create_issue("lag")
    gone = gh.post_comment(n, "soon deleted")
    server.list_lag = 5
    gh.delete_comment(gone.id)
    with pytest.raises(NotFound):
        gh.get_comment(gone.id)
    assert [c.id for c in gh.list_comments(n)[0]] == [gone.id]
    server.settle()
    assert gh.list_comments(n)[0] == []


def test_every_request_is_announced_before_it_is_made(server: MemoryServer) -> None:
    gh = server.client()
    n = server.create_issue("hooked")
    for i in range(150):
        server.comment(n, f"c{i}")  # a person's comments: no hook, no request
    seen: list[tuple[str, tuple[object, ...], int]] = []
    server.on_call = lambda op, args: seen.append((op, args, len(server.comments(n))))
    gh.own_login()
    gh.own_login()  # cached: no request
    posted = gh.post_comment(n, "mine")
    gh.list_comments(n)
    gh.add_labels(n, [])
    assert gh.remove_label(n, "absent") is False
    assert [(op, args) for op, args, _ in seen] == [
        ("own_login", ()), ("post_comment", (n, "mine")), ("list_comments", (n, 1)),
        ("list_comments", (n, 2)), ("remove_label", (n, "absent"))]
    assert seen[1][2] == 150  # before: the comment was not yet written
    assert gh.requests == len(seen) == 5
    assert posted.id == FIRST_COMMENT_ID + 150


def test_each_page_is_read_when_it_is_requested(server: MemoryServer) -> None:
    """Offset paging, as over HTTP: a deletion between pages shifts a comment out of view."""
    gh = server.client()
    n = server.create_issue("paging")
    ids = [server.comment(n, f"c{i}") for i in range(150)]

    def delete_first_on_page_2(op: str, args: tuple[object, ...]) -> None:
        if args[-1] == 2:
            server.delete(ids[0])

    server.on_call = delete_first_on_page_2
    listed = [c.id for c in gh.list_comments(n)[0]]
    assert ids[100] not in listed and len(listed) == 149


def test_injected_failures_hit_one_actor(server: MemoryServer) -> None:
    gh = server.client()
    n = server.create_issue("flaky")
    me = threading.current_thread().name
    server.fail_next("someone-else")
    server.fail_next(me, "unavailable")
    with pytest.raises(Unavailable):
        gh.post_comment(n, "lost")
    assert server.comments(n) == [] and gh.requests == 1
    server.fail_next(me, "ambiguous")
    with pytest.raises(Unavailable):
        gh.post_comment(n, "landed, unheard")
    assert [c.body for c in server.comments(n)] == ["landed, unheard"]
    server.fail_next(me, "ambiguous")
    with pytest.raises(Unavailable):
        gh.remove_label(n, "absent")  # a 4xx under an ambiguous failure: the caller just fails
    server.fail_next(me, "ambiguous")
    with pytest.raises(Unavailable):
        gh.get_issue(n)  # a read that is not answered
    gh.post_comment(n, "fine again")
    assert len(server.comments(n)) == 2


def test_a_passed_deadline_stops_requests_before_they_start(server: MemoryServer) -> None:
    gh = server.client()
    n = server.create_issue("late")
    calls: list[str] = []
    server.on_call = lambda op, args: calls.append(op)
    with gh.bounded(Policy(ServerTime(server), server.clock.monotonic() + 5)):
        gh.get_issue(n)
        server.clock.advance(5)
        with pytest.raises(Unavailable):
            gh.post_comment(n, "too late")
    assert server.comments(n) == [] and gh.requests == 1
    assert calls == ["get_issue", "post_comment"]  # still a scheduling point


def test_budget_is_per_login_across_clones(server: MemoryServer) -> None:
    gh = server.client()
    twin = gh.clone()
    other = server.client("someone")
    gh.check_repo()
    twin.check_repo()
    other.check_repo()
    limit = gh.budget.limit or 0
    assert (gh.budget.remaining, twin.budget.remaining, other.budget.remaining) == (
        limit - 1, limit - 2, limit - 1)


def test_stamps_in_milliseconds_date_in_seconds(server: MemoryServer) -> None:
    gh = server.client()
    n = server.create_issue("clock")
    server.clock.advance(0.5004)
    posted = gh.post_comment(n, "x")
    _, now = gh.get_comment(posted.id)
    assert posted.created_at - server.clock.start == timedelta(milliseconds=500)
    assert now == server.clock.start and now < posted.created_at
    with pytest.raises(ValueError):
        server.clock.advance(-1)


def test_person_actions(server: MemoryServer) -> None:
    gh = server.client()
    n = server.create_issue("person", ["orion-ready"])
    server.add_label(n, "orion-working")
    assert server.remove_label(n, "orion-ready") is True
    server.close(n)
    cid = server.comment(n, "a person speaks", login="someone")
    server.edit(cid, "edited")
    assert gh.requests == 0
    issue, _ = gh.get_issue(n)
    assert (issue.is_open, issue.labels, issue.comments) == (False, frozenset({"orion-working"}), 1)
    assert gh.get_comment(cid)[0].author == "someone"
    server.reopen(n)
    server.delete(cid)
    assert gh.get_issue(n)[0].is_open and server.comments(n) == []


def test_a_lost_answer_is_retried_like_the_adapter_does(server: MemoryServer) -> None:
    gh = server.client()
    n = server.create_issue("lost")
    me = threading.current_thread().name
    calls: list[str] = []
    server.on_call = lambda op, args: calls.append(op)
    server.fail_next(me, "lost")
    posted = gh.post_comment(n, "claim tok-1", marker="tok-1")
    assert [c.body for c in server.comments(n)] == ["claim tok-1"]
    assert calls == ["post_comment", "list_comments"] and gh.requests == 2
    assert posted.body == "claim tok-1"

    server.list_lag = 30  # the list does not show it yet: the retry posts a duplicate
    server.fail_next(me, "lost")
    gh.post_comment(n, "claim tok-2", marker="tok-2")
    assert [c.body for c in server.comments(n)] == ["claim tok-1", "claim tok-2", "claim tok-2"]

    server.add_label(n, "orion-working")
    server.fail_next(me, "lost")
    # Removed, and the retry saw a 404: a try that may have landed reads as unknown (ADR 0096).
    assert gh.remove_label(n, "orion-working") is None
    assert server.issue(n).labels == frozenset()


def test_a_5xx_that_applied_nothing_is_retried_like_the_adapter_does(server: MemoryServer) -> None:
    """"retried": a 502 with nothing applied, then the adapter's retry. A DELETE whose label is
    gone by the retry reads None (unknown), as the adapter reads it (it cannot tell a 502 that
    landed from one that did not, ADR 0096); a write that succeeds on the retry is applied once."""
    gh = server.client()
    n = server.create_issue("bad gateway", ["orion"])
    me = threading.current_thread().name
    calls: list[str] = []
    server.on_call = lambda op, args: calls.append(op)
    server.fail_next(me, "retried")
    gh.add_labels(n, ["orion-working"])
    assert calls == ["add_labels", "add_labels"] and server.issue(n).labels == {"orion", "orion-working"}
    server.fail_next(me, "retried")
    server.on_call = lambda op, args: server.remove_label(n, "orion")  # another claim's unqueue lands first
    assert gh.remove_label(n, "orion") is None  # someone else's removal: whose, the caller cannot tell
    assert server.issue(n).labels == {"orion-working"}
