"""The local clock. Only durations and display times come from here, never claim ages:
those are measured on GitHub's clock (comment `updated_at` against the `Date` header)."""

from __future__ import annotations

import time
from datetime import datetime, timezone


def utc_now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


monotonic = time.monotonic
