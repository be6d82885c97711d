"""Holding.record_outage on the in-memory GitHub (ADR 0019): how a holder that GitHub cut off
tells an outage from a refusal, keeps trying within its bound, stops on a signal, and what it
writes when a pass released its claim (and failed the issue) before GitHub answered again."""

from __future__ import annotations

import threading

import pytest
from fakes.memory_github import MemoryServer, ServerTime

from orion_action.adapters import machine as local
from orion_action.config import Config
from orion_action.core.issue import read_log, trusted_set
from orion_action.core.plan import Fate, fate
from orion_action.core.record import (
    ReleaseAction,
    State,
    Tombstone,
    parse_block,
    render_record,
    render_tombstone,
)
from orion_action.errors import GitHubError
from orion_action.services.claiming import Claimer
from orion_action.services.holding import (
    OUTAGE_RETRY_MAX_S,
    Holding,
    outage_bound,
)

CONFIG = Config(heartbeat_interval=10.0, stale_after=60.0, max_attempts=1, source="test")
LAB = CONFIG.labels
ME = threading.current_thread().name  # the actor whose requests fail_next fails


def holding(logs: list[str]) -> tuple[MemoryServer, Holding]:
    """A won claim whose child (pid 4242) runs, after one good beat."""
    s = MemoryServer()
    n = s.create_issue("work", [LAB.queue])
    clock = ServerTime(s)
    gh = s.client()
    here = local.this_machine()
    claimer = Claimer(gh, CONFIG, logs.append, clock, here, local.this_holder(), None, lambda: None,
                      sight=local.sight)
    claim = claimer.claim_number(n, None)
    h = Holding(gh, claim, CONFIG, logs.append, clock, here, local.sight)
    h.child_pid = 4242
    h.beat()
    return s, h


def record(s: MemoryServer, h: Holding):
    return parse_block(next(c.body for c in s.comments(h.number) if c.id == h.claim.comment_id))


def test_unanswered_beats_are_an_outage_and_refused_ones_are_not() -> None:
    s, h = holding([])
    assert h.outage() is None  # the last beat completed
    s.fail_next(ME, "unavailable")
    with pytest.raises(GitHubError):
        h.beat()
    assert h.outage() is not None and "did not answer" in (h.outage() or "")
    h.refused = "GitHub answered 422"
    assert h.outage() is None  # GitHub answered, and said no: the run's lease is not excused
    h.refused = h.unanswered = None
    h.beating = True  # a beat still waits for its answer
    assert h.outage() == "a heartbeat request got no answer"


def test_it_keeps_trying_with_backoff_until_github_answers() -> None:
    logs: list[str] = []
    s, h = holding(logs)
    s.fail_next(ME, "unavailable", count=5)
    waits: list[float] = []

    def pause(seconds: float) -> bool:
        waits.append(seconds)
        s.clock.advance(seconds)
        return False

    assert h.record_outage("the renew deadline passed", outage_bound(CONFIG), pause)
    assert waits == [1, 2, 4, 8, 16]
    rec = record(s, h)
    assert rec.state is State.INTERRUPTED and not rec.counts_attempt and rec.child_pid == 4242
    assert "GitHub was unreachable" in (rec.note or "")
    assert s.issue(h.number).labels == frozenset({LAB.queue}) and h.requeued
    assert read_log(s.comments(h.number), trusted_set("orion-bot", ())).attempts_used() == 0


def test_it_gives_up_at_its_bound_and_the_claim_goes_stale() -> None:
    logs: list[str] = []
    s, h = holding(logs)
    s.fail_next(ME, "unavailable", count=10_000)
    started = s.clock.monotonic()
    waits: list[float] = []

    def pause(seconds: float) -> bool:
        waits.append(seconds)
        s.clock.advance(seconds)
        return False

    assert not h.record_outage("the renew deadline passed", outage_bound(CONFIG), pause)
    assert s.clock.monotonic() - started == outage_bound(CONFIG) == 600
    assert max(waits) == OUTAGE_RETRY_MAX_S
    assert "giving up: a reconcile pass will count the attempt" in logs[-1]
    assert record(s, h).state is State.RUNNING
    assert LAB.working in s.issue(h.number).labels


def test_a_signal_ends_the_wait() -> None:
    logs: list[str] = []
    s, h = holding(logs)
    s.fail_next(ME, "unavailable", count=10)
    assert not h.record_outage("the renew deadline passed", 600, lambda _s: True)
    assert "stopped by a signal" in logs[-1]
    assert record(s, h).state is State.RUNNING


def test_after_a_pass_failed_the_issue_for_it_the_record_excuses_the_run_and_requeues() -> None:
    """The pass released the claim as dead (counting it, the last attempt) while the holder
    could not reach GitHub: the holder's record is written over the released claim, the count
    is withdrawn, and the issue goes back to the queue."""
    s, h = holding([])
    tomb = Tombstone(h.claim.record.token, ReleaseAction.GIVE_UP, "no heartbeat", counts_attempt=True)
    s.comment(h.number, render_tombstone(tomb), login="orion-bot")
    s.remove_label(h.number, LAB.working)
    s.add_label(h.number, LAB.failed)
    trusted = trusted_set("orion-bot", ())
    assert read_log(s.comments(h.number), trusted).attempts_used() == 1
    assert h.record_outage("the renew deadline passed", 600, lambda _s: False)
    rec = record(s, h)
    assert rec.state is State.INTERRUPTED and not rec.counts_attempt
    assert "released" in (rec.note or "")
    assert read_log(s.comments(h.number), trusted).attempts_used() == 0
    assert s.issue(h.number).labels == frozenset({LAB.queue}) and h.requeued


def test_after_a_pass_requeued_it_the_labels_are_left_alone() -> None:
    s, h = holding([])
    tomb = Tombstone(h.claim.record.token, ReleaseAction.REQUEUE, "no heartbeat", counts_attempt=True)
    s.comment(h.number, render_tombstone(tomb), login="orion-bot")
    s.remove_label(h.number, LAB.working)
    s.add_label(h.number, LAB.queue)
    before = s.issue(h.number).labels
    assert h.record_outage("the renew deadline passed", 600, lambda _s: False)
    assert s.issue(h.number).labels == before and not h.requeued
    assert read_log(s.comments(h.number), trusted_set("orion-bot", ())).attempts_used() == 0


def test_a_passs_released_rewrite_landing_after_every_outage_write_spends_no_attempt() -> None:
    """The pass read the record as `running`, the holder then wrote its account, and the pass's
    rewrite of the visible line (from what it had read) lands after the outage path is done:
    the record reads `running` again, but the outage marker appended after it, which no edit
    undoes, keeps the count withdrawn, and the pass's release decides the fate (ADR 0092)."""
    s, h = holding([])
    running = h.claim.record
    tomb = Tombstone(running.token, ReleaseAction.REQUEUE, "no heartbeat", counts_attempt=True)
    s.comment(h.number, render_tombstone(tomb), login="orion-bot")
    s.remove_label(h.number, LAB.working)
    s.add_label(h.number, LAB.queue)
    assert h.record_outage("the renew deadline passed", 600, lambda _s: False)
    s.edit(h.claim.comment_id, render_record(running, released="no heartbeat"))
    assert record(s, h).state is State.RUNNING
    log = read_log(s.comments(h.number), trusted_set("orion-bot", ()))
    assert log.attempts_used() == 0
    decided = fate(frozenset({LAB.working}), log, {}, LAB, 3)
    assert decided.fate is Fate.RELEASED
