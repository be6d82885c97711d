"""services/trigger.py on the in-memory GitHub (docs/adr/0033, 0034): who queued the issue,
what happens to a refused one, and the text the label approved. The issue's events and
permissions are what the test says GitHub answers."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from fakes.memory_github import BOT, MemoryGitHub, MemoryServer

from orion_action.config import Config
from orion_action.errors import NotClaimed
from orion_action.ports import Queued, QueueHistory
from orion_action.services.trigger import EDITED, Refused, approve, check_actor_argument, passes

WRITE = Config(trigger_permission="write")


class GitHub(MemoryGitHub):
    """The in-memory GitHub with the issue's `labeled` events and collaborators' access."""

    def __init__(self, server: MemoryServer, labelled: list[Queued], edited: datetime | None = None,
                 access: dict[str, str] | None = None):
        super().__init__(server)
        self.history = QueueHistory(tuple(labelled), edited)
        self.access = access or {}
        self.asked: list[str] = []

    def queue_history(self, number: int, label: str, cancel: str = "") -> QueueHistory:
        self.asked.append("history")
        return self.history

    def collaborator_permission(self, login: str) -> str:
        self.asked.append(login)
        return self.access.get(login, "none")


def world(*labelled: tuple[str, float], edited: float | None = None,
          access: dict[str, str] | None = None) -> tuple[MemoryServer, GitHub, int, datetime]:
    """An issue queued by `labelled` (login, seconds after the issue was opened)."""
    s = MemoryServer()
    n = s.create_issue("Fix a typo", ["orion"], body="teh -> the")
    t0 = s.clock.now
    events = [Queued(login, i, t0 + timedelta(seconds=at), f"LE_{100 + i}")
              for i, (login, at) in enumerate(labelled)]
    at_edit = None if edited is None else t0 + timedelta(seconds=edited)
    return s, GitHub(s, events, at_edit, access), n, t0


def check(gh: GitHub, n: int, read_at: datetime, actor: str | None = None,
          lines: list[str] | None = None) -> None:
    approve(gh, WRITE, n, read_at, actor, (lines if lines is not None else []).append, lambda: BOT)


def refusals(s: MemoryServer, n: int) -> list[str]:
    return [c.body for c in s.comments(n) if "orion did not start a run" in c.body]


def test_a_writers_label_passes() -> None:
    s, gh, n, t0 = world(("maintainer", 5), access={"maintainer": "write"})
    lines: list[str] = []
    check(gh, n, t0 + timedelta(seconds=9), lines=lines)
    assert lines == ["trigger: maintainer has write access (trigger.permission: write); "
                     "the text is as queued"]
    assert "orion" in s.issue(n).labels and not refusals(s, n)


def test_a_triagers_label_is_refused_the_issue_leaves_the_queue_with_one_comment() -> None:
    s, gh, n, t0 = world(("maintainer", 1), ("triager", 5),
                         access={"maintainer": "admin", "triager": "triage"})
    with pytest.raises(Refused, match="triager") as caught:
        check(gh, n, t0 + timedelta(seconds=9))
    # What to do, in the one line (the r3 review's mistake table).
    assert str(caught.value).endswith("the 'orion' label is off: someone with write access may add it again "
                                      "to run it")
    assert "orion" not in s.issue(n).labels
    (said,) = refusals(s, n)
    assert "`triager` queued this issue and has triage access" in said and "needs write or more" in said
    assert "@" not in said  # no mention: nobody is notified by name
    with pytest.raises(Refused):  # a second claimer racing the first: the label was already off
        check(gh, n, t0 + timedelta(seconds=9))
    assert len(refusals(s, n)) == 1


def test_the_actor_named_by_the_event_is_not_the_authority() -> None:
    s, gh, n, t0 = world(("triager", 5), access={"triager": "triage", "maintainer": "admin"})
    with pytest.raises(Refused):
        check(gh, n, t0 + timedelta(seconds=9), actor="maintainer")
    assert "maintainer" not in gh.asked


def test_orions_own_requeue_without_access_carries_the_approval_before_it() -> None:
    """github-actions[bot] has no access of its own: its label passes the turn back."""
    s, gh, n, t0 = world(("maintainer", 1), (BOT, 5), access={"maintainer": "write"})
    check(gh, n, t0 + timedelta(seconds=9))
    assert gh.asked == ["history", BOT, "maintainer"]


def test_only_orions_own_labels_approve_nothing() -> None:
    s, gh, n, t0 = world((BOT, 1), (BOT, 5))
    with pytest.raises(Refused, match="only orion's own login"):
        check(gh, n, t0 + timedelta(seconds=9))


def test_no_labelled_event_means_no_run_and_the_label_stays() -> None:
    """GitHub's event list may lag a label just added: no run, and the next attempt asks again."""
    s, gh, n, t0 = world()
    with pytest.raises(NotClaimed, match="nobody") as caught:
        check(gh, n, t0 + timedelta(seconds=9))
    assert not isinstance(caught.value, Refused)
    assert "orion" in s.issue(n).labels and not refusals(s, n)


