"""bench/capacity.py counts what the in-memory GitHub counts, and enforces GitHub's limits as
documented (ADR 0045): its figures are only as good as this accounting."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import capacity  # noqa: E402
from fakes.memory_github import BOT  # noqa: E402


def test_the_bench_counts_what_the_in_memory_github_counts() -> None:
    sim = capacity.simulate(claims=6, identity="GITHUB_TOKEN", hours=2.5)
    limits = sim.limits
    sent = sum(c.requests for c in sim.clients)
    free = sum(c.not_modified for c in sim.clients)
    assert limits.charged > 0 and free > 0
    # every request a client sent was charged, refunded as a 304, or refused; the trigger
    # check's reads are charged by the bench itself
    assert sent + sim.trigger_reads == limits.charged + limits.refunded + limits.refused
    assert limits.refunded == free
    assert sim.server.spent[BOT] + sim.trigger_reads == limits.charged
    assert len([e for e in limits.log if e[2]]) == limits.charged
    row = sim.figures()
    last_hour = [e for e in limits.log if e[2] and e[0] - sim.t0 >= 1.5 * capacity.HOUR]
    assert row["requests_per_hour"] == len(last_hour)
    assert row["writes_per_hour"] == sum(1 for e in last_hour if e[1])
    assert (row["runs_lost"], row["claims_refused"], row["running_holders_released"]) == (0, 0, 0)


def test_the_primary_limit_refuses_until_the_windows_reset() -> None:
    limits = capacity.GitHubLimits(primary=3, start=0.0)
    assert [limits.admit(BOT, False, t) for t in (0.0, 1.0, 2.0)] == [None, None, None]
    assert limits.admit(BOT, False, 600.0) == pytest.approx(3000.0)
    limits.refund(BOT, 600.0)  # a 304 is free: the request it stood for is given back
    assert limits.admit(BOT, False, 601.0) is None
    assert limits.budget(BOT, 601.0).remaining == 0
    assert limits.admit(BOT, False, 3600.0) is None  # a new window


def test_content_writes_are_limited_per_minute_and_per_hour() -> None:
    limits = capacity.GitHubLimits(primary=5000, start=0.0)
    for i in range(80):
        assert limits.admit(BOT, True, i * 0.5) is None
    assert limits.admit(BOT, True, 40.0) == pytest.approx(20.0)  # the first leaves the minute at 60 s
    assert limits.admit(BOT, False, 40.0) is None  # reads are not content writes
    for i in range(420):
        assert limits.admit(BOT, True, 100.0 + i * 7) is None
    assert limits.admit(BOT, True, 3200.0) == pytest.approx(3600.0 - 3200.0)
    assert limits.refused == 2


@pytest.mark.parametrize("doc", capacity.DOCS, ids=lambda p: p.name)
def test_the_capacity_tables_are_the_benchs_figures(doc: Path) -> None:
    """README.md and docs/operations.md show bench/capacity.json, not a hand formula: after
    `make capacity`, commit all three."""
    rows = json.loads((capacity.ROOT / "bench" / "capacity.json").read_text())["rows"]
    text = doc.read_text()
    assert capacity.with_table(text, capacity.markdown(rows)) == text
