"""Gathering observations for the liveness judgement, shared by the wrapper and the reconciler."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from orion_action.core.issue import ClaimEntry
from orion_action.core.liveness import (
    Liveness,
    Machine,
    Observations,
    Verdict,
    judge,
    same_process_table,
)
from orion_action.ports import Sight

RunStatus = Callable[[int], "str | None"]


def judge_entry(
    entry: ClaimEntry,
    now: datetime,
    stale_after: float,
    here: Machine,
    run_status: RunStatus | None = None,
    *,
    sight: Sight,
) -> Verdict:
    """Judge one claim from this machine; `sight` reads its process table (the model checker
    passes its own simulated table).

    The process table is read only when it is the holder's. The recorded Actions run is looked
    up (one request) only when the heartbeat is older than the holder's own stale_after and
    the judge's larger one still keeps it: only then can `completed` decide (ADR 0029), so
    the steady state costs nothing extra."""
    record = entry.record
    processes = None
    if same_process_table(record.holder, here):
        processes = sight(record.holder.pid, record.child_pid)
    seen = Observations(here, processes)
    verdict = judge(record, entry.updated_at, now, stale_after, seen)
    age = (now - entry.updated_at).total_seconds()
    if (
        run_status is not None
        and record.actions is not None
        and processes is None
        and verdict.liveness is Liveness.ALIVE
        and age > record.stale_after
    ):
        seen = Observations(here, processes, run_status(record.actions.run_id))
        verdict = judge(record, entry.updated_at, now, stale_after, seen)
    return verdict
