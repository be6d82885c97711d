"""The claim-side holes of the hostile model (issue 15, ADRs 0066 and 0067): a claim made after a
person's cancel starts no child (the lock write's answer lists the cancel label), and a winner
whose unqueue goes unanswered keeps its claim, starting nothing, until that removal has landed
or never will, then says on its `lost` record that it sent it, so that a pass gives back the
queueing it may have taken (core/plan.py QUEUEING_OWED)."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import timedelta

import pytest
from fakes.memory_github import BOT, MemoryServer, ServerTime

from orion_action.config import Config, Labels
from orion_action.core.arbitration import cancelled_at_lock
from orion_action.core.issue import read_log, trusted_set
from orion_action.core.liveness import Machine
from orion_action.core.plan import Action, Fate, fate, plan_issue
from orion_action.core.record import Holder, State
from orion_action.core.survey import Survey
from orion_action.errors import GitHubError, NotClaimed
from orion_action.services.claiming import UNQUEUE_LANDED_S, Claimer
from orion_action.services.reconcile import Reconciler

CONFIG = Config(heartbeat_interval=10.0, stale_after=60.0, max_attempts=3, source="test")
LAB = CONFIG.labels
ME = threading.current_thread().name  # the actor whose requests fail_next fails
TRUSTED = trusted_set(BOT, ())


class Landing(ServerTime):
    """The server's clock; a sleep lets GitHub apply each late write at its time (a write whose
    time passed unapplied is dropped)."""

    def sleep(self, seconds: float, wake: threading.Event | None = None) -> bool:
        end = self.server.clock.monotonic() + max(0.0, seconds)
        while (due := self.server.next_landing()) is not None and due <= self.server.clock.now + \
                timedelta(seconds=end - self.server.clock.monotonic()):
            self.server.clock.advance(max(0.0, (due - self.server.clock.now).total_seconds()))
            self.server.land_due()
        self.server.clock.advance(max(0.0, end - self.server.clock.monotonic()))
        return False


def claimer(s: MemoryServer) -> Claimer:
    here = Machine(host="w", boot_id="w-boot", machine_id="w-id", pid_ns="w-ns")
    holder = Holder("w", "w-boot", "w-id", "w-ns", 20, 20.0)
    return Claimer(s.client(), CONFIG, lambda _line: None, Landing(s), here, holder,
                   sight=lambda _pid, _child: None)


@pytest.mark.parametrize(
    ("after_lock", "gives_up"),
    [
        (frozenset({LAB.working, LAB.queue}), False),
        (frozenset({LAB.working, LAB.queue, "bug"}), False),
        (frozenset({LAB.working, LAB.queue, LAB.cancel}), True),
        (frozenset({LAB.working, LAB.cancel}), True),  # the sweep took the queue label: cancelled still
        (frozenset(), False),  # nothing sent, nothing read
    ],
)
def test_the_lock_answer_decides_on_the_cancel_label(after_lock: frozenset[str], gives_up: bool) -> None:
    why = cancelled_at_lock(after_lock, LAB)
    assert (why is not None) is gives_up
    assert why is None or LAB.cancel in why
    other = Labels(cancel="stop-it")
    assert cancelled_at_lock(frozenset({LAB.working, "stop-it"}), other) is not None


def test_a_cancel_made_while_the_claim_is_made_starts_nothing() -> None:
    """The model's (28, 99): the claimer reads the issue as queued and posts its claim; a person
    cancels; the claimer's lock lands beside the cancel label. Its answer lists the label: the
    claimer gives up before its `running` edit and its unqueue, takes its lock off (the queue
    label stays, for the cancel sweep) and runs nothing."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])

    def hook(op: str, args: tuple[object, ...]) -> None:
        if op == "add_labels" and LAB.working in args[1]:  # type: ignore[operator]
            s.add_label(n, LAB.cancel)  # a person, just before the lock lands

    s.on_call = hook
    with pytest.raises(NotClaimed, match="cancelled it while the claim was being made"):
        claimer(s).claim_number(n, None)
    s.on_call = None
    record = read_log(s.comments(n), TRUSTED).claims[0].record
    assert record.state is State.LOST and not record.unqueued
    assert s.issue(n).labels == frozenset({LAB.queue, LAB.cancel})


def test_an_unanswered_unqueue_keeps_the_claim_until_it_has_landed_then_the_queueing_is_owed() -> None:
    """A person requeued a finished issue; the next winner's unqueue takes that queueing but goes
    unanswered (GitHub applies it 10 s later). The claim stays `running` (no child) while the
    removal may still land, so no pass requeues it meanwhile; then its `lost` record says it sent
    its unqueue, and the pass puts the queueing back instead of completing the finished run again
    (the model's (18, 58): the person's requeue was lost)."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    sent: list[float] = []
    states: list[tuple[float, State]] = []

    def hook(op: str, args: tuple[object, ...]) -> None:
        if op == "remove_label" and args[1] == LAB.queue and not sent:
            sent.append(s.clock.monotonic())
            s.fail_next(ME, "late")
        if sent:
            states.append((s.clock.monotonic(), read_log(s.comments(n), TRUSTED).claims[0].record.state))

    s.on_call = hook
    with pytest.raises(GitHubError, match="injected late"):
        claimer(s).claim_number(n, None)
    s.on_call = None
    assert all(st is State.RUNNING for t, st in states if t < sent[0] + UNQUEUE_LANDED_S), states
    history = read_log(s.comments(n), TRUSTED)
    record = history.claims[0].record
    assert record.state is State.LOST and record.unqueued and record.child_pid is None
    labels = s.issue(n).labels
    assert labels == frozenset({LAB.working}), "the removal landed: only our lock is left"
    assert fate(labels, history, {}, LAB, 3).fate is Fate.QUEUEING_OWED
    plan = plan_issue(n, True, labels, history, {}, LAB, 3)
    assert plan.action is Action.REQUEUE and plan.add_labels == (LAB.queue,) and not plan.counts_attempt


def test_a_queued_again_plan_leaves_the_labels_once_the_queue_label_went() -> None:
    """The model's (28, 59): a pass lists the lock beside the queue label; a winner's late unqueue
    lands and it gives up (`lost`, `unqueued`); the pass plans "queued again" (lock off, the
    queue label kept) from the labels it listed. Its read before the move shows the queue label
    gone: it leaves the labels (taking the lock off would strand the issue), and the next pass
    gives the queueing back (ADR 0067)."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])

    def unanswered_unqueue(op: str, args: tuple[object, ...]) -> None:
        if op == "remove_label" and args[1] == LAB.queue:
            s.fail_next(ME, "late")

    s.on_call = unanswered_unqueue
    with pytest.raises(GitHubError):
        claimer(s).claim_number(n, None)
    s.on_call = None
    here = Machine(host="pass", boot_id="p-boot", machine_id="p-id", pid_ns="p-ns")
    r = Reconciler(s.client(), CONFIG, lambda _line: None, here=here, sight=lambda _pid, _child: None)
    listed, _ = s.client().get_issue(n)
    stale = replace(listed, labels=frozenset({LAB.working, LAB.queue}))  # as the listing showed it
    survey: Survey = r.survey_issue(stale)
    assert survey.plan.action is Action.REQUEUE and survey.plan.add_labels == ()  # "queued again"
    done = r.execute(survey)
    assert done.action is Action.KEEP and "queue label went" in done.reason
    assert s.issue(n).labels == frozenset({LAB.working})
    again = r.execute(r.survey()[0])
    assert again.action is Action.REQUEUE and again.add_labels == (LAB.queue,)
    assert s.issue(n).labels == frozenset({LAB.queue})
