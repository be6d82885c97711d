"""core.requeue: the rule a pass uses to put back a person's queueing that a pass's stale removal
of the queue label took (ADR 0088): `queueing_a_stale_removal_took` reads GitHub's record of an
open issue carrying none of orion's labels (and the claims listed since, where a lock came
between), and `refused_after` a claim's refusal comment."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from test_late_unqueue import ORION, _comment, ev
from test_plan import T0, claim

from orion_action.core.cancelled import LabelEvent
from orion_action.core.issue import ClaimEntry, Comment
from orion_action.core.record import State
from orion_action.core.requeue import queueing_a_stale_removal_took, refused_after

SINCE = T0 + timedelta(seconds=10)  # the furthest any pass looks back
Q, C, L = "orion", "orion-cancel", "orion-working"

# (events, whether a stale removal took the person's queueing, why)
RECORDS = [
    ((ev(Q, True, "alice", 0), ev(C, True, "alice", 5), ev(C, False, "alice", 11),
      ev(Q, False, "orion-bot", 12)), True,
     "the sweep read the issue cancelled; its removal landed after the person withdrew the cancel "
     "(default seed 15 episode 125)"),
    ((ev(Q, True, "alice", 0), ev(C, True, "alice", 2), ev(Q, False, "orion-bot", 3),
      ev(C, False, "orion-bot", 4), ev(Q, True, "alice", 11), ev(Q, False, "orion-bot", 12)),
     True, "the cancel carried out, the person queued again, another sweep's removal took it (13, 64)"),
    ((ev(Q, True, "alice", 0), ev(C, True, "alice", 5), ev(Q, False, "orion-bot", 12)),
     False, "the sweep carried out a standing cancel"),
    ((ev(Q, True, "alice", 0), ev(C, True, "alice", 5), ev(Q, False, "orion-bot", 12),
      ev(C, False, "alice", 13)), False, "the removal carried out a cancel that stood when it landed"),
    ((ev(Q, True, "alice", 0), ev(Q, False, "orion-bot", 12), ev(C, True, "bob", 13)),
     False, "a cancel made after the removal is honoured"),
    ((ev(Q, True, "alice", 0), ev(L, True, "orion-bot", 11), ev(Q, False, "orion-bot", 12)),
     False, "a claim took it: the strand and late-unqueue looks judge claims"),
    ((ev(Q, True, "alice", 0), ev(L, False, "orion-bot", 11), ev(Q, False, "orion-bot", 12)),
     False, "a lock taken off since the queueing is a claim's story too"),
    ((ev(L, True, "orion-bot", 0), ev(Q, True, "alice", 1), ev(Q, False, "orion-bot", 12)),
     True, "a lock event before the queueing says nothing of it"),
    ((ev(Q, True, "alice", 0), ev(L, True, "orion-bot", 2), ev(Q, False, "orion-bot", 3),
      ev(L, False, "orion-bot", 4), ev(Q, True, "alice", 11), ev(Q, False, "orion-bot", 12)),
     True, "the latest of the person's queueings: a claim ran the earlier one"),
    ((ev(Q, True, "alice", 0), ev(Q, False, "alice", 12)), False, "a person dequeued it"),
    ((ev(Q, True, "alice", 0), ev(Q, False, "", 12)), False, "a removal by no known actor"),
    ((ev(Q, True, "orion-bot", 0), ev(Q, False, "orion-bot", 12)), False,
     "orion's own queueing (a release back to the queue) is the late-unqueue look's"),
    ((ev(Q, True, "", 0), ev(Q, False, "orion-bot", 12)), False, "a queueing by no known actor"),
    ((ev(Q, True, "alice", 0), ev(Q, False, "orion-bot", 8)), False,
     "removed before the furthest any pass looks back: left as it is"),
    ((ev(Q, True, "alice", 0), ev(Q, False, "orion-bot", 9)), True,
     "whole seconds: one second before counts"),
    ((ev(Q, True, "alice", 0), ev(Q, False, "orion-bot", 11), ev(Q, True, "orion-bot", 11),
      ev(Q, False, "orion-bot", 12)), True,
     "orion's addition after the person's queueing, no lock between, put that queueing back"),
    ((ev(Q, True, "alice", 0), ev(C, True, "alice", 1), ev(Q, False, "orion-bot", 2),
      ev(C, False, "alice", 3), ev(Q, True, "alice", 3), ev(Q, False, "orion-bot", 11),
      ev(Q, True, "orion-bot", 11),
      ev(Q, False, "orion-bot", 12)), True,
     "a third sweep's removal after a look put the queueing back (default seed 233 episode 15)"),
    ((ev(Q, True, "alice", 0), ev(L, True, "orion-bot", 5), ev(Q, False, "orion-bot", 6),
      ev(Q, True, "orion-bot", 11), ev(L, False, "orion-bot", 11), ev(Q, False, "orion-bot", 12)), False,
     "orion's queueing after a claim (a release back to the queue) is the late-unqueue look's"),
    ((ev(Q, True, "alice", 0), ev(Q, False, "orion-bot", 12), ev(Q, True, "alice", 13)), False,
     "queued again since (the issue would carry the label)"),
    ((ev(Q, False, "orion-bot", 12),), False, "no queueing in the record"),
    ((ev(C, True, "alice", 12),), False, "no queue label event"),
    ((ev("ORION", True, "alice", 0), ev("Orion", False, "orion-bot", 12)), True,
     "labels compare case-insensitively"),
    ((), False, "no record"),
]


@pytest.mark.parametrize(("events", "taken", "why"), RECORDS, ids=[r[2] for r in RECORDS])
def test_queueing_a_stale_removal_took(events: tuple[LabelEvent, ...], taken: bool, why: str) -> None:
    found = queueing_a_stale_removal_took(events, Q, C, L, lambda login: login in ORION, SINCE, ())
    assert (found is not None) is taken, why
    if taken:
        assert found is not None and found.added and found.login == "alice"


@pytest.mark.parametrize(("comment", "refused"), [
    (_comment(5, "orion-bot", "<!-- orion-refused-LE_1 -->\n**orion did not start a run**"), True),
    (_comment(5, "mallory", "<!-- orion-refused-LE_1 -->\n"), False),  # anyone can write the text
    (_comment(5, "orion-bot", "a word about <!-- orion-refused- -->"), False),
])
def test_a_refusal_after_the_queueing(comment: Comment, refused: bool) -> None:
    at = comment.created_at
    assert refused_after([comment], frozenset(ORION), at) is refused
    assert refused_after([comment], frozenset(ORION), at + timedelta(seconds=1)) is refused  # whole seconds
    assert refused_after([comment], frozenset(ORION), at + timedelta(seconds=2)) is False


def _lost(cid: int, unqueued: bool | None) -> ClaimEntry:
    entry = claim(cid, "w", State.LOST, child_pid=None)
    return replace(entry, record=entry.record.with_changes(unqueued=unqueued))


# Default seed 5 episode 172: the person queued at 3, a claim posted at 4 and added its lock at 5,
# a stale sweep's removal landed at 12, the claim's own unqueue found the label gone.
LOCKED = (ev(Q, True, "alice", 3), ev(L, True, "orion-bot", 5), ev(Q, False, "orion-bot", 12),
          ev(L, False, "orion-bot", 30))
TWO_LOCKS = (ev(Q, True, "alice", 3), ev(L, True, "orion-bot", 5), ev(L, False, "orion-bot", 6),
             ev(L, True, "orion-bot", 10), ev(Q, False, "orion-bot", 12))
CLAIMS = [
    (LOCKED, (_lost(4, False),), True, "the claim's unqueue found the label gone: it took nothing"),
    (LOCKED, (_lost(4, True),), False, "the claim sent its unqueue: the late-unqueue look's"),
    (LOCKED, (claim(4, "w"),), False, "a claim that ran took it"),
    (LOCKED, (claim(4, "w", State.CLAIMING),), False,
     "a claim listed `claiming` may have run since (a lagging listing, default seed 6 episode 243)"),
    (LOCKED, (_lost(4, None),), True, "a `lost` record that says nothing of its unqueue sent none"),
    (LOCKED, (replace(_lost(4, False), record=_lost(4, False).record.with_changes(child_pid=4243)),), False,
     "a run that lost its lease ran: it took the queueing"),
    (LOCKED, (_lost(4, False), claim(5, "v")), False, "another claim since ran"),
    (LOCKED, (), False, "no claim listed: the lock's claim is unknown"),
    (LOCKED, (_lost(1, False),), False, "a claim posted before the queueing tells nothing of it"),
    (LOCKED, (_lost(2, False),), True, "whole seconds: a claim posted a second before the queueing counts"),
    (LOCKED, (_lost(7, False),), False, "the lock came before any listed claim: an unlisted claim's"),
    (LOCKED, (_lost(6, False),), True, "whole seconds: a claim posted a second after the lock counts"),
    (LOCKED, (_lost(4, False), _lost(8, False)), True, "the earliest listed claim is the lock's"),
    (TWO_LOCKS, (_lost(7, False),), False, "the first lock came before any listed claim"),
]


@pytest.mark.parametrize(("events", "claims", "taken", "why"), CLAIMS, ids=[r[3] for r in CLAIMS])
def test_a_lock_since_the_queueing_hides_it_unless_every_claim_took_nothing(
        events: tuple[LabelEvent, ...], claims: tuple[ClaimEntry, ...], taken: bool, why: str) -> None:
    found = queueing_a_stale_removal_took(events, Q, C, L, lambda login: login in ORION, SINCE, claims)
    assert (found is not None) is taken, why
