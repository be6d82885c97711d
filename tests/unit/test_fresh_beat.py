"""core.plan.keep_on_fresh_beat: the reconcile shortcut keeps only a holder beating on time,
and everything else goes to a full read of the issue (docs/adr/0018)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_plan import ALIVE, DEAD, LABELS, LOCK, T0, UNKNOWN, claim, log, tomb

from orion_action.core.issue import ClaimEntry, UntrustedRelease
from orion_action.core.liveness import Verdict
from orion_action.core.plan import Action, keep_on_fresh_beat
from orion_action.core.record import State

NOW = T0 + timedelta(seconds=400)


def beating(age: float = 10.0, **changes: object) -> ClaimEntry:
    """A running claim whose comment was last edited `age` seconds before NOW (interval 120)."""
    entry = claim(1, "a", updated=int(400 - age))
    return replace(entry, record=entry.record.with_changes(**changes)) if changes else entry


def decide(recent, labels=LOCK, is_open=True, verdict: Verdict = ALIVE):
    return keep_on_fresh_beat(7, is_open, labels, recent, NOW, LABELS, lambda _e: verdict)


def test_a_holder_beating_on_time_is_kept_without_a_full_read():
    plan = decide(log(beating()))
    assert plan is not None and plan.action is Action.KEEP and plan.holder is not None
    assert plan.holder.record.token == "a" and not plan.writes and plan.verdict is ALIVE


@pytest.mark.parametrize(
    "why, recent, labels, is_open, verdict",
    [
        ("issue closed", log(beating()), LOCK, False, ALIVE),
        ("no lock label", log(beating()), frozenset(), True, ALIVE),
        ("queue label beside the lock", log(beating()), LOCK | {"orion"}, True, ALIVE),
        ("cancel label", log(beating()), LOCK | {"orion-cancel"}, True, ALIVE),
        ("ready label", log(beating()), LOCK | {"orion-ready"}, True, ALIVE),
        ("failed label", log(beating()), LOCK | {"orion-failed"}, True, ALIVE),
        ("judged dead (same machine, pid gone)", log(beating()), LOCK, True, DEAD),
        ("judged unknown", log(beating()), LOCK, True, UNKNOWN),
        ("missed a beat (Actions run lookup due)", log(beating(age=181)), LOCK, True, ALIVE),
        ("still claiming", log(beating(state=State.CLAIMING)), LOCK, True, ALIVE),
        ("finished", log(beating(state=State.FINISHED, exit_code=0)), LOCK, True, ALIVE),
        ("rewritten by a release", log(beating(released="the holder died")), LOCK, True, ALIVE),
        ("a recent tombstone", log(beating(), tomb(2, "a")), LOCK, True, ALIVE),
        ("two recent claims", log(beating(), claim(3, "b", State.LOST, updated=395)), LOCK, True, ALIVE),
        ("a recent unreadable block", log(beating(), unreadable=((5, "version 9"),)), LOCK, True, ALIVE),
        ("nothing recent", log(), LOCK, True, ALIVE),
    ],
)
def test_anything_else_is_read_in_full(why, recent, labels, is_open, verdict):
    assert decide(recent, labels, is_open, verdict) is None, why


def test_an_untrusted_release_of_the_holder_is_read_in_full():
    recent = replace(log(beating()), untrusted_releases=(UntrustedRelease(9, "mallory", "a"),))
    assert decide(recent) is None


@given(age=st.floats(min_value=-20, max_value=900), interval=st.sampled_from([30.0, 120.0, 600.0]),
       verdict=st.sampled_from([ALIVE, DEAD, UNKNOWN]))
def test_only_ever_keeps_and_only_a_live_holder_on_time(age, interval, verdict):
    entry = beating(age=0)
    entry = replace(entry, updated_at=NOW - timedelta(seconds=age),
                    record=entry.record.with_changes(interval=interval))
    plan = decide(log(entry), verdict=verdict)
    if plan is not None:
        assert plan.action is Action.KEEP and not plan.writes
        assert verdict is ALIVE and age <= 1.5 * interval
    else:
        assert verdict is not ALIVE or age > 1.5 * interval


def test_a_release_rewrite_marks_the_hidden_record_too():
    """The reconciler's rewrite of a released claim's visible line moves the comment's
    updated_at: the hidden record says so, so the edit never reads as a beat."""
    from orion_action.core.record import parse_block, render_record

    record = beating().record
    back = parse_block(render_record(record, released="the holder died"))
    assert back == record.with_changes(released="the holder died")
    assert decide(log(replace(beating(), record=back))) is None
    assert "no longer holds this issue" in render_record(back)
