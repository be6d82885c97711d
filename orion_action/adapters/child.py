"""The user's command as a child process: its own process group, killed with the wrapper.

`start_child` is the one way the wrapper starts a command; `Child` is what it gets back.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import threading
from collections.abc import Callable

from orion_action.adapters import machine as local
from orion_action.adapters.clock import boottime

PR_SET_PDEATHSIG = 1


def _child_setup() -> None:  # pragma: no cover - runs in the forked child
    """In the child before exec: its own process group, and die with the wrapper."""
    os.setpgid(0, 0)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


class Child:
    """A started command: poll it, renew its lease, stop it and everything it started."""

    def __init__(self, proc: subprocess.Popen[bytes]):
        self.proc = proc
        self.pid = proc.pid  # also its process group id

    def poll(self) -> int | None:
        """Its return code (negative: killed by that signal), or None while it runs."""
        return self.proc.poll()

    def renew(self, lease_until: float) -> None:
        """The wrapper may run until `lease_until` (boottime seconds)."""

    def stop(self, first: int, grace: float, cut_short: Callable[[], bool] = lambda: False) -> None:
        """Signal the process group, wait `grace` (less if `cut_short` says so), then kill
        whatever is left of the group."""
        pgid = self.pid
        if self.proc.poll() is not None and not local.group_alive(pgid):
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, first)
        deadline = boottime() + grace
        while boottime() < deadline and not cut_short():
            if self.proc.poll() is not None and not local.group_alive(pgid):
                break
            threading.Event().wait(0.05)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
        self.proc.wait()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.stop(signal.SIGKILL, 0)


def start_child(command: list[str], env: dict[str, str], lease_until: float) -> Child | None:
    """Start `command`, unless the lease has already run out; None when it cannot be started."""
    if boottime() >= lease_until:
        return None
    try:
        proc = subprocess.Popen(command, env=env, preexec_fn=_child_setup)
    except OSError:
        return None
    return Child(proc)
