"""A claim after a cancelled run runs only a person's queueing since that run (ADR 0105): the
real Claimer on the in-memory GitHub, whose record of the queue label says who added it. A stale
requeue of orion's that landed after the run's cancel ending read the labels (the model's
`claimer_takes_a_stale_requeue_left_by_a_cancel_ending`) is taken off, and nothing runs."""

from __future__ import annotations

import pytest
from fakes.memory_github import BOT, PERSON, MemoryServer
from test_claim_holes import Landing

from orion_action.config import Config
from orion_action.core.issue import read_log, trusted_set
from orion_action.core.liveness import Machine
from orion_action.core.record import ClaimRecord, Holder, State, render_record
from orion_action.errors import AuthError, NotClaimed, Unavailable
from orion_action.ports import GitHubPort
from orion_action.services.claiming import Claimer

CONFIG = Config(heartbeat_interval=10.0, stale_after=60.0, max_attempts=3, trigger_permission="none",
                source="test")
LAB = CONFIG.labels
TRUSTED = trusted_set(BOT, ())
HOLDER = Holder("w", "w-boot", "w-id", "w-ns", 20, 20.0)


def ended_run(state: State = State.CANCELLED, queued_by: str = BOT) -> tuple[MemoryServer, int]:
    """Issue 1: a person queued it, a run claimed it, took the queue label and ended `state`;
    then `queued_by` put the queue label back on."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    ended = ClaimRecord(token="a" * 24, state=state, holder=HOLDER, started_at="s", heartbeat_at="h",
                        child_pid=77, exit_code=0 if state is State.FINISHED else None)
    s.comment(n, render_record(ended), login=BOT)
    s.clock.advance(2)
    s.remove_label(n, LAB.queue, login=BOT)  # the run's unqueue
    s.clock.advance(30)
    s.add_label(n, LAB.queue, login=queued_by)
    s.clock.advance(5)
    return s, n


def claimer(gh: GitHubPort, s: MemoryServer) -> Claimer:
    here = Machine(host="w", boot_id="w-boot", machine_id="w-id", pid_ns="w-ns")
    return Claimer(gh, CONFIG, lambda _line: None, Landing(s), here, HOLDER, sight=lambda _pid, _child: None)


def claim(s: MemoryServer, n: int, gh: GitHubPort | None = None, with_history: bool = False) -> State:
    """Claim issue n; the state our claim's record ends in (running: it won)."""
    gh = gh or s.client()
    c = claimer(gh, s)
    issue, _ = gh.get_issue(n)
    history = gh.queue_history(n, LAB.queue, LAB.cancel) if with_history else None
    try:
        won = c.claim(issue, None, history)
    except NotClaimed:
        ours = read_log(s.comments(n), TRUSTED).claims[-1]
        return ours.record.state
    return won.record.state


def test_orions_requeue_after_a_cancelled_run_is_taken_off_and_nothing_runs() -> None:
    s, n = ended_run()
    assert claim(s, n) is State.LOST
    assert not s.issue(n).labels & {LAB.queue, LAB.working}, s.issue(n).labels
    ours = read_log(s.comments(n), TRUSTED).claims[-1]
    assert "only orion added" in (ours.record.note or "")


def test_a_persons_queueing_after_a_cancelled_run_runs() -> None:
    s, n = ended_run(queued_by=PERSON)
    assert claim(s, n) is State.RUNNING
    assert s.issue(n).labels & {LAB.queue, LAB.working} == {LAB.working}


@pytest.mark.parametrize("state", [State.FINISHED, State.INTERRUPTED])
def test_orions_queueing_after_a_run_that_was_not_cancelled_runs(state: State) -> None:
    """A hand-back or a pass's requeue of a run that ended otherwise is orion's to make."""
    s, n = ended_run(state)
    assert claim(s, n) is State.RUNNING


def test_the_trigger_checks_record_is_read_again_by_nobody() -> None:
    """With the trigger check's record in hand, the claim asks GitHub nothing more."""
    s, n = ended_run()
    asked: list[str] = []
    s.on_call = lambda op, _args: asked.append(op)
    assert claim(s, n, with_history=True) is State.LOST
    assert asked.count("queue_history") == 1 and not s.issue(n).labels & {LAB.queue, LAB.working}


@pytest.mark.parametrize(("error", "raised"), [
    (Unavailable("GitHub answered 502 three times"), NotClaimed),
    (AuthError("GitHub refused the token (401)"), AuthError),  # as it is: exit 64, a bad token, not 75
])
def test_a_record_that_cannot_be_read_runs_nothing_and_leaves_the_label(error: Exception,
                                                                         raised: type[Exception]) -> None:
    """The claim gives up first, whatever stops the read."""
    s, n = ended_run()
    gh = s.client()

    def fails(*_args: object) -> None:
        raise error

    gh.queue_history = fails  # type: ignore[method-assign]
    issue, _ = gh.get_issue(n)
    with pytest.raises(raised):
        claimer(gh, s).claim(issue, None)
    assert read_log(s.comments(n), TRUSTED).claims[-1].record.state is State.LOST
    assert s.issue(n).labels & {LAB.queue, LAB.working} == {LAB.queue}


def test_a_record_that_lags_the_label_runs_nothing_and_leaves_it() -> None:
    """GitHub's record ends at the run's unqueue: who put the label back is not known yet."""
    s, n = ended_run()
    s.label_events.pop()  # the addition, not listed yet
    assert claim(s, n) is State.LOST
    assert s.issue(n).labels & {LAB.queue, LAB.working} == {LAB.queue}
    ours = read_log(s.comments(n), TRUSTED).claims[-1]
    assert "does not show who queued" in (ours.record.note or "")
