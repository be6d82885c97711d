"""Readers of the dashboard's Markdown as a person sees it: a section under its heading, the
issue numbers of a table's rows, one row's cells (escapes undone). Shared by the in-process
and the emulator dashboard tests, so both read the tables the same way."""
from __future__ import annotations

import re


def section(body: str, heading: str) -> str:
    """The text under a `### heading` up to the next heading (or the end of the tables)."""
    m = re.search(rf"^### {re.escape(heading)}.*?$(.*?)(?=^### |^_Kept by|\Z)", body, re.M | re.S)
    assert m, f"no section {heading!r} in:\n{body}"
    return m.group(1)


def issues_in(text: str) -> list[int]:
    """The issue numbers of a table's rows, in row order (the first cell of each row)."""
    return [int(n) for n in re.findall(r"^\| (?:\d+ \| )?\[?#(\d+)(?:\]\([^)]*\))? \|", text, re.M)]


def row(text: str, n: int) -> list[str]:
    """The cells after the issue's, as a person reads them (Markdown escapes undone)."""
    m = re.search(rf"^\| (?:\d+ \| )?\[?#{n}(?:\]\([^)]*\))? \|(.*)\|$", text, re.M)
    assert m, f"no row for #{n} in:\n{text}"
    return [re.sub(r"\\(.)", r"\1", c.strip()) for c in re.split(r"(?<!\\)\|", m.group(1))]
