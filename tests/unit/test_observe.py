"""services.observe.judge_entry: when the recorded Actions run is looked up, and what its
`completed` decides (ADR 0029, finding 7 of the round-3 protocol audit)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from orion_action.core.issue import ClaimEntry
from orion_action.core.liveness import Liveness, Machine
from orion_action.core.record import ActionsRun, ClaimRecord, Holder, State
from orion_action.services.observe import judge_entry

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=timezone.utc)
HOLDER = Holder(host="runner-7", boot_id="boot-7", machine_id="machine-7", pid_ns="4026531836:" + "7" * 32,
                pid=4242, pid_start=1_700_000_000.0)
RECORD = ClaimRecord(token="t", state=State.RUNNING, holder=HOLDER, started_at="", heartbeat_at="",
                     interval=10.0, stale_after=60.0, child_pid=4243,
                     actions=ActionsRun(run_id=77, run_attempt=1, runner_name="self-hosted-7"))
ELSEWHERE = Machine(host="hosted", boot_id="boot-h", machine_id="machine-h", pid_ns="4026531836:" + "h" * 32)


@pytest.mark.parametrize(("age", "looked_up", "expect"), [
    (5, False, Liveness.ALIVE),  # beating on time
    (16, False, Liveness.ALIVE),  # a beat missed: a partitioned runner's job may be failed already
    (59, False, Liveness.ALIVE),  # still within the holder's own promise
    (61, True, Liveness.DEAD),  # past it: `completed` decides before the judge's 600 s
])
def test_a_completed_run_decides_only_past_the_holders_own_stale_after(
        age: float, looked_up: bool, expect: Liveness) -> None:
    asked: list[int] = []

    def run_status(run_id: int) -> str:
        asked.append(run_id)
        return "completed"

    entry = ClaimEntry(1, RECORD, NOW - timedelta(hours=1), NOW - timedelta(seconds=age))
    verdict = judge_entry(entry, NOW, 600.0, ELSEWHERE, run_status, sight=lambda *_: None)
    assert verdict.liveness is expect, verdict
    assert asked == ([77] if looked_up else [])
