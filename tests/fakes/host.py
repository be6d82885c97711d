"""This machine as the wrapper's `ports.Host`, for tests that run a real child on the
in-memory GitHub: the real clock, machine, launcher, and the runner files `env` names."""

from __future__ import annotations

from collections.abc import Mapping

from orion_action.adapters import child, machine
from orion_action.adapters.actions import ActionsRunner
from orion_action.adapters.clock import SYSTEM_CLOCK
from orion_action.ports import Clock, Host


def real_host(env: Mapping[str, str], clock: Clock = SYSTEM_CLOCK) -> Host:
    return Host(clock, machine, child, ActionsRunner(env))