@pytest.mark.parametrize("edited,refused", [(0.5, False), (4.9, False), (5.0, True), (5.4, True), (7, True)],
                         ids=["before", "the second before", "the same instant", "the same second", "after"])
def test_an_edit_at_or_after_the_labels_second_refuses(edited: float, refused: bool) -> None:
    s, gh, n, t0 = world(("maintainer", 5.0), edited=edited, access={"maintainer": "write"})
    t0_whole = t0.replace(microsecond=0)
    assert t0 == t0_whole, "the in-memory clock starts on a whole second"
    if not refused:
        check(gh, n, t0 + timedelta(seconds=9))
        return
    with pytest.raises(Refused, match="edited after it was queued"):
        check(gh, n, t0 + timedelta(seconds=9))
    (said,) = refusals(s, n)
    assert EDITED in said and "orion" not in s.issue(n).labels


def test_text_read_before_the_label_is_not_used() -> None:
    """The claim read the issue before a later label: it stops without refusing, and the next
    attempt reads the text again."""
    s, gh, n, t0 = world(("maintainer", 5), access={"maintainer": "write"})
    with pytest.raises(NotClaimed) as caught:
        check(gh, n, t0 + timedelta(seconds=4))
    assert not isinstance(caught.value, Refused)
    assert "orion" in s.issue(n).labels and not refusals(s, n)


def test_a_history_read_with_the_issue_dates_the_text_by_its_own_stamp() -> None:
    """One query gives no order between the text and the events it reads (ADR 0063): a label
    newer than the issue's own `updated_at` (which every label added moves) is newer than the
    text in hand, whatever the answer's time says; one no newer passes."""
    s, gh, n, t0 = world(("maintainer", 5), access={"maintainer": "write"})
    issue, _ = MemoryGitHub(s).get_issue(n)  # stamped at t0: before the label
    together = QueueHistory(gh.history.labelled, None, (), issue)
    with pytest.raises(NotClaimed) as caught:
        approve(gh, WRITE, n, t0 + timedelta(seconds=9), None, print, lambda: BOT, together)
    assert not isinstance(caught.value, Refused) and "history" not in gh.asked
    s.clock.advance(5)
    s.add_label(n, "orion-p1")  # the issue is stamped again, at the label's second or later
    issue, _ = MemoryGitHub(s).get_issue(n)
    approve(gh, WRITE, n, t0 + timedelta(seconds=9), None, print, lambda: BOT,
            QueueHistory(gh.history.labelled, None, (), issue))
    assert "history" not in gh.asked  # the history read with the issue is the one checked


def test_permission_none_asks_nothing() -> None:
    s, gh, n, t0 = world(("triager", 5), access={"triager": "triage"})
    approve(gh, Config(trigger_permission="none"), n, t0, None, print, lambda: BOT)
    assert gh.asked == [] and gh.requests == 0


def test_dispatch_asks_the_same_check() -> None:
    s, gh, n, _ = world(("triager", 5), access={"triager": "triage"})
    assert passes(gh, WRITE, n, print, lambda: BOT) is False
    s2, gh2, n2, _ = world(("maintainer", 5), access={"maintainer": "maintain"})
    assert passes(gh2, WRITE, n2, print, lambda: BOT) is True


def test_an_empty_actor_is_a_usage_error() -> None:
    from orion_action.errors import UsageError

    with pytest.raises(UsageError):
        check_actor_argument("")
    check_actor_argument(None)
    check_actor_argument("mallory")


