"""``helpers_run`` (tests/integration/helpers_run.py at 0a77c48), as the r3 demos import it:
names mapped onto tests/rig/harness.py, where it was merged.

Call shapes kept: ``Run`` was a wrapper around a ``subprocess.Popen`` at ``.proc`` with
``signal(sig)``, and its ``wait`` killed the process before failing on a timeout; the harness's
``Run`` is a ``Proc`` (the Popen at ``.popen``, ``send_signal``). ``Child`` and the child script
are the harness's: the same interface (``cmd``, ``started``, ``pid``, ``wait_started``,
``release``, ``gone``); its child holds until DIR/go as the old one did.
"""

from __future__ import annotations

import signal as _signal
import subprocess
from typing import Any

from rig.harness import (  # noqa: F401
    BOT,
    FAILED,
    FAST,
    LOST,
    NOT_CLAIMED,
    PY,
    QUEUE,
    READY,
    USAGE,
    WORKING,
    Child,
    claim_comments,
    fast_config,
    only_record,
    outputs,
    pid_alive,
    records,
    requeue,
    running_record,
    snapshot,
    tombstones,
)
from rig.harness import Run as _Run


class Run(_Run):
    """``orion-action run`` as a real subprocess, with the old helper's attribute names."""

    @property
    def proc(self) -> subprocess.Popen[Any]:
        return self.popen

    def signal(self, sig: int) -> None:
        self.send_signal(sig)

    def wait(self, timeout: float = 60.0) -> int:
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill(_signal.SIGKILL)
            raise AssertionError(
                f"wrapper did not exit within {timeout}s; stderr:\n{self.stderr}") from None
