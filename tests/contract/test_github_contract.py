"""One contract, two GitHubs: the in-memory fake the model checker drives, and the emulator
behind the adapter (GitHubRepo) the product ships. Every semantic the services rely on is
asserted here for both, so the fake cannot drift from the real thing.

A `World` is a GitHub as a test sees it: `gh` is the product's port (as the bot) and the
other methods are a person acting directly (never through the port, never counted)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Protocol

import pytest
from fakes.memory_github import MemoryGitHub, MemoryServer
from rig import Emulator, Proxy, RepoHandle, unique_repo_name, wait_until

from orion_action.adapters.github import GitHubRepo
from orion_action.core.issue import Comment
from orion_action.errors import GitHubError, NotFound, Unavailable
from orion_action.ports import Finished, GitHubPort, Policy, QueueHistory

BOT, OUTSIDER = Emulator.OWNER, Emulator.OUTSIDER


class World(Protocol):
    gh: GitHubPort

    def new_client(self) -> GitHubPort: ...
    def create_issue(self, title: str, labels: tuple[str, ...] = (), body: str = "") -> int: ...
    def create_pull(self) -> int: ...
    def add_label(self, n: int, name: str) -> None: ...
    def create_label(self, name: str, description: str) -> None: ...
    def delete_label(self, name: str) -> None: ...
    def close(self, n: int) -> None: ...
    def reopen(self, n: int) -> None: ...
    def comment(self, n: int, body: str, outsider: bool = False) -> int: ...
    def delete_comment(self, comment_id: int) -> None: ...
    def edit_comment(self, comment_id: int, body: str) -> None: ...
    def advance(self, seconds: int) -> None: ...
    def set_workflow_run(self, run_id: int, status: str) -> None: ...
    def add_workflow(self, file: str) -> None: ...
    def dispatches(self) -> list[dict[str, object]]: ...
    def monotonic(self) -> float: ...


class MemoryWorld:
    def __init__(self) -> None:
        self.server = MemoryServer(f"{BOT}/work")
        self.gh: GitHubPort = self.server.client(BOT)

    def new_client(self) -> GitHubPort:
        return MemoryGitHub(self.server, BOT)

    def create_issue(self, title: str, labels: tuple[str, ...] = (), body: str = "") -> int:
        return self.server.create_issue(title, labels, body)

    def create_pull(self) -> int:
        return self.server.create_issue("a pull request", pull_request=True)

    def add_label(self, n: int, name: str) -> None:
        self.server.add_label(n, name)

    def create_label(self, name: str, description: str) -> None:
        self.server.labels[name] = ("ededed", description)

    def delete_label(self, name: str) -> None:
        self.server.labels.pop(name, None)
        for n in [i.number for i in self.server.issues()]:
            self.server.remove_label(n, name)

    def close(self, n: int) -> None:
        self.server.close(n)

    def reopen(self, n: int) -> None:
        self.server.reopen(n)

    def comment(self, n: int, body: str, outsider: bool = False) -> int:
        return self.server.comment(n, body, OUTSIDER if outsider else BOT)

    def delete_comment(self, comment_id: int) -> None:
        self.server.delete(comment_id)

    def edit_comment(self, comment_id: int, body: str) -> None:
        self.server.edit(comment_id, body)

    def advance(self, seconds: int) -> None:
        self.server.clock.advance(seconds)

    def set_workflow_run(self, run_id: int, status: str) -> None:
        self.server.workflow_runs[run_id] = status

    def add_workflow(self, file: str) -> None:
        self.server.workflows[file] = "orion worker #{issue}"

    def dispatches(self) -> list[dict[str, object]]:
        return list(self.server.dispatches)

    def monotonic(self) -> float:
        return self.server.clock.monotonic()


class EmulatorWorld:
    """A fresh repository (with a commit, so pull requests can be opened) on the session's
    emulator; the port goes through the proxy (it serves workflow runs), the person direct."""

    def __init__(self, emulator: Emulator, proxy: Proxy, hint: str) -> None:
        created = emulator.request("POST", "/user/repos",
                                   json={"name": unique_repo_name(hint), "auto_init": True})
        assert created.status_code == 201, created.text
        self.emulator, self.proxy = emulator, proxy
        self.repo = RepoHandle(emulator, created.json()["full_name"], proxy.url)
        self.gh: GitHubPort = self.new_client()
        self._clients = [self.gh]

    def new_client(self) -> GitHubPort:
        client = GitHubRepo(self.repo.full_name, Emulator.BOT_TOKEN, self.proxy.url, retry_for=5)
        return client

    def create_issue(self, title: str, labels: tuple[str, ...] = (), body: str = "") -> int:
        return self.repo.create_issue(title, labels, body)

    def create_pull(self) -> int:
        sha = self.repo.api("GET", "/git/ref/heads/main")["object"]["sha"]
        branch = unique_repo_name("pr")
        self.repo.api("POST", "/git/refs", json={"ref": f"refs/heads/{branch}", "sha": sha})
        return self.repo.api("POST", "/pulls", json={"title": "a pull request", "head": branch,
                                                     "base": "main"})["number"]

    def add_label(self, n: int, name: str) -> None:
        self.repo.add_label(n, name)

    def create_label(self, name: str, description: str) -> None:
        self.repo.api("POST", "/labels", json={"name": name, "color": "ededed", "description": description})

    def delete_label(self, name: str) -> None:
        resp = self.emulator.request("DELETE", f"/repos/{self.repo.full_name}/labels/{name}")
        assert resp.status_code in (204, 404), resp.text

    def close(self, n: int) -> None:
        self.repo.close(n)

    def reopen(self, n: int) -> None:
        self.repo.reopen(n)

    def comment(self, n: int, body: str, outsider: bool = False) -> int:
        return self.repo.comment(n, body, Emulator.OUTSIDER_TOKEN if outsider else Emulator.BOT_TOKEN)

    def delete_comment(self, comment_id: int) -> None:
        self.repo.delete_comment(comment_id)

    def edit_comment(self, comment_id: int, body: str) -> None:
        self.repo.api("PATCH", f"/issues/comments/{comment_id}", json={"body": body})

    def _date(self) -> datetime:
        resp = self.emulator.request("GET", "/rate_limit")
        return GitHubRepo.server_time(dict(resp.headers))

    def advance(self, seconds: int) -> None:
        """Real time has to pass: wait until the server's `Date` has moved that far."""
        target = self._date() + timedelta(seconds=seconds)
        wait_until(lambda: self._date() >= target, interval=0.02)

    def set_workflow_run(self, run_id: int, status: str) -> None:
        self.proxy.set_workflow_run(self.repo.owner, self.repo.name, run_id, status)

    def add_workflow(self, file: str) -> None:
        self.proxy.add_workflow(self.repo.owner, self.repo.name, file)

    def dispatches(self) -> list[dict[str, object]]:
        return [d for d in self.proxy.dispatches if d["run_id"] in self._runs_of_repo()]

    def _runs_of_repo(self) -> set[int]:
        return {rid for (o, r, rid) in self.proxy._runs if (o, r) == (self.repo.owner.lower(),
                                                                      self.repo.name.lower())}

    def monotonic(self) -> float:
        return time.monotonic()


