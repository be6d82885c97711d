"""A drain's claims on the in-memory GitHub, judged on the drain's own machine (ADR 0028,
finding 4 of the round-3 protocol audit).

`run --drain` makes every claim with one wrapper identity. When the end of one run cannot be
recorded, the drain goes on to the next issue and the earlier claim stays `running`: a pass on
the worker's machine must not keep it for the whole drain because the wrapper's pid lives."""

from __future__ import annotations

from fakes.memory_github import MemoryServer, ServerTime

from orion_action.adapters import machine as local
from orion_action.config import Config
from orion_action.core.liveness import MISSED_BEAT_FACTOR, ProcessSighting
from orion_action.core.plan import Action
from orion_action.services.claiming import Claimer
from orion_action.services.holding import Holding
from orion_action.services.reconcile import Reconciler

CONFIG = Config(heartbeat_interval=10.0, stale_after=60.0, max_attempts=3, source="test")
LAB = CONFIG.labels


def test_a_drains_abandoned_claim_is_released_on_its_own_machine() -> None:
    s = MemoryServer()
    x = s.create_issue("X", [LAB.queue])
    y = s.create_issue("Y", [LAB.queue])
    clock, gh, logs = ServerTime(s), s.client(), []
    here, me = local.this_machine(), local.this_holder()  # one wrapper for both claims

    def run(n: int, child_pid: int) -> Holding:
        claimer = Claimer(gh, CONFIG, logs.append, clock, here, me, None, lambda: None, sight=local.sight)
        claim = claimer.claim_number(n, None)
        h = Holding(gh, claim, CONFIG, logs.append, clock, here, local.sight)
        h.child_pid = child_pid
        h.beat()
        return h

    run(x, 5001)  # X's command exits; its end is never recorded; the drain goes on
    on_y = run(y, 5002)
    clock.sleep(MISSED_BEAT_FACTOR * CONFIG.heartbeat_interval + 1)
    on_y.beat()  # Y's run is healthy

    def sight(pid: int, child: int | None) -> ProcessSighting:
        """The wrapper runs; of the two commands only Y's (process group 5002) does."""
        assert pid == me.pid
        return ProcessSighting(me.pid_start, child == 5002, me.pid_start_ticks)

    passes = Reconciler(gh, CONFIG, logs.append, here=here, sight=sight)
    plans = {survey.issue.number: survey.plan for survey in passes.survey()}
    assert plans[y].action is Action.KEEP, plans[y]
    assert plans[x].action is Action.REQUEUE, plans[x]
    assert f"wrapper pid {me.pid} runs on, but this claim's command (process group 5001) is gone" in (
        plans[x].reason
    )
