"""A pass's repairs of the queue go where their plan says (`Plan.run_cancelled`): a cancelled
run's stale queue label (ADR 0103) comes off with no look after; a person's standing cancel
(ADR 0085) comes off with a look at GitHub's record after, which gives back a queueing the
person made meanwhile. Small and fast: `make mutate` runs it for core/plan.py."""

from __future__ import annotations

from fakes.memory_github import PERSON, MemoryServer

from orion_action.config import Config
from orion_action.core.liveness import Machine
from orion_action.core.plan import Action, Plan
from orion_action.services.reconcile import Reconciler

CONFIG = Config(heartbeat_interval=10.0, stale_after=60.0, max_attempts=3, source="test")
LAB = CONFIG.labels


def _withdrawn_cancel() -> tuple[MemoryServer, Reconciler, int]:
    """Queued by a person, who cancelled and took the cancel off again: nothing stands."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    s.add_label(n, LAB.cancel, login=PERSON)
    s.remove_label(n, LAB.cancel, login=PERSON)
    here = Machine(host="hosted", boot_id="b", machine_id="m", pid_ns="ns")
    r = Reconciler(s.client(), CONFIG, lambda _line: None, here=here, sight=lambda _pid, _child: None)
    return s, r, n


def test_a_standing_cancel_plan_looks_after_its_removal() -> None:
    """Planned as a standing cancel, its removal finds none stands in the record (the person took
    it off meanwhile): the queue label goes back (ADR 0085)."""
    s, r, n = _withdrawn_cancel()
    done = r.execute_queue_repair(Plan(n, Action.CANCEL, "a cancel stands", remove_labels=(LAB.queue,)))
    assert done.action is Action.KEEP and "queued the issue again" in done.reason, done.reason
    assert LAB.queue in s.issue(n).labels


def test_a_cancelled_runs_plan_does_not() -> None:
    """Planned from a cancelled run's record (ADR 0103), the label comes off: the record of the
    cancel label has no say."""
    s, r, n = _withdrawn_cancel()
    s.clock.advance(CONFIG.renew_deadline + 30)  # no claim in flight
    plan = Plan(n, Action.CANCEL, "the run was cancelled", remove_labels=(LAB.queue,), run_cancelled=True)
    assert r.execute_queue_repair(plan) == plan
    assert LAB.queue not in s.issue(n).labels