@pytest.fixture(params=["memory", "emulator"])
def world(request: pytest.FixtureRequest) -> Iterator[World]:
    if request.param == "memory":
        yield MemoryWorld()
        return
    emulator = request.getfixturevalue("emulator")
    proxy = request.getfixturevalue("proxy")
    w = EmulatorWorld(emulator, proxy, request.node.name)
    yield w
    w.gh.close()
    w.repo.dispose()


def _spent(gh: GitHubPort, call: Callable[[], object]) -> int:
    before = gh.requests
    call()
    return gh.requests - before


# -- identity ------------------------------------------------------------------------------------


def test_own_login_costs_one_request_then_is_known_to_clones(world: World) -> None:
    gh = world.gh
    assert gh.own_login() == BOT
    assert gh.requests == 1
    assert gh.own_login() == BOT and gh.requests == 1
    twin = gh.clone()
    assert twin.requests == 0 and twin.own_login() == BOT and twin.requests == 0
    fresh = world.new_client()
    fresh.learn_login("someone-else")
    assert fresh.own_login() == "someone-else" and fresh.requests == 0
    fresh.close()


def test_check_repo_and_budget(world: World) -> None:
    gh = world.gh
    assert _spent(gh, gh.check_repo) == 1
    first = gh.budget
    gh.check_repo()
    assert first.limit is not None and first.remaining is not None
    assert gh.budget.remaining == first.remaining - 1


