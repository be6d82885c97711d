"""The holder-side holes of the hostile model (issue 15, ADRs 0055 and 0056): a winner whose
unqueue goes unanswered looks at the issue only once that removal has landed or never will; a
holder counts its label-write bound on GitHub's clock too, which a VM pause does not freeze; an
outage record is looked at until a beat in flight has landed, and a look that gets no answer is
tried again."""

from __future__ import annotations

import threading

import pytest
from fakes.memory_github import BOT, MemoryServer, ServerTime

from orion_action.config import Config
from orion_action.core.ending import finished
from orion_action.core.issue import read_log, trusted_set
from orion_action.core.liveness import Machine
from orion_action.core.record import Holder, ReleaseAction, State, Tombstone, render_tombstone
from orion_action.errors import GitHubError
from orion_action.services.claiming import UNQUEUE_LANDED_S, Claimer
from orion_action.services.holding import Holding

CONFIG = Config(heartbeat_interval=10.0, stale_after=60.0, max_attempts=3, source="test")
LAB = CONFIG.labels
ME = threading.current_thread().name  # the actor whose requests fail_next fails


class Landing(ServerTime):
    """The server's clock; a sleep lets GitHub apply the late writes whose time came."""

    def sleep(self, seconds: float, wake: threading.Event | None = None) -> bool:
        super().sleep(seconds, wake)
        self.server.land_due()
        return False


class Paused(ServerTime):
    """A VM's boot clock: it stands still while the VM is paused (`paused` seconds so far)."""

    paused = 0.0

    def monotonic(self) -> float:
        return super().monotonic() - self.paused


def claimer(s: MemoryServer, clock: ServerTime) -> Claimer:
    here = Machine(host="w", boot_id="w-boot", machine_id="w-id", pid_ns="w-ns")
    holder = Holder("w", "w-boot", "w-id", "w-ns", 20, 20.0)
    return Claimer(s.client(), CONFIG, lambda _line: None, clock, here, holder,
                   sight=lambda _pid, _child: None)


def test_an_unanswered_unqueue_is_looked_at_once_it_has_landed() -> None:
    """The winner's queue-label removal goes unanswered and lands 10 s later; meanwhile a pass
    requeues the claim the winner just gave up. Looking at once, the winner would see the queue
    label still on and leave, and the removal would then strand the issue: it looks once the
    removal has landed, and puts the queue label back."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    sent: list[float] = []

    def hook(op: str, args: tuple[object, ...]) -> None:
        if op == "remove_label" and args[1] == LAB.queue and not sent:
            sent.append(s.clock.monotonic())
            s.fail_next(ME, "late")
        elif op == "get_issue" and sent and len(sent) == 1:  # the winner looks: a pass was quicker
            sent.append(s.clock.monotonic())

    s.on_call = hook
    passed: list[int] = []

    def requeue(op: str, args: tuple[object, ...]) -> None:
        hook(op, args)
        if op == "edit_comment" and sent and not passed:  # the winner marks its claim lost
            claim = read_log(s.comments(n), trusted_set(BOT, ())).claims[0]
            tomb = Tombstone(claim.record.token, ReleaseAction.REQUEUE, "it gave up before it ran", False,
                             "reconcile")
            passed.append(s.comment(n, render_tombstone(tomb), BOT))
            s.remove_label(n, LAB.working)

    s.on_call = requeue
    with pytest.raises(GitHubError, match="injected late"):
        claimer(s, Landing(s)).claim_number(n, None)
    assert passed, "the pass did not act"
    assert sent[1] - sent[0] >= UNQUEUE_LANDED_S, "the winner looked before its unqueue could land"
    s.clock.advance(60.0)
    s.land_due()
    assert s.issue(n).labels == frozenset({LAB.queue})


def test_an_ending_resumed_past_presumption_moves_no_label() -> None:
    """The holder's VM pauses 65 s (past stale_after) right after a beat; its boot clock stands
    still, so its lease looks fresh on resume. Its ending must count on GitHub's clock too: a
    pass may have handed the issue back and a next run taken it. It writes its final record
    only, and the pass moves the labels from it."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    clock = Paused(s)
    claim = claimer(s, clock).claim_number(n, None)
    here = Machine(host="w", boot_id="w-boot", machine_id="w-id", pid_ns="w-ns")
    h = Holding(s.client(), claim, CONFIG, lambda _line: None, clock, here, sight=lambda _pid, _child: None)
    h.child_pid = 4242
    h.beat()
    s.clock.advance(65.0)
    clock.paused = 65.0
    assert h.lease_left() > 0, "the boot clock did not stand still"
    with pytest.raises(GitHubError, match="too late for a label write"):
        h.conclude(finished(CONFIG, 0))
    assert s.issue(n).labels == frozenset({LAB.working})


