"""Markdown made from values a person or the command chose (titles, hosts, stages, reasons,
progress lines): the one escaping rule and the one table every Markdown orion writes uses (the
claim comments, the dashboard, the step summaries; ADR 0058). Plain-text tables for the
terminal are the report layer's (report.py)."""

from __future__ import annotations

import re
from collections.abc import Sequence

_MARKUP = re.compile(r"([\\`*_{}\[\]<>()#+!|@~])")


def escape(text: str) -> str:
    """`text` with Markdown and mentions neutralised: no value can format, link, ping anyone
    or end a table cell."""
    return _MARKUP.sub(r"\\\1", text)


def cell(value: object) -> str:
    """A value as one table cell: one line (runs of whitespace, newlines included, become one
    space), escaped."""
    return escape(" ".join(str(value).split()))


def table(head: Sequence[str], rows: Sequence[Sequence[str]], limit: int | None = None) -> list[str]:
    """A Markdown table's lines; cells are given ready (escaped). With `limit`, the rows past it
    are counted in a line below instead of shown."""
    shown = rows if limit is None else rows[:limit]
    out = [f"| {' | '.join(head)} |", f"|{'---|' * len(head)}"]
    out += [f"| {' | '.join(r)} |" for r in shown]
    if len(rows) > len(shown):
        out.append(f"\n_… and {len(rows) - len(shown)} more._")
    return out