# -- issues --------------------------------------------------------------------------------------


def test_get_issue_reports_what_the_services_read(world: World) -> None:
    n = world.create_issue("a title", ("orion-ready", "other"), body="a body")
    issue, now = world.gh.get_issue(n)
    assert (issue.number, issue.is_open, issue.labels, issue.comments) == (
        n, True, frozenset({"orion-ready", "other"}), 0)
    assert (issue.title, issue.body, issue.is_pull_request) == ("a title", "a body", False)
    assert now.tzinfo is not None and now.microsecond == 0  # the Date header: whole seconds
    assert abs((now - issue.created_at).total_seconds()) < 2
    assert world.gh.requests == 1


def test_missing_things_are_not_found(world: World) -> None:
    gh = world.gh
    n = world.create_issue("exists")
    with pytest.raises(NotFound):
        gh.get_issue(n + 100)
    with pytest.raises(NotFound):
        gh.list_comments(n + 100)
    with pytest.raises(NotFound):
        gh.post_comment(n + 100, "nowhere")
    missing = world.comment(n, "soon gone")
    world.delete_comment(missing)
    with pytest.raises(NotFound):
        gh.get_comment(missing)
    with pytest.raises(NotFound):
        gh.edit_comment(missing, "edit")
    assert _spent(gh, lambda: gh.delete_comment(missing)) == 1  # already gone is fine
    assert gh.remove_label(n + 100, "orion-ready") is False  # GitHub's 404 says no more


def test_pull_requests_share_numbers_but_are_not_issues(world: World) -> None:
    before = world.create_issue("before")
    pr = world.create_pull()
    after = world.create_issue("after", ("orion-ready",))
    assert before < pr < after
    world.add_label(pr, "orion-ready")
    with pytest.raises(NotFound):
        world.gh.get_issue(pr)
    assert [i.number for i in world.gh.list_issues("orion-ready")] == [after]


def test_list_issues_exact_label_state_and_oldest_first(world: World) -> None:
    gh = world.gh
    a = world.create_issue("a", ("q",))
    world.create_issue("b", ("q-extra", "Q"))
    c = world.create_issue("c", ("q",))
    d = world.create_issue("d", ("other", "q"))
    world.create_issue("e")
    world.close(c)
    assert [i.number for i in gh.list_issues("q")] == [a, d]
    assert [i.number for i in gh.list_issues("q", state="closed")] == [c]
    found = gh.list_issues("q", state="all")
    assert [i.number for i in found] == [a, c, d]
    assert [i.is_open for i in found] == [True, False, True]
    assert found[2].labels == frozenset({"other", "q"})
    assert gh.list_issues("never-used") == []
    world.add_label(a, "unused-now")
    assert gh.list_issues("unused") == []  # no prefix matching


def test_closed_issues_keep_labels_and_take_comments(world: World) -> None:
    gh = world.gh
    n = world.create_issue("closing", ("orion-working",))
    world.close(n)
    issue, _ = gh.get_issue(n)
    assert not issue.is_open and issue.labels == frozenset({"orion-working"})
    gh.post_comment(n, "after the close")
    assert gh.get_issue(n)[0].comments == 1
    world.reopen(n)
    assert gh.get_issue(n)[0].is_open


