"""This machine as the wrapper's `ports.Host`, for tests that run a real child on the
in-memory GitHub: the real clock, machine, launcher, and the runner files `env` names; and,
for in-process passes and `status`, a hosted machine that sees no process (`HERE`, `blind`)."""

from __future__ import annotations

import threading
from collections.abc import Mapping

from orion_action.adapters import child, machine
from orion_action.adapters.actions import ActionsRunner
from orion_action.adapters.clock import SYSTEM_CLOCK
from orion_action.core.liveness import Machine
from orion_action.ports import Clock, Host

HERE = Machine("runner-x", "boot-x", "machine-x", "pidns-x")  # a hosted runner: no claim is its


def blind(_pid: int, _pgid: int | None) -> None:
    """A sight that sees no process on this machine: liveness is judged from GitHub alone."""
    return None


def real_host(env: Mapping[str, str], clock: Clock = SYSTEM_CLOCK) -> Host:
    return Host(clock, machine, child, ActionsRunner(env))


class VirtualClock:
    """The Clock port on virtual time, moved only by the waits of whoever uses it (a client's
    retry back-off): a retry budget is spent by the back-off alone, however slowly a loaded
    machine refuses each connection."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def now_iso(self) -> str:
        return "2026-12-04T00:00:00+00:00"

    def sleep(self, seconds: float, wake: threading.Event | None = None) -> bool:
        self.now += seconds
        return False