def test_every_claim_passes_the_check_before_posting_anything() -> None:
    """Claimer.claim runs the check first, on the issue as it read it (the text the command
    gets): `--next` moves past a refused issue to the next one, having posted nothing on it."""
    from test_outage_holding import ServerTime

    from orion_action.adapters import machine as local
    from orion_action.services.claiming import Claimer

    s = MemoryServer()
    refused = s.create_issue("queued by a triager", ["orion"])
    approved = s.create_issue("queued by a maintainer", ["orion"])
    s.clock.advance(5)
    gh = GitHub(s, [])
    by = {refused: Queued("triager", 1, s.clock.start, "LE_1"),
          approved: Queued("maintainer", 2, s.clock.start, "LE_2")}
    gh.access = {"triager": "triage", "maintainer": "write"}
    gh.queue_history = lambda number, label, cancel="": QueueHistory((by[number],), None)  # type: ignore[method-assign]
    config = Config(heartbeat_interval=10.0, stale_after=60.0, source="test")
    claimer = Claimer(gh, config, print, ServerTime(s), local.this_machine(), local.this_holder(), None,
                      lambda: None, sight=local.sight)
    claimer.approval = lambda repo, issue, history: approve(repo, config, issue.number, issue.read_at, None,
                                                            print, lambda: BOT, history)
    claim = claimer.claim_next(None)
    assert claim.number == approved and gh.asked == ["triager", "maintainer"]
    assert [c.body for c in s.comments(refused)] == refusals(s, refused)  # no claim was posted there
    assert "orion" not in s.issue(refused).labels


def test_next_posts_nothing_on_an_issue_the_checks_read_shows_taken() -> None:
    """ADR 0063: the check's query reads the issue after the listing `--next` chose it from; an
    issue another claim has locked since is passed over before anything is posted on it."""
    from test_outage_holding import ServerTime

    from orion_action.adapters import machine as local
    from orion_action.services.claiming import Claimer

    s = MemoryServer()
    s.permissions["maintainer"] = "write"
    head = s.create_issue("taken meanwhile")
    after = s.create_issue("free")
    for n in (head, after):
        s.add_label(n, "orion", "maintainer")
    s.clock.advance(5)
    gh = MemoryGitHub(s)

    def rival(op: str, args: tuple[object, ...]) -> None:
        if op == "queue_history" and args[0] == head and "orion-working" not in s.issue(head).labels:
            s.add_label(head, "orion-working", BOT)  # another worker's lock, just before our query

    s.on_call = rival
    config = Config(heartbeat_interval=10.0, stale_after=60.0, trigger_permission="write", source="test")
    claimer = Claimer(gh, config, print, ServerTime(s), local.this_machine(), local.this_holder(), None,
                      lambda: None, sight=local.sight)
    claimer.approval = lambda repo, issue, history: approve(
        repo, config, issue.number, issue.read_at, None, print, lambda: BOT, history)
    claimer.read_queued = lambda repo, number: repo.queue_history(number, "orion", "orion-cancel")
    asked: list[str] = []
    s.on_call = lambda op, args: (rival(op, args), asked.append(op))  # type: ignore[func-returns-value]
    claim = claimer.claim_next(None)
    assert claim.number == after
    # The head cost one query: no access look-up, no post; the issue after it the whole claim.
    assert asked[:4] == ["list_issues", "queue_history", "queue_history", "collaborator_permission"]
    assert s.comments(head) == []  # no claim, no lost record, no lock of ours on the head


def _cancelled_world(remover: str) -> tuple[MemoryServer, MemoryGitHub, int]:
    """A maintainer queues an issue and a person cancels it; `remover` takes the cancel label
    off (orion's sweep after a pause, or the person withdrawing it). Events as GitHub records them."""
    s = MemoryServer()
    s.permissions["maintainer"] = "write"
    n = s.create_issue("Fix a typo", [])
    s.add_label(n, "orion", "maintainer")
    s.add_label(n, "orion-cancel", "alice")
    s.remove_label(n, "orion-cancel", remover)
    s.clock.advance(5)
    return s, MemoryGitHub(s), n