# -- labels ---------------------------------------------------------------------------------------


def test_labels_add_idempotent_remove_says_whether_it_was_there(world: World) -> None:
    gh = world.gh
    n = world.create_issue("labels", ("a",))
    assert _spent(gh, lambda: gh.add_labels(n, ["a", "b"])) == 1
    # the answer lists every label on the issue, not only those added (ADR 0066)
    assert gh.add_labels(n, ("b", "c")) == frozenset({"a", "b", "c"})
    world.add_label(n, "by-a-person")
    assert gh.add_labels(n, ["c"]) == frozenset({"a", "b", "c", "by-a-person"})
    gh.remove_label(n, "by-a-person")
    assert _spent(gh, lambda: gh.add_labels(n, [])) == 0
    assert gh.get_issue(n)[0].labels == frozenset({"a", "b", "c"})
    assert gh.remove_label(n, "b") is True
    assert gh.remove_label(n, "b") is False
    assert gh.remove_label(n, "never-there") is False
    assert _spent(gh, lambda: gh.remove_label(n, "c")) == 1
    assert gh.get_issue(n)[0].labels == frozenset({"a"})


def test_queue_history_lists_the_queue_and_cancel_label_events_in_order(world: World) -> None:
    """ADR 0061: the trigger check's one query also gives both labels' `labeled` and
    `unlabeled` events, oldest first, with who did each; other labels' events are left out."""
    gh = world.gh
    n = world.create_issue("history", ("bug",))
    gh.add_labels(n, ["orion"])
    world.add_label(n, "orion-cancel")
    gh.remove_label(n, "bug")
    gh.remove_label(n, "orion-cancel")
    history = _spent_history(gh, n)
    assert [(e.label, e.added) for e in history.label_events] == [
        ("orion", True), ("orion-cancel", True), ("orion-cancel", False)]
    own = (gh.own_login() or "").lower()
    assert history.label_events[0].login.lower() == own and history.label_events[2].login.lower() == own
    assert [q.login.lower() for q in history.labelled] == [own]


def test_finish_edits_then_adds_in_one_request_once_the_ids_are_known(world: World) -> None:
    """ADR 0076: the ending's final record and outcome label as one GraphQL mutation document,
    `updateIssueComment` then `addLabelsToLabelable`, run by GitHub in that order; an error on
    one field nulls it and does not stop the next
    (https://docs.github.com/en/graphql/reference/mutations#updateissuecomment,
    https://docs.github.com/en/graphql/reference/mutations#addlabelstolabelable, and
    https://docs.github.com/en/graphql/guides/forming-calls-with-graphql#about-mutations). The
    comment's node id comes from the answer to its POST, the issue's and the labels' from the
    trigger check's query; without them nothing is sent. The lock is not touched."""
    gh = world.gh
    for name in ("orion-ready", "orion-working"):
        world.create_label(name, "")
    n = world.create_issue("finish", ("orion-working", "bug"))
    posted = gh.post_comment(n, "claim: running")
    unknown = _spent(gh, lambda: gh.finish(n, posted.id, "claim: finished", ("orion-ready",)))
    assert unknown == 0  # the issue's and the labels' ids unknown: nothing sent
    gh.queue_history(n, "orion", "orion-cancel")
    done = None

    def end() -> None:
        nonlocal done
        done = gh.finish(n, posted.id, "claim: finished", ("orion-ready",))

    assert _spent(gh, end) == 1
    assert done == Finished(edited=True, added=True)
    assert gh.get_issue(n)[0].labels == frozenset({"orion-ready", "orion-working", "bug"})
    assert gh.get_comment(posted.id)[0].body == "claim: finished"
    # Idempotent: the same body again, a label already on: no errors.
    assert gh.finish(n, posted.id, "claim: finished", ("orion-ready",)) == Finished(True, True)
    assert gh.finish(n, posted.id, "x", ("never-made",)) is None  # no such label: no id, nothing sent
    other = world.create_issue("not posted by this client")
    gh.queue_history(other, "orion", "orion-cancel")
    listed = gh.list_comments(n)[0][0]
    assert gh.finish(other, listed.id + 10**6, "x", ("orion-ready",)) is None  # comment id unknown
    # A label deleted from the repository after the query: the edit lands, the addition is refused.
    gh.remove_label(n, "orion-ready")
    world.delete_label("orion-ready")
    assert gh.finish(n, posted.id, "claim: finished again", ("orion-ready",)) == Finished(True, False)
    assert gh.get_comment(posted.id)[0].body == "claim: finished again"
    assert gh.get_issue(n)[0].labels == frozenset({"orion-working", "bug"})


