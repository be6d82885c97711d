"""A winner whose unqueue finds the queue label already gone does not run (ADR 0048).

With list lag above the settle two claimers can each decide they won: the higher one on a list
still missing the lower claim, the lower one because the higher claim is not an earlier one.
Whichever of them removes the queue label second finds it gone (GitHub answers 404), and that
is the one that must not run: the other one may be running, or may already have run and ended
(the model's seed 945794403, episode 17: the lower claim ran, was cancelled by a signal, and
then the higher claim, acting on its stale decision, ran the same queueing again). Directed
interleavings of the real Claimer on the in-memory GitHub under a virtual clock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from fakes.memory_github import BOT, MemoryServer, ServerTime

from orion_action.config import Config
from orion_action.core.issue import read_log, trusted_set
from orion_action.core.liveness import Machine
from orion_action.core.record import Holder, State
from orion_action.errors import NotClaimed
from orion_action.services.claiming import LIST_SETTLE_S, Claimer
from orion_action.services.reconcile import Reconciler

CONFIG = Config(heartbeat_interval=10.0, stale_after=60.0, max_attempts=3, source="test")
LAB = CONFIG.labels
TRUSTED = trusted_set(BOT, ())


def claimer(s: MemoryServer, name: str, pid: int) -> Claimer:
    """A claimer on its own machine (which sees no other machine's processes)."""
    here = Machine(host=name, boot_id=f"{name}-boot", machine_id=f"{name}-id", pid_ns=f"{name}-ns")
    holder = Holder(name, f"{name}-boot", f"{name}-id", f"{name}-ns", pid, float(pid))
    return Claimer(s.client(), CONFIG, lambda _line: None, ServerTime(s), here, holder,
                   sight=lambda _pid, _child: None)


def before_first(s: MemoryServer, op: str, act: Callable[[tuple[object, ...]], bool]) -> None:
    """Run `act(args)` just before the first request `op` for which it returns True."""
    done = {"yet": False}

    def hook(name: str, args: tuple[object, ...]) -> None:
        if name == op and not done["yet"]:
            done["yet"] = act(args)

    s.on_call = hook


def test_a_stale_winner_does_not_run_a_queueing_another_claim_took() -> None:
    """B decided it won on a list without A's lower claim; before B's unqueue, A won too, took
    the queue label, ran and ended. B must give up (LOST, never ran), not run the issue again."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])

    def a_ran_meanwhile(args: tuple[object, ...]) -> bool:
        if args[1] != LAB.queue:
            return False
        assert s.remove_label(n, LAB.queue)  # the other winner's unqueue landed first
        return True

    before_first(s, "remove_label", a_ran_meanwhile)
    with pytest.raises(NotClaimed, match="queue label was already gone"):
        claimer(s, "b", 20).claim_number(n, None)
    (mine,) = read_log(s.comments(n), TRUSTED).claims
    assert mine.record.state is State.LOST


def lose_the_answer(s: MemoryServer) -> Callable[[tuple[object, ...]], bool]:
    """A hook for `before_first`: the caller's next removal of the queue label lands, its answer
    lost (the client retries, and the retry reads 404)."""

    def lose(args: tuple[object, ...]) -> bool:
        if args[1] != LAB.queue:
            return False
        s.fail_next(threading.current_thread().name, "lost")
        return True

    return lose


@pytest.mark.parametrize("answer_lost", [False, True])
def test_the_lower_claim_that_wins_late_does_not_run_after_the_higher_one(answer_lost: bool) -> None:
    """The lower-claim-wins-late hole: A posts first, but its claim stays out of listings past
    the settle; B (higher) wins without seeing it and runs. A then lists both, and as the lower
    live claim wins by comment order, but B took the queueing: A must not run it again.

    `answer_lost`: A's unqueue lands on the label B already took and its answer is lost, so the
    retry reads 404 after a try that may have landed (the model's GraphQL-mode seed 94 episode
    50: B ran, was cancelled by a signal, and A then ran the same queueing). Whose removal took
    the label is unknown: A lists the comments, finds B's claim, and gives up, its `lost` record
    saying it sent its unqueue (if nothing ran the issue, a pass puts the queueing back, ADR
    0067). Before ADR 0096 that 404 read "mine", and A ran."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    a, b = claimer(s, "a", 10), claimer(s, "b", 20)
    state: dict[str, object] = {"b": None}

    def b_claims_meanwhile(args: tuple[object, ...]) -> bool:
        a_comment = max(c.id for c in s.comments(n))
        s.hide(a_comment, 6 * LIST_SETTLE_S)  # past B's settle (B waits 2 s out first: A is recent)
        s.on_call = None
        state["b"] = b.claim_number(n, None)  # B wins without seeing A, and unqueues
        if answer_lost:
            before_first(s, "remove_label", lose_the_answer(s))
        return True

    before_first(s, "add_labels", b_claims_meanwhile)  # A has posted; B claims before A's settle
    why = "another claim may have taken the queueing" if answer_lost else "queue label was already gone"
    with pytest.raises(NotClaimed, match=why):
        a.claim_number(n, None)
    b_claim = state["b"]
    assert b_claim is not None
    claims = read_log(s.comments(n), TRUSTED).claims
    assert [c.record.state for c in claims] == [State.LOST, State.RUNNING]
    assert claims[1].record.token == b_claim.record.token
    assert claims[0].record.unqueued is answer_lost


def test_a_winner_whose_own_unqueue_answer_was_lost_still_runs() -> None:
    """The unqueue lands but its answer is lost, and the retry reads 404 (the adapter and the
    in-memory GitHub read such a 404 as unknown, ADR 0096). The claimer lists the issue's
    comments: no other claim that may have taken the queueing, so the first try took it, and the
    winner runs. Giving up here would stop every run whose unqueue met a timeout
    (tests/integration/test_run_faults.py, retried label writes are harmless)."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    before_first(s, "remove_label", lose_the_answer(s))
    claim = claimer(s, "a", 10).claim_number(n, None)
    assert claim.record.state is State.RUNNING
    assert s.issue(n).labels == frozenset({LAB.working})


def test_a_claim_released_while_its_unqueue_went_unanswered_does_not_run() -> None:
    """The claimer's unqueue lands, its answer lost; before the retry a person releases the
    claim by hand (`release --force`: tombstone, the lock off, the queue label back), and the
    retry lands on that queue label, its answer lost too; the next retry reads 404. The listing
    the unknown answer makes the claimer read shows its own claim released: it must not run (the
    model's default seed 61 episode 111, a VM paused between the tries). It puts back the queue
    label its retry took (ADR 0025)."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    tries = {"n": 0}

    def release_between_the_tries(name: str, args: tuple[object, ...]) -> None:
        if name != "remove_label" or args[1:] != (LAB.queue,):
            return
        tries["n"] += 1
        if tries["n"] == 2:
            s.on_call = None
            Reconciler(s.client(), CONFIG, lambda _line: None, here=Machine("p", "p-boot", "p-id", "p-ns"),
                       sight=lambda _pid, _child: None).release(n, force=True)
            s.on_call = release_between_the_tries
        if tries["n"] <= 2:
            s.fail_next(threading.current_thread().name, "lost")

    s.on_call = release_between_the_tries
    with pytest.raises(NotClaimed, match="released while it was being made"):
        claimer(s, "a", 10).claim_number(n, None)
    assert tries["n"] == 3
    log = read_log(s.comments(n), TRUSTED)
    assert [c.record.state for c in log.claims] == [State.RUNNING] and len(log.tombstones) == 1
    assert s.issue(n).labels == frozenset({LAB.queue})