def test_a_cancel_the_sweep_took_off_still_stands_and_the_issue_leaves_the_queue() -> None:
    """ADR 0061: the cancel label is gone but orion took it off, not a person: no run, the
    queue label comes off as the sweep's would, in one request, and the line says who cancelled."""
    s, gh, n = _cancelled_world(BOT)
    with pytest.raises(NotClaimed, match=r"#1 was cancelled: `alice` added the 'orion-cancel' lab") as caught:
        approve(gh, WRITE, n, s.clock.now, None, print, lambda: BOT)
    assert "\n" not in str(caught.value) and not isinstance(caught.value, Refused)
    assert "orion" not in s.issue(n).labels and not s.comments(n)


def test_a_cancel_a_person_withdrew_does_not_stand() -> None:
    s, gh, n = _cancelled_world("alice")
    approve(gh, WRITE, n, s.clock.now, None, print, lambda: BOT)
    assert "orion" in s.issue(n).labels


def test_a_cancel_before_a_persons_latest_queueing_does_not_stand_and_asks_the_login_once() -> None:
    """Whether the latest queueing is a person's takes orion's login (ADR 0085): asked once, and
    only for an issue that was ever cancelled."""
    s, gh, n = _cancelled_world(BOT)
    s.add_label(n, "orion", "maintainer")  # already on: GitHub records nothing
    s.remove_label(n, "orion", "maintainer")
    s.add_label(n, "orion", "maintainer")
    asked: list[str] = []
    approve(gh, WRITE, n, s.clock.now, None, print, lambda: asked.append("own") or BOT)  # type: ignore[func-returns-value]
    assert asked == ["own"] and "orion" in s.issue(n).labels


def test_a_never_cancelled_issue_asks_no_login() -> None:
    s = MemoryServer()
    s.permissions["maintainer"] = "write"
    n = s.create_issue("Fix a typo", [])
    s.add_label(n, "orion", "maintainer")
    gh = MemoryGitHub(s)
    asked: list[str] = []
    approve(gh, WRITE, n, s.clock.now, None, print, lambda: asked.append("own") or BOT)  # type: ignore[func-returns-value]
    assert asked == []


def test_orions_requeue_after_a_cancel_it_carried_out_leaves_the_cancel_standing() -> None:
    """ADR 0085 (`requeue-over-cancel`): a pass's requeue, planned before the cancel, lands after
    another pass carried the cancel out. orion's queue label is no person's wish: no run, the
    label comes off, and the line names the cancel."""
    s, gh, n = _cancelled_world(BOT)
    s.remove_label(n, "orion", BOT)
    s.add_label(n, "orion", BOT)
    with pytest.raises(NotClaimed, match=r"#1 was cancelled: `alice` added the 'orion-cancel' lab") as caught:
        approve(gh, WRITE, n, s.clock.now, None, print, lambda: BOT)
    assert not isinstance(caught.value, Refused) and "orion" not in s.issue(n).labels


def test_a_persons_queueing_after_orions_stale_requeue_runs() -> None:
    s, gh, n = _cancelled_world(BOT)
    s.remove_label(n, "orion", BOT)
    s.add_label(n, "orion", BOT)
    s.remove_label(n, "orion", "maintainer")
    s.add_label(n, "orion", "maintainer")
    approve(gh, WRITE, n, s.clock.now, None, print, lambda: BOT)
    assert "orion" in s.issue(n).labels


def test_a_record_that_lags_the_requeue_decides_nothing_and_the_label_stays() -> None:
    """GitHub's events may lag a label just added: a record whose queue label is still off (an
    older cancel carried out, the requeue not listed yet) refuses nothing and takes nothing off."""
    s, gh, n = _cancelled_world(BOT)
    s.remove_label(n, "orion", BOT)
    lagging = s.history(n, "orion", "orion-cancel")
    s.add_label(n, "orion", "maintainer")
    gh.queue_history = lambda number, label, cancel="": lagging  # type: ignore[method-assign]
    with pytest.raises(NotClaimed, match="do not show its 'orion' label yet") as caught:
        approve(gh, WRITE, n, s.clock.now, None, print, lambda: BOT)
    assert not isinstance(caught.value, Refused) and "orion" in s.issue(n).labels
