"""The user's command as a child process, under a guardian process (ADR 0010): its own
process group, and it and everything it started die with the wrapper or its lease.

This module is the wrapper's `ports.LauncherPort` (cli.py passes it): `start_child` is the one
way the wrapper starts a command, `adopt_orphans` makes the wrapper the reaper of what escapes,
`resolve_run_as` checks `run.user`.
"""

from __future__ import annotations

from orion_action.adapters.guardian import Guardian, adopt_orphans
from orion_action.adapters.run_as import resolve as resolve_run_as
from orion_action.ports import RunAsPort

__all__ = ["adopt_orphans", "resolve_run_as", "start_child"]


def start_child(
    command: list[str],
    env: dict[str, str],
    lease_until: float,
    kill_grace: float,
    watch_output: bool = False,
    run_as: RunAsPort | None = None,
) -> Guardian:
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
