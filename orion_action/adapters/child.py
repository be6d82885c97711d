"""The user's command as a child process, under a guardian process (ADR 0010): its own
process group, and it and everything it started die with the wrapper or its lease.

`start_child` is the one way the wrapper starts a command; `Child` is what it gets back.
"""

from __future__ import annotations

from orion_action.adapters.guardian import CannotStart, Guardian, LeaseExpired
from orion_action.adapters.run_as import RunAs

Child = Guardian
__all__ = ["CannotStart", "Child", "LeaseExpired", "start_child"]


def start_child(
    command: list[str],
    env: dict[str, str],
    lease_until: float,
    kill_grace: float,
    watch_output: bool = False,
    run_as: RunAs | None = None,
) -> Child:
    """Start `command` under a guardian; raises CannotStart or LeaseExpired. `watch_output`:
    its output passes through the guardian, which reports when it last wrote (idle_timeout).
    `run_as`: the user the command runs as (run.user), with HOME, USER and LOGNAME its own."""
    return Guardian.start(
        command,
        env if run_as is None else run_as.env(env),
        lease_deadline=lease_until,
        kill_grace=kill_grace,
        watch_output=watch_output,
        user=None if run_as is None else run_as.ids,
    )
