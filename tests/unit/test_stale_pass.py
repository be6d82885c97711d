"""A reconcile pass does not take the lock off a queued issue whose claim it cannot list yet
(ADR 0049): the lock beside the queue label with no claim listed is a claim in flight whose
comment GitHub's listing still lags, not a leftover. The model found it as `stale-pass-unlock`
(seed 3, episode 24): the pass planned on a list without the claim, the claimer won, and the
pass's late lock removal stranded the issue. Directed on the in-memory GitHub."""

from __future__ import annotations

from fakes.memory_github import BOT, MemoryServer, ServerTime

from orion_action.config import Config
from orion_action.core.issue import read_log, trusted_set
from orion_action.core.liveness import Machine
from orion_action.core.plan import Action, plan_issue
from orion_action.core.record import Holder
from orion_action.services.claiming import Claimer
from orion_action.services.reconcile import Reconciler

CONFIG = Config(heartbeat_interval=10.0, stale_after=60.0, max_attempts=3, source="test")
LAB = CONFIG.labels


def machine(name: str) -> Machine:
    return Machine(host=name, boot_id=f"{name}-boot", machine_id=f"{name}-id", pid_ns=f"{name}-ns")


def test_the_lock_beside_the_queue_label_with_no_claim_listed_is_left_alone() -> None:
    empty = read_log([], trusted_set(BOT, ()))
    plan = plan_issue(1, True, frozenset({LAB.queue, LAB.working}), empty, {}, LAB, 3)
    assert plan.action is Action.REPORT and not plan.writes
    assert "no claim is listed yet" in plan.reason


def test_a_pass_during_a_claim_whose_comment_lags_does_not_strand_it() -> None:
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    claimer = Claimer(s.client(), CONFIG, lambda _line: None, ServerTime(s), machine("a"),
                      Holder("a", "a-boot", "a-id", "a-ns", 10, 10.0), sight=lambda _pid, _child: None)
    done: list[str] = []

    def pass_meanwhile(name: str, args: tuple[object, ...]) -> None:
        if name != "add_labels" or done:
            return
        s.hide(max(c.id for c in s.comments(n)), 5.0)  # our claim, posted just now, is not listed
        s.on_call = None
        r = Reconciler(s.client(), CONFIG, lambda _line: None, here=machine("hosted"),
                       sight=lambda _pid, _child: None)
        s.add_label(n, LAB.working)  # the lock this claim is adding, as the pass sees it
        done.extend(r.execute(sv).action.value for sv in r.survey())

    s.on_call = pass_meanwhile
    claim = claimer.claim_number(n, None)
    assert done == ["report"]
    assert s.issue(n).labels == frozenset({LAB.working})  # held by the winner, not stranded
    assert claim.number == n
