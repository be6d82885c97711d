"""Clock skew: the holder's clock ten minutes fast, the judge's ten minutes off the other way.

Ages are measured on GitHub's clock (the comment's updated_at against the Date header of the
same response), so neither clock may change a verdict: from another machine the holder is alive
while it beats, however long it runs, and dead after a SIGKILL only once its last beat is older
than stale_after, not before (a judge trusting its own slow clock would never call it dead, a
fast one at once).

Both sides run under libfaketime (Debian package `faketime`, `make system-deps`), with
FAKETIME_DONT_FAKE_MONOTONIC=1: a faked monotonic clock makes every Python threading wait sleep
for the whole offset (see faults.faketime_prefix). That package is more than `make deps`
installs, so the whole module is in the slow suite (`make test-slow` installs it); the fast
suite covers the rule itself in tests/unit/test_liveness.py (ages on GitHub's clock, a
heartbeat from the future is unknown).
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import time

import pytest
from rig import Proxy, RepoHandle, wait_until
from rig.harness import INTERVAL, STALE_AFTER, Orion, assert_clean_stderr

from faults import (
    Machines,
    actions_of,
    assert_consistent,
    child_events,
    faketime_prefix,
    last_write_to,
    until_action,
    view,
    wait_child_started,
    wait_children_gone,
)

pytestmark = pytest.mark.slow  # needs Debian's faketime: `make test-slow` installs it

SKEW_S = 600.0


def test_faketime_really_shifts_the_clock_of_the_product(orion: Orion):
    """The premise: under the prefix, the wall clock is shifted and threads still wait right."""
    assert shutil.which("faketime"), "faketime is missing: run `make system-deps`"
    log = orion.workdir / "skewed.log"
    started = time.time()
    # A faked monotonic clock would make the child's 0.3 s sleep last 600 s: the timeout (a
    # hang guard far from both) catches that without a clock bound that load could break.
    subprocess.run([*faketime_prefix("+10m"), *orion.child_argv(log, seconds=0.3)], check=True,
                   timeout=120)
    (start,) = [e for e in child_events(log) if e["event"] == "start"]
    assert start["t"] - started > SKEW_S - 30


@pytest.mark.parametrize("judge_skew", ["-10m", "+10m"])
def test_verdicts_are_judged_on_githubs_clock(judge_skew: str, orion: Orion, proxy: Proxy,
                                              repo: RepoHandle, machines: Machines):
    n = repo.create_issue("skewed", ["orion"])
    log = orion.workdir / "children.log"
    holder = orion.run(n, child=orion.child_argv(log), prefix=faketime_prefix("+10m"))
    (start,) = wait_child_started(log)
    assert start["t"] - time.time() > SKEW_S - 30  # the holder's side really runs fast
    judge = [*machines.other(), *faketime_prefix(judge_skew)]

    # A healthy run, watched for longer than stale_after: alive on every look.
    watched_from = time.monotonic()
    while time.monotonic() - watched_from < STALE_AFTER + 2 * INTERVAL:
        (claim,) = orion.status(prefix=judge)["claims"]
        assert claim["issue"] == n and claim["verdict"] == "alive", claim
        assert 0 <= claim["heartbeat_age_s"] < STALE_AFTER, claim
        plan = orion.reconcile(prefix=judge)
        assert actions_of(plan, n) == ["keep"], plan
    assert holder.poll() is None

    holder.kill(signal.SIGKILL)
    holder.wait()
    wait_children_gone(log)
    assert_clean_stderr(holder)
    cid = view(repo, n).log.claims[0].comment_id
    last = last_write_to(proxy, cid)

    def kept_while_fresh(plan: dict, ended: float) -> None:
        if ended < last + STALE_AFTER:
            assert actions_of(plan, n) == ["keep"], plan

    (claim,) = orion.status(prefix=judge)["claims"]
    if time.time() < last + STALE_AFTER:
        assert claim["verdict"] == "alive", claim
    _, dead_at = until_action(orion, n, "requeue", judge, timeout=STALE_AFTER + 20,
                                        every=kept_while_fresh)
    # Not before stale_after, and not much after it either: the clock used is GitHub's.
    assert last + STALE_AFTER <= dead_at < last + STALE_AFTER + 10
    assert_consistent(repo, n, "queued")
    wait_until(lambda: holder.poll() is not None)