def test_an_ending_in_time_on_both_clocks_moves_the_labels() -> None:
    """The bound on GitHub's clock takes nothing from an ending that comes in time: a pause
    of a few seconds, well within the margin, still lets the ending move the labels."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    clock = Paused(s)
    claim = claimer(s, clock).claim_number(n, None)
    here = Machine(host="w", boot_id="w-boot", machine_id="w-id", pid_ns="w-ns")
    h = Holding(s.client(), claim, CONFIG, lambda _line: None, clock, here, sight=lambda _pid, _child: None)
    h.beat()
    s.clock.advance(30.0)
    clock.paused = 5.0
    assert h.conclude(finished(CONFIG, 0)) is None
    assert s.issue(n).labels == frozenset({LAB.ready})


def outage_holding(clock: ServerTime | None = None) -> tuple[MemoryServer, Holding, str]:
    """A holder past its label-write bound (the outage path records only), and the `running`
    body its last beat wrote: what a late beat would put back."""
    s = clock.server if clock is not None else MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    clock = clock or ServerTime(s)
    here = Machine(host="w", boot_id="w-boot", machine_id="w-id", pid_ns="w-ns")
    h = Holding(s.client(), claimer(s, clock).claim_number(n, None), CONFIG, lambda _line: None, clock, here,
                sight=lambda _pid, _child: None)
    h.child_pid = 4242
    h.beat()
    running = next(c.body for c in s.comments(n) if c.id == h.claim.comment_id)
    s.clock.advance(CONFIG.stale_after - 5)
    return s, h, running


def overwrite_on_look(s: MemoryServer, h: Holding, body: str, look: int, unanswered: bool) -> None:
    """Before the `look`-th read of our record, a late beat lands over it (and, if
    `unanswered`, that read gets no answer)."""
    seen = {"n": 0}

    def hook(op: str, _args: tuple[object, ...]) -> None:
        if op == "get_comment":
            seen["n"] += 1
            if seen["n"] == look:
                s.client().edit_comment(h.claim.comment_id, body)
                if unanswered:
                    s.fail_next(ME, "unavailable")

    s.on_call = hook


def test_an_unanswered_look_back_is_tried_again() -> None:
    """A beat lands over the outage record and the look back gets no answer: giving up there
    left "running", and the pass counted the attempt. The outage path tries again within its
    bound and puts its record back (ADR 0056)."""
    s, h, running = outage_holding()
    overwrite_on_look(s, h, running, 1, unanswered=True)
    assert h.record_outage("the lease ran out", 600, lambda _s: False)
    record = read_log(s.comments(h.number), trusted_set(BOT, ())).find(h.claim.record.token)
    assert record is not None and not record.record.counts_attempt
    assert record.record.state is State.INTERRUPTED


class LateBeat(ServerTime):
    """The server's clock; once a sleep passes `land_at`, a late beat lands: `running` again."""

    land_at: float | None = None
    body = ""
    comment_id = 0

    def sleep(self, seconds: float, wake: threading.Event | None = None) -> bool:
        super().sleep(seconds, wake)
        if self.land_at is not None and self.monotonic() >= self.land_at:
            self.land_at = None
            self.server.client().edit_comment(self.comment_id, self.body)
        return False


def test_a_beat_landing_after_every_outage_write_spends_no_attempt() -> None:
    """A beat the outage path could not wait for lands 6 s after its record, after the outage
    path is done: the record reads `running` again, and the appended outage marker, which no
    edit undoes, still excuses the attempt and ends the run (ADR 0092)."""
    clock = LateBeat(MemoryServer())
    s, h, running = outage_holding(clock)
    h._ambiguous_write = True  # a beat was in flight when the outage path began
    clock.land_at, clock.body, clock.comment_id = s.clock.monotonic() + 6.0, running, h.claim.comment_id
    assert h.record_outage("the lease ran out", 600, lambda _s: False)
    clock.sleep(6.0)
    assert clock.land_at is None, "the beat did not land"
    log = read_log(s.comments(h.number), trusted_set(BOT, ()))
    entry = log.find(h.claim.record.token)
    assert entry is not None and entry.record.state is State.RUNNING  # undone by the beat
    assert log.attempts_used() == 0
    assert h.claim.record.token not in {c.record.token for c in log.open_claims()}