def _spent_history(gh: GitHubPort, n: int) -> QueueHistory:
    before = gh.requests
    history = gh.queue_history(n, "orion", "orion-cancel")
    assert gh.requests - before <= 1  # one GraphQL query (it may sit outside the REST count)
    return history


def test_ensure_label_creates_then_keeps_then_updates(world: World) -> None:
    gh = world.gh
    name = "orion-contract"
    assert gh.ensure_label(name, "0e8a16", "queued") == "created"
    assert gh.ensure_label(name, "0E8A16", "queued") == "unchanged"
    assert gh.ensure_label(name, "0e8a16", "changed") == "updated"
    assert gh.ensure_label(name, "0e8a16", "changed") == "unchanged"


def test_issue_reads_carry_the_label_descriptions(world: World) -> None:
    """What the pause switch rests on (ADR 0022): a label's description, as it is now, comes
    with every issue read and listing, so a claim checks the switch for free; `get_label`
    reads it for one request (status, pause, resume)."""
    gh = world.gh
    assert _spent(gh, lambda: gh.get_label("orion")) == 1
    assert gh.get_label("orion") is None
    world.create_label("orion", "queued for orion")
    n = world.create_issue("carries it", ("orion", "a"))
    assert gh.get_issue(n)[0].label_description("orion") == "queued for orion"
    assert gh.ensure_label("orion", "ededed", "paused: deploy freeze") == "updated"
    assert gh.get_label("orion") == ("ededed", "paused: deploy freeze")
    assert gh.get_issue(n)[0].label_description("orion") == "paused: deploy freeze"
    assert [i.label_description("orion") for i in gh.list_issues("orion")] == ["paused: deploy freeze"]
    assert gh.get_issue(n)[0].label_description("missing") is None


def test_workflow_run_status(world: World) -> None:
    assert world.gh.workflow_run_status(4242) is None
    world.set_workflow_run(4242, "in_progress")
    assert world.gh.workflow_run_status(4242) == "in_progress"
    world.set_workflow_run(4242, "completed")
    assert world.gh.workflow_run_status(4242) == "completed"


# -- comments -------------------------------------------------------------------------------------


def test_comments_in_id_order_with_authors_counts_and_deletion(world: World) -> None:
    gh = world.gh
    n = world.create_issue("talk")
    other = world.create_issue("elsewhere")
    first = gh.post_comment(n, "one")
    assert (first.author, first.body, first.issue) == (BOT, "one", n)
    theirs = world.comment(n, "from outside", outsider=True)
    world.comment(other, "not this issue")
    second = gh.post_comment(n, "two")
    assert first.id < theirs < second.id
    comments, now = gh.list_comments(n)
    assert [(c.id, c.author, c.body, c.issue) for c in comments] == [
        (first.id, BOT, "one", n), (theirs, OUTSIDER, "from outside", n), (second.id, BOT, "two", n)]
    assert all(c.created_at <= c.updated_at and c.created_at.microsecond % 1000 == 0 for c in comments)
    assert now.microsecond == 0
    assert gh.get_issue(n)[0].comments == 3
    gh.delete_comment(theirs)
    assert [c.id for c in gh.list_comments(n)[0]] == [first.id, second.id]
    assert gh.get_issue(n)[0].comments == 2
    third = gh.post_comment(n, "three")
    assert third.id > second.id  # ids are never reused
    assert gh.get_comment(first.id)[0].body == "one"


