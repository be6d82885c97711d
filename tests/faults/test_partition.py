"""Partition: the holder is cut off from GitHub while its child runs.

The holder talks to GitHub through its own proxy, which the test cuts off (every request
blackholed: nothing reaches the emulator, nothing comes back); the reconciler and a second
worker talk through another proxy in front of the same emulator. The holder must stop its
child before stale_after (its renew deadline is 2/3 of it); the reconciler, judging from
another machine, may requeue only after stale_after; the second worker then claims and runs.
From the children's own timestamps, the two runs never overlap (invariant 1).
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator

import pytest
from rig import Emulator, Proxy, RepoHandle, wait_until
from rig.harness import STALE_AFTER, Orion, assert_clean_stderr

from faults import (
    Machines,
    actions_of,
    assert_consistent,
    child_events,
    last_write_to,
    spans,
    until_action,
    view,
    wait_child_started,
    wait_children_gone,
)
from orion_action.core.record import HOLDER_END, ReleaseAction, State

COMMENT = r"/issues/comments/\d+$"


@pytest.fixture
def other_proxy(emulator: Emulator) -> Iterator[Proxy]:
    with Proxy(emulator.url, tokens=emulator.tokens,
               upstream_tokens=emulator.lease_tokens()) as p:
        yield p


# Slow: tests/integration/test_run_faults.py cuts a holder off in `make test`; this adds the next run.
@pytest.mark.slow
def test_cut_off_holder_stops_before_stale_and_the_next_run_never_overlaps(
        orion: Orion, proxy: Proxy, other_proxy: Proxy, repo: RepoHandle, machines: Machines):
    n = repo.create_issue("partitioned", ["orion"])
    log = orion.workdir / "children.log"
    holder = orion.run(n, stage="build", child=orion.child_argv(log))
    wait_child_started(log)
    proxy.wait_for("PATCH", COMMENT, n=3, status=200)  # running, and two beats
    cid = view(repo, n).log.claims[0].comment_id

    proxy.cut_off(True)
    cut_at = time.time()
    # The last beat that may have reached GitHub: any edit that arrived before the cut (one in
    # flight may still land). Nothing of the holder's reaches GitHub after this.
    last_beat = max(e.time for e in proxy.matching("PATCH", rf"/issues/comments/{cid}$")
                    if e.time <= cut_at and (e.status is None or e.status < 300))

    # Seen from another machine, through a proxy that still answers, while the holder may
    # still be running: keep while the heartbeat is fresh, requeue once it is stale.
    clear = orion.with_api(other_proxy.url)
    elsewhere = machines.other()

    def kept_while_fresh(plan: dict, ended: float) -> None:
        if ended < last_beat + STALE_AFTER:
            assert actions_of(plan, n) == ["keep"], plan

    _, requeued_at = until_action(clear, n, "requeue", elsewhere, timeout=STALE_AFTER + 20,
                                  every=kept_while_fresh)
    assert requeued_at >= last_beat + STALE_AFTER
    assert last_write_to(proxy, cid) <= last_beat

    second = clear.run(n, child=clear.child_argv(log, seconds=1))
    assert second.wait() == 0, second.stderr
    assert_clean_stderr(second)

    # The holder gave up on its own and stopped the child; it still runs, trying to record
    # that GitHub's outage (not the run) ended it (ADR 0019). Nothing of it reached GitHub.
    wait_until(lambda: "cannot record the outage yet" in holder.stderr or holder.poll() is not None,
               10, message=holder.stderr)
    assert holder.poll() is None, holder.stderr
    assert last_write_to(proxy, cid) <= last_beat
    healed = time.time()
    proxy.cut_off(False)  # the partition heals: the old holder writes its own record, no label
    assert holder.wait(STALE_AFTER + 15) == 76, holder.stderr
    assert_clean_stderr(holder)
    assert not [e for e in proxy.matching() if "/labels" in e.path and e.method != "GET" and e.time >= healed]
    wait_children_gone(log)
    runs = spans(log)
    assert len(runs) == 2 and all(r.end is not None for r in runs), runs
    first, then = runs
    ends = [e for e in child_events(log) if e["event"] == "end" and e["pid"] == first.pid]
    assert ends[0].get("signal") == signal.SIGTERM, ends  # stopped, not finished
    assert first.end < last_beat + STALE_AFTER, (
        f"the child ran {first.end - last_beat:.1f}s past the last beat (stale after {STALE_AFTER}s)")
    assert first.end < then.start, f"the two runs overlap: {runs}"

    v = assert_consistent(repo, n, "ready")
    old = v.log.claims[0].record
    assert old.state is State.INTERRUPTED and old.counts_attempt is False, old
    assert len(v.log.claims) == 2
    # The pass's release, then the old holder's outage marker, which excuses the attempt (ADR 0092).
    release, marker = (t.tombstone for t in v.log.tombstones)
    assert release.token == marker.token == v.log.claims[0].record.token
    assert (marker.by, marker.action, marker.counts_attempt) == (HOLDER_END, ReleaseAction.INTERRUPTED, False)
