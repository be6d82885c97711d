"""A holder's beat reads GitHub's record of the cancel label when its issue changed (ADR 0093):
a cancel sweep's removal, planned before a person's new cancel and landing after it, takes the
label off a running issue, and only the record still says the run is cancelled."""

from __future__ import annotations

from fakes.memory_github import BOT, PERSON, MemoryServer, ServerTime

from orion_action.config import Config
from orion_action.core.liveness import Machine
from orion_action.core.record import Holder
from orion_action.errors import Unavailable
from orion_action.services.claiming import Claimer
from orion_action.services.holding import Holding

CONFIG = Config()
LAB = CONFIG.labels
HERE = Machine(host="h", boot_id="h-boot", machine_id="h-id", pid_ns="h-ns")


def hold(s: MemoryServer, n: int) -> Holding:
    """Claim issue `n` and beat once (the first beat reads the record: the claim's own label
    writes changed the issue)."""
    holder = Holder("h", "h-boot", "h-id", "h-ns", 20, 20.0)
    claim = Claimer(s.client(), CONFIG, lambda _: None, ServerTime(s), HERE, holder,
                    sight=lambda *_: None).claim_number(n, None)
    h = Holding(s.client(), claim, CONFIG, lambda _: None, ServerTime(s), HERE, sight=lambda *_: None)
    h.child_pid = 21
    h.beat()
    return h


def running(s: MemoryServer) -> Holding:
    """A run of a person's queueing, past its first beat."""
    h = hold(s, s.create_issue("work", [LAB.queue]))
    assert not h.cancel_requested
    s.clock.advance(5)
    return h


def beat_reads(s: MemoryServer, h: Holding) -> int:
    """One beat; how many requests it made."""
    before = h.gh.requests
    h.beat()
    return h.gh.requests - before


def test_a_cancel_a_stale_removal_took_off_stops_the_run() -> None:
    s = MemoryServer()
    h = running(s)
    s.add_label(h.number, LAB.cancel, login=PERSON)
    s.remove_label(h.number, LAB.cancel, login=BOT)  # the sweep's removal, landing late
    assert beat_reads(s, h) == 4  # the edit, the issue, the record, the listing
    assert h.cancel_requested


def test_a_cancel_the_person_withdrew_lets_the_run_go_on() -> None:
    s = MemoryServer()
    h = running(s)
    s.add_label(h.number, LAB.cancel, login=PERSON)
    s.remove_label(h.number, LAB.cancel, login=PERSON)
    assert beat_reads(s, h) == 4
    assert not h.cancel_requested


def test_a_steady_beat_reads_no_record() -> None:
    s = MemoryServer()
    h = running(s)
    assert beat_reads(s, h) == 3  # the edit, the issue (free while unchanged), the listing
    assert not h.cancel_requested


def test_a_change_is_judged_once() -> None:
    """A person's comment changes the issue: one read, then none while nothing else changes."""
    s = MemoryServer()
    h = running(s)
    s.comment(h.number, "any news?")
    assert beat_reads(s, h) == 4
    s.clock.advance(5)
    assert beat_reads(s, h) == 3


def test_a_read_that_fails_is_made_again_at_the_next_beat() -> None:
    s = MemoryServer()
    h = running(s)
    s.add_label(h.number, LAB.cancel, login=PERSON)
    s.remove_label(h.number, LAB.cancel, login=BOT)
    real = h.gh.queue_history

    def unanswered(*_args: object, **_kw: object) -> object:
        raise Unavailable("GitHub did not answer (test)")

    h.gh.queue_history = unanswered  # type: ignore[method-assign]
    h.beat()
    assert not h.cancel_requested  # the beat completes; the run goes on for now
    h.gh.queue_history = real  # type: ignore[method-assign]
    s.clock.advance(5)
    h.beat()
    assert h.cancel_requested


def test_a_cancel_against_an_older_queueing_stops_nothing() -> None:
    """A cancel carried out before this run's queueing (by the sweep, both labels off) is over:
    the person's queueing since is the newer wish."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.cancel, LAB.queue])
    s.remove_label(n, LAB.queue, login=BOT)
    s.remove_label(n, LAB.cancel, login=BOT)
    s.clock.advance(2)
    s.add_label(n, LAB.queue, login=PERSON)
    assert not hold(s, n).cancel_requested
