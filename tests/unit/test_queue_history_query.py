"""The trigger check's one GraphQL read (adapters/github.py queue_history, ADR 0046): pages of
timeline items newest first, joined oldest first; an answer that is not the history is an error."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from orion_action.adapters.github import GitHubRepo
from orion_action.errors import GitHubError


def labelled(i: int, label: str = "orion", login: str = "maintainer") -> dict[str, Any]:
    return {"__typename": "LabeledEvent", "id": f"LE_{i}", "createdAt": f"2026-01-01T00:{i:02d}:00Z",
            "label": {"name": label}, "actor": {"login": login, "databaseId": 7}}


def unlabelled(i: int, label: str = "orion-cancel", login: str | None = "orion-bot") -> dict[str, Any]:
    return {"__typename": "UnlabeledEvent", "createdAt": f"2026-01-01T00:{i:02d}:00Z",
            "label": {"name": label}, "actor": None if login is None else {"login": login}}


def answer(nodes: list[Any], more: bool = False, cursor: str | None = None,
           edited: str | None = None) -> dict[str, Any]:
    timeline = {"pageInfo": {"hasPreviousPage": more, "startCursor": cursor}, "nodes": nodes}
    return {"data": {"repository": {"issue": {"lastEditedAt": edited, "timelineItems": timeline}}}}


def repo_answering(monkeypatch: pytest.MonkeyPatch, answers: list[Any]) -> tuple[GitHubRepo, list[Any]]:
    repo = GitHubRepo("o/r", "token", "http://localhost:1")
    asked: list[Any] = []

    def request(verb: str, url: str, params: Any = None, body: Any = None, **_: Any) -> tuple[dict, Any]:
        asked.append(body["variables"]["before"])
        return {}, answers.pop(0)

    monkeypatch.setattr(repo, "_request", request)
    return repo, asked


def test_one_query_gives_who_queued_and_the_last_change(monkeypatch: pytest.MonkeyPatch) -> None:
    renamed = {"__typename": "RenamedTitleEvent", "createdAt": "2026-01-01T00:30:00Z"}
    repo, asked = repo_answering(monkeypatch, [
        answer([labelled(1), labelled(2, "bug"), renamed, labelled(3, "ORION", "triager")],
               edited="2026-01-01T00:20:00Z")])
    history = repo.queue_history(5, "orion")
    assert asked == [None]  # one request
    assert [(q.login, q.event_id) for q in history.labelled] == [("maintainer", "LE_1"), ("triager", "LE_3")]
    assert history.text_changed_at == datetime(2026, 1, 1, 0, 30, tzinfo=timezone.utc)  # the rename


def test_older_pages_are_read_before_the_cursor_and_go_first(monkeypatch: pytest.MonkeyPatch) -> None:
    repo, asked = repo_answering(monkeypatch, [answer([labelled(5)], more=True, cursor="c5"),
                                               answer([labelled(1)], more=False, cursor="c1")])
    history = repo.queue_history(5, "orion")
    assert asked == [None, "c5"]
    assert [q.event_id for q in history.labelled] == ["LE_1", "LE_5"]
    assert history.text_changed_at is None


def test_the_same_query_gives_the_queue_and_cancel_label_events_in_order(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """ADR 0061: the `labeled` and `unlabeled` events of both labels, from every page, oldest
    first; other labels' events are left out; an actor GitHub no longer names reads as ""."""
    repo, asked = repo_answering(monkeypatch, [
        answer([labelled(3, "orion-cancel", "alice"), unlabelled(4), unlabelled(5, "bug")],
               more=True, cursor="c3"),
        answer([labelled(1), unlabelled(2, "orion", None)])])
    history = repo.queue_history(5, "orion", "orion-cancel")
    assert asked == [None, "c3"]
    assert [(e.label, e.added, e.login, e.at.minute) for e in history.label_events] == [
        ("orion", True, "maintainer", 1), ("orion", False, "", 2), ("orion-cancel", True, "alice", 3),
        ("orion-cancel", False, "orion-bot", 4)]
    assert [q.event_id for q in history.labelled] == ["LE_1"]