def test_empty_comment_is_refused(world: World) -> None:
    n = world.create_issue("empty")
    with pytest.raises(GitHubError) as info:
        world.gh.post_comment(n, "  \n")
    assert info.value.status == 422
    assert world.gh.get_issue(n)[0].comments == 0


def test_listing_pages_by_100_and_costs_a_request_per_page(world: World) -> None:
    gh = world.gh
    n = world.create_issue("busy")
    assert _spent(gh, lambda: gh.list_comments(n)) == 1  # no comments: still one request
    ids = [world.comment(n, f"c{i}") for i in range(201)]
    comments: list[Comment] = []
    assert _spent(gh, lambda: comments.extend(gh.list_comments(n)[0])) == 3
    assert [c.id for c in comments] == ids
    everywhere: list[Comment] = []
    long_ago = comments[0].created_at - timedelta(days=1)
    assert _spent(gh, lambda: everywhere.extend(gh.list_repo_comments(long_ago)[0])) == 3
    assert sorted(c.id for c in everywhere) == ids
    world.delete_comment(ids[-1])
    assert _spent(gh, lambda: gh.list_comments(n)) == 2  # exactly 200: no third page


def test_listing_from_a_page_with_a_page_cap(world: World) -> None:
    """The holder's fence reads only the pages with new comments, at most a few per beat."""
    gh = world.gh
    n = world.create_issue("busy")
    ids = [world.comment(n, f"c{i}") for i in range(250)]
    tail: list[Comment] = []
    more: list[bool] = []

    def read(first: int, cap: int | None) -> None:
        comments, _, left = gh.list_comments_from(n, first, cap)
        tail[:] = comments
        more[:] = [left]

    assert _spent(gh, lambda: read(2, 1)) == 1
    assert [c.id for c in tail] == ids[100:200] and more == [True]
    assert _spent(gh, lambda: read(2, 2)) == 2
    assert [c.id for c in tail] == ids[100:] and more == [False]
    assert _spent(gh, lambda: read(3, None)) == 1
    assert [c.id for c in tail] == ids[200:] and more == [False]


def test_an_issue_read_says_when_it_changed_on_the_server_clock(world: World) -> None:
    """Claimers compare the issue's own update time with the read's Date (whole seconds)."""
    gh = world.gh
    n = world.create_issue("changes")
    world.advance(2)
    first, _ = gh.get_issue(n)
    assert first.updated_at is not None and first.read_at >= first.updated_at - timedelta(seconds=1)
    world.advance(1)
    gh.add_labels(n, ["orion"])
    second, now = gh.get_issue(n)
    assert second.read_at == now
    assert second.updated_at is not None and second.updated_at > first.updated_at
    world.advance(1)
    gh.post_comment(n, "hello")
    third, _ = gh.get_issue(n)
    assert third.updated_at is not None and third.updated_at > second.updated_at


def test_edit_moves_updated_at_and_the_server_clock_advances(world: World) -> None:
    gh = world.gh
    n = world.create_issue("edits")
    posted = gh.post_comment(n, "v1")
    _, before = gh.get_comment(posted.id)
    world.advance(1)
    edited = gh.edit_comment(posted.id, "v2")
    assert edited.id == posted.id and edited.body == "v2" and edited.issue == n
    assert edited.created_at == posted.created_at
    assert edited.updated_at > posted.updated_at
    got, after = gh.get_comment(posted.id)
    assert (got.body, got.updated_at) == ("v2", edited.updated_at)
    assert after >= before + timedelta(seconds=1)
    listed, _ = gh.list_comments(n)
    assert [(c.body, c.updated_at) for c in listed] == [("v2", edited.updated_at)]
    assert gh.get_issue(n)[0].comments == 1  # an edit adds no comment


