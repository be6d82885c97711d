"""The local clock. Only durations and display times come from here, never claim ages:
those are measured on GitHub's clock (comment `updated_at` against the `Date` header).

Durations use CLOCK_BOOTTIME, which keeps counting while the machine is suspended (unlike
time.monotonic): a holder resumed after a suspend must know how long it was silent. Services
take a Clock, so the model checker can drive them on virtual time.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime, timezone


def boottime() -> float:
    """Seconds since boot, suspend included (Linux); monotonic elsewhere."""
    try:
        return time.clock_gettime(time.CLOCK_BOOTTIME)
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return time.monotonic()


def utc_now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


monotonic = boottime


class Clock:
    """Real time: durations on CLOCK_BOOTTIME, display times on the wall clock."""

    def monotonic(self) -> float:
        return boottime()

    def now_iso(self) -> str:
        return utc_now_iso()

    def sleep(self, seconds: float, wake: threading.Event | None = None) -> bool:
        """Sleep, or stop early when `wake` is set; returns whether it was woken. An Event's wait,
        not time.sleep: it keeps working where the wall clock is shifted (libfaketime)."""
        if seconds <= 0:
            return bool(wake and wake.is_set())
        return (wake or threading.Event()).wait(seconds)


SYSTEM_CLOCK = Clock()
