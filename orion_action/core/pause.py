"""The pause switch's wording: the queue label's description starting with "paused" (the rest
is the reason). Pure, so that claims, `init` and the dashboard read it alike (ADR 0022)."""

from __future__ import annotations

import re

PAUSE_WORD = "paused"
_PAUSED = re.compile(r"\s*paused\b[\s:.,;-]*(.*)", re.IGNORECASE | re.DOTALL)


def pause_reason(description: str | None) -> str | None:
    """The reason when a queue label's description says paused, else None."""
    m = _PAUSED.fullmatch(description or "")
    return None if m is None else m.group(1).strip()