def test_list_repo_comments_since_spans_issues_with_numbers(world: World) -> None:
    gh = world.gh
    a, b = world.create_issue("a"), world.create_issue("b")
    old = gh.post_comment(a, "old")
    untouched = gh.post_comment(b, "untouched")
    world.advance(1)
    _, since = gh.get_issue(a)
    assert since > old.updated_at
    on_b = gh.post_comment(b, "new on b")
    theirs = world.comment(a, "new on a, by someone else", outsider=True)
    gh.edit_comment(old.id, "old, edited")
    found, now = gh.list_repo_comments(since)
    assert {(c.id, c.issue, c.body) for c in found} == {
        (on_b.id, b, "new on b"), (theirs, a, "new on a, by someone else"), (old.id, a, "old, edited")}
    # by update time; equal stamps (the same millisecond, or a second on GitHub) by id
    assert found == sorted(found, key=lambda c: (c.updated_at, c.id))
    assert untouched.id not in {c.id for c in found}
    assert all(c.updated_at >= since for c in found) and now >= since
    exact, _ = gh.list_repo_comments(found[0].updated_at)  # at `since` counts
    assert found[0].id in {c.id for c in exact}
    assert gh.list_repo_comments(now + timedelta(hours=1))[0] == []
    gh.delete_comment(on_b.id)
    assert on_b.id not in {c.id for c in gh.list_repo_comments(since)[0]}


def test_clones_share_the_repository_not_the_counters(world: World) -> None:
    gh = world.gh
    n = world.create_issue("twins")
    twin = gh.clone()
    posted = twin.post_comment(n, "by the twin")
    assert twin.requests == 1 and gh.requests == 0
    assert gh.get_comment(posted.id)[0].body == "by the twin"
    assert twin.full_name == gh.full_name
    twin.close()


def test_no_request_starts_after_the_deadline(world: World) -> None:
    gh = world.gh
    n = world.create_issue("late")
    clock = _WorldClock(world)
    with gh.bounded(Policy(clock, world.monotonic() + 3600)):
        gh.get_issue(n)
    with gh.bounded(Policy(clock, world.monotonic())), pytest.raises(Unavailable):
        gh.post_comment(n, "too late")
    assert gh.requests == 1
    assert gh.get_issue(n)[0].comments == 0


class _WorldClock:
    """The world's clock as a `ports.Clock`, to bound calls on it."""

    def __init__(self, world: World):
        self.monotonic = world.monotonic


def test_workflow_dispatch_and_its_runs(world: World) -> None:
    gh = world.gh
    with pytest.raises(NotFound):
        gh.dispatch_workflow("orion-worker.yml", {"issue": "7"})  # no such workflow file
    world.add_workflow("orion-worker.yml")
    assert gh.list_workflow_runs("orion-worker.yml", "queued") == []
    spent = _spent(gh, lambda: gh.dispatch_workflow("orion-worker.yml", {"issue": "7"}))
    assert spent == 1  # the default branch was read by the failed call above and kept
    assert _spent(gh, lambda: gh.dispatch_workflow("orion-worker.yml", {"issue": "8"})) == 1
    sent = world.dispatches()
    assert [(d["workflow"], d["ref"], d["inputs"]) for d in sent] == [
        ("orion-worker.yml", "main", {"issue": "7"}),
        ("orion-worker.yml", "main", {"issue": "8"}),
    ]
    queued = gh.list_workflow_runs("orion-worker.yml", "queued")
    assert [r.title for r in queued] == ["orion worker #8", "orion worker #7"]  # newest first
    assert all(r.status == "queued" for r in queued)
    world.set_workflow_run(queued[1].id, "in_progress")
    assert [r.title for r in gh.list_workflow_runs("orion-worker.yml", "queued")] == ["orion worker #8"]
    assert [r.id for r in gh.list_workflow_runs("orion-worker.yml", "in_progress")] == [queued[1].id]
    assert _spent(gh, lambda: gh.list_workflow_runs("orion-worker.yml", "in_progress")) == 1