@pytest.mark.parametrize("bad", [
    {"data": None, "errors": [{"message": "Something went wrong"}]},
    {"data": {"repository": {"issue": None}}},
    answer("not a list"),  # type: ignore[arg-type]
    answer([], more=True, cursor=None),
    answer([labelled(1, login="not a login!")]),
    answer([{**labelled(1), "id": 42}]),
    answer([{**labelled(1), "createdAt": "yesterday"}]),
    answer([unlabelled(1, "orion", "not a login!")]),
    answer([{**unlabelled(1, "orion"), "createdAt": None}]),
])
def test_an_answer_that_is_not_the_history_is_an_error(monkeypatch: pytest.MonkeyPatch, bad: Any) -> None:
    repo, _ = repo_answering(monkeypatch, [bad])
    with pytest.raises(GitHubError):
        repo.queue_history(5, "orion", "orion-cancel")


def test_a_bot_is_named_as_rest_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """GraphQL names a Bot by its slug (`github-actions`), REST and comments as
    `github-actions[bot]`: orion's own label writes must read as orion's (ADRs 0061, 0065).
    A User named like a bot's slug keeps its name."""
    bot = {"__typename": "Bot", "login": "github-actions"}
    repo, _ = repo_answering(monkeypatch, [answer([
        {**labelled(1), "actor": {**bot, "databaseId": 41898282}},
        {**unlabelled(2, "orion-working"), "actor": bot},
        {**unlabelled(3, "orion-working"), "actor": {"__typename": "Bot", "login": "my-app[bot]"}},
        {**unlabelled(4, "orion-working"), "actor": {"__typename": "User", "login": "my-app"}}])])
    history = repo.queue_history(5, "orion", "orion-working")
    assert [q.login for q in history.labelled] == ["github-actions[bot]"]
    assert [e.login for e in history.label_events] == [
        "github-actions[bot]", "github-actions[bot]", "my-app[bot]", "my-app"]


def issue_fields(labels: int = 1) -> dict[str, Any]:
    names = [{"name": "orion" if i == 0 else f"l{i}", "description": None} for i in range(labels)]
    return {"number": 5, "state": "OPEN", "title": "Fix it", "body": "teh",
            "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:01:00Z",
            "author": {"login": "alice"}, "comments": {"totalCount": 2},
            "labels": {"totalCount": labels, "nodes": names[:100]}}


def test_the_same_query_reads_the_issue_dated_early_by_what_it_took_beyond_a_second(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """ADR 0063: a claim by number reads nothing else first. The issue's `read_at` is GitHub's
    time less what the query took beyond a second (it read the issue at a moment of its own;
    a REST read's Date is allowed a second)."""
    found = answer([labelled(1)])
    found["data"]["repository"]["issue"].update(issue_fields())
    repo = GitHubRepo("o/r", "token", "http://localhost:1")
    ticks = iter([100.0, 102.5])
    monkeypatch.setattr(repo._clock, "monotonic", lambda: next(ticks))
    monkeypatch.setattr(repo, "_request", lambda *a, **k: ({"Date": "Thu, 01 Jan 2026 00:05:00 GMT"}, found))
    issue = repo.queue_history(5, "orion").issue
    assert issue is not None
    read = (issue.number, issue.is_open, issue.labels, issue.comments, issue.title, issue.body, issue.author)
    assert read == (5, True, frozenset({"orion"}), 2, "Fix it", "teh", "alice")
    assert issue.read_at == datetime(2026, 1, 1, 0, 4, 58, 500000, tzinfo=timezone.utc)  # 1.5 s early
    assert issue.updated_at == datetime(2026, 1, 1, 0, 1, tzinfo=timezone.utc)


def test_an_issue_with_more_labels_than_the_query_reads_is_read_apart(
        monkeypatch: pytest.MonkeyPatch) -> None:
    found = answer([labelled(1)])
    found["data"]["repository"]["issue"].update(issue_fields(labels=101))
    repo, _ = repo_answering(monkeypatch, [found])
    history = repo.queue_history(5, "orion")
    assert history.issue is None and [q.event_id for q in history.labelled] == ["LE_1"]