def _free(gh: GitHubPort, call: Callable[[], object]) -> tuple[bool, object]:
    """Make one single-request read: (whether it was answered 304 and not charged, its answer)."""
    requests, not_modified = gh.requests, gh.not_modified
    answer = call()
    assert gh.requests == requests + 1
    return gh.not_modified == not_modified + 1, answer


def test_conditional_reads_are_free_until_what_they_return_changes(world: World) -> None:
    """ADR 0044. GitHub documents that a conditional GET whose resource did not change is
    answered 304 and not charged, and that an ETag stands for what the response returns: an
    issue's read changes with its labels and its comment count, a comment listing with every
    comment on the page (posted, edited, deleted). Whether a comment edit changes the issue's
    ETag is not documented, so nothing relies on it and this does not assert it."""
    gh = world.gh
    n = world.create_issue("conditional reads")
    first = world.comment(n, "first")
    issue, _ = gh.get_issue(n)
    gh.list_comments(n)

    free, (again, _) = _free(gh, lambda: gh.get_issue(n))  # type: ignore[misc]
    assert free and again.labels == issue.labels and again.comments == 1
    free, (listed, _) = _free(gh, lambda: gh.list_comments(n))  # type: ignore[misc]
    assert free and [c.id for c in listed] == [first] and listed[0].body == "first"

    world.add_label(n, "etag-label")
    free, (issue, _) = _free(gh, lambda: gh.get_issue(n))  # type: ignore[misc]
    assert not free and "etag-label" in issue.labels
    assert _free(gh, lambda: gh.list_comments(n))[0]  # the listing does not show labels

    second = world.comment(n, "second", outsider=True)
    free, (issue, _) = _free(gh, lambda: gh.get_issue(n))  # type: ignore[misc]
    assert not free and issue.comments == 2
    free, (listed, _) = _free(gh, lambda: gh.list_comments(n))  # type: ignore[misc]
    assert not free and [c.id for c in listed] == [first, second]

    world.edit_comment(first, "edited")
    free, (listed, _) = _free(gh, lambda: gh.list_comments(n))  # type: ignore[misc]
    assert not free and listed[0].body == "edited"
    gh.get_issue(n)  # whatever the edit did to the issue's ETag, the next read compares to now

    world.delete_comment(first)
    free, (issue, _) = _free(gh, lambda: gh.get_issue(n))  # type: ignore[misc]
    assert not free and issue.comments == 1
    free, (listed, _) = _free(gh, lambda: gh.list_comments(n))  # type: ignore[misc]
    assert not free and [c.id for c in listed] == [second]
    assert _free(gh, lambda: gh.list_comments(n))[0] and _free(gh, lambda: gh.get_issue(n))[0]


def test_a_twin_reads_free_what_the_other_read_last(world: World) -> None:
    """Issue 19: the heartbeat's client and the run's share their validators, so the ending's
    reads of an issue and a listing the last beat read unchanged are answered 304 (free)."""
    gh = world.gh
    n = world.create_issue("twins")
    world.comment(n, "first")
    beat = gh.clone()
    beat.get_issue(n)
    beat.list_comments(n)
    assert _free(gh, lambda: gh.get_issue(n))[0] and _free(gh, lambda: gh.list_comments(n))[0]
    world.add_label(n, "twin-label")
    free, (issue, _) = _free(gh, lambda: gh.get_issue(n))  # type: ignore[misc]
    assert not free and "twin-label" in issue.labels
    assert _free(beat, lambda: beat.get_issue(n))[0]  # and back: the run's read serves the twin

