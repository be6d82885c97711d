"""Capacity, measured (issue 19, ADR 0045): how many concurrent claims one identity carries
inside GitHub's limits, on the in-memory GitHub with those limits enforced.

    python bench/capacity.py [--quick] [--out bench/capacity.json] [--markdown bench/capacity.md]

For C = 10, 50 and 100 concurrent claims of two-hour runs, on a GITHUB_TOKEN and on one
GitHub App identity, the real claim, holding (beats, fence, ending) and reconcile code runs
against tests/fakes/memory_github.py on virtual time (`ServerTime`: the server's clock, moved
by this event loop), with the configuration's defaults. Workers and the reconciler share the
identity. Claims start spread over the first two hours; every run lasts two hours and is
replaced at once by a new claim of a freshly queued issue, so from the third hour on C claims
are live and C/2 end and start an hour. The figures are the last hour's (`--quick`: C = 10
and 50 on a GITHUB_TOKEN only).

GitHub's limits, as `GitHubLimits` enforces them (a request over one is refused: the client
gets Unavailable, as the adapter does once a Retry-After outlasts its retry budget):
- primary: 1,000 requests an hour per repository for a GITHUB_TOKEN, 5,000 for an App
  installation, in fixed hourly windows (the `x-ratelimit-reset` header);
- secondary: content-creating requests (every write here: comment posts and edits, labels)
  at most 80 a minute and 500 an hour per identity, over sliding windows;
- a 304 to a conditional read is free (ADR 0044).
Sources: docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api
("Primary rate limit for GITHUB_TOKEN in GitHub Actions": 1,000 per repository an hour;
"Primary rate limit for GitHub App installations": 5,000 at least; "About secondary rate
limits": "No more than 80 content-generating requests per minute and no more than 500
content-generating requests per hour"), and best-practices-for-using-the-rest-api ("Use
conditional requests if appropriate": a 304 does not count against the primary limit).

Not simulated: the trigger check's two reads per claim (the issue's events and the labeller's
permission, ADR 0033; the in-memory GitHub has no event list) are charged to the meter as
reads, and counted apart (`trigger_reads`). The Actions run lookup never happens here (no
holder dies).

The recovery bound that follows: a dead holder is released by the first reconcile pass after
its record's stale_after has run out, so at most the longest stale_after promised in the hour
plus one reconcile period (the hosted example's 15 minutes); judged on the holder's own
machine, one period.

Where one identity cannot carry C claims (C = 100: about 57 fit its 500 writes at the 30-minute
beat), a claimer finds the budget short before posting anything and the issue waits in the
queue (ADR 0060): the table shows the claims held at the end of the hour, the claims that
waited in it, and the runs lost (none may be).
"""

from __future__ import annotations

import argparse
import contextlib
import heapq
import itertools
import json
import sys
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for p in (ROOT, ROOT / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from fakes.memory_github import BOT, MemoryGitHub, MemoryServer, ServerTime  # noqa: E402

from orion_action.config import Config  # noqa: E402
from orion_action.core.beat import SHARE, WRITES_PER_HOUR, WRITES_PER_MINUTE  # noqa: E402
from orion_action.core.ending import finished  # noqa: E402
from orion_action.core.liveness import Machine  # noqa: E402
from orion_action.core.record import Holder  # noqa: E402
from orion_action.errors import GitHubError, NotClaimed  # noqa: E402
from orion_action.services.claiming import Claimer  # noqa: E402
from orion_action.services.holding import Holding, outage_bound  # noqa: E402
from orion_action.services.reconcile import Reconciler  # noqa: E402

HOUR = 3600.0
RUN_S = 2 * HOUR
RECONCILE_EVERY_S = 15 * 60.0  # examples/orion-reconcile.yml: '4-59/15 * * * *'
TRIGGER_READS = 2  # per claim, ADR 0033 (see the module's docstring)
IDENTITIES = {"GITHUB_TOKEN": 1000, "App": 5000}  # primary requests an hour
DOCS = (ROOT / "README.md", ROOT / "docs" / "operations.md")
TABLE_START = "<!-- capacity table: make capacity writes it from bench/capacity.json -->"
TABLE_END = "<!-- end of capacity table -->"
HOSTED = Machine(host="hosted", boot_id="hosted-boot", machine_id="hosted-id", pid_ns="hosted-ns")


class GitHubLimits:
    """GitHub's limits for one identity on one repository (the workers' and the reconciler's
    shared token), and the log of every request it admitted or refused."""

    def __init__(self, primary: int, start: float):
        self.primary = primary
        self.window_start = start
        self.used = 0  # charged in the current primary window
        self.writes: deque[float] = deque()  # admitted writes of the last hour
        self.charged = 0
        self.refunded = 0
        self.refused = 0
        self.log: list[tuple[float, bool, bool]] = []  # (time, write, charged) per admitted request
        self.refusals: list[float] = []

    def _roll(self, now: float) -> None:
        while now >= self.window_start + HOUR:
            self.window_start += HOUR
            self.used = 0
        while self.writes and self.writes[0] <= now - HOUR:
            self.writes.popleft()

    def admit(self, login: str, write: bool, now: float) -> float | None:
        self._roll(now)
        wait: float | None = None
        if self.used >= self.primary:
            wait = self.window_start + HOUR - now
        elif write:
            last_minute = [t for t in self.writes if t > now - 60]
            if len(last_minute) >= WRITES_PER_MINUTE:
                wait = last_minute[0] + 60 - now
            elif len(self.writes) >= WRITES_PER_HOUR:
                wait = self.writes[0] + HOUR - now
        if wait is not None:
            self.refused += 1
            self.refusals.append(now)
            return max(1.0, wait)
        self.used += 1
        self.charged += 1
        if write:
            self.writes.append(now)
        self.log.append((now, write, True))
        return None

    def refund(self, login: str, now: float) -> None:
        self.used -= 1
        self.charged -= 1
        self.refunded += 1
        t, write, _ = self.log[-1]
        self.log[-1] = (t, write, False)

    def budget(self, login: str, now: float) -> Any:
        from orion_action.ports import Budget

        self._roll(now)
        return Budget(self.primary, max(0, self.primary - self.used), self.window_start + HOUR - now)


@dataclass
class Slot:
    """One worker: a run after another, each on its own (virtual) machine."""

    index: int
    holding: Holding | None = None
    runs: int = 0
    ends_at: float = 0.0


@dataclass
class Sim:
    claims: int
    identity: str
    hours: float = 4.0
    config: Config = field(default_factory=Config)
    clients: list[MemoryGitHub] = field(default_factory=list)
    trigger_reads: int = 0
    refused_claims: list[str] = field(default_factory=list)  # claim attempts a limit refused
    deferred_claims: list[tuple[float, str]] = field(default_factory=list)  # waited: budget short (ADR 0060)
    lost: list[str] = field(default_factory=list)  # started runs that lost their claim
    releases: list[str] = field(default_factory=list)  # a pass released a running holder
    repairs: list[str] = field(default_factory=list)  # a pass repaired a claim that never ran
    promises: list[tuple[float, float, float, str]] = field(default_factory=list)  # t, interval, stale, why
    passes: list[float] = field(default_factory=list)
    beat_failures: int = 0

    def __post_init__(self) -> None:
        self.server = MemoryServer()
        self.clock = ServerTime(self.server)
        self.t0 = self.server.clock.monotonic()
        self.limits = GitHubLimits(IDENTITIES[self.identity], self.t0)
        self.server.meter = self.limits
        self.events: list[tuple[float, int, Callable[[], None]]] = []
        self.seq = itertools.count()
        self.pid = itertools.count(1000)

    # -- the event loop ---------------------------------------------------------------------

    def at(self, t: float, what: Callable[[], None]) -> None:
        heapq.heappush(self.events, (t, next(self.seq), what))

    def now(self) -> float:
        return self.server.clock.monotonic() - self.t0

    def run(self) -> None:
        self.slots = [Slot(k) for k in range(self.claims)]
        for slot in self.slots:
            self.at(slot.index * RUN_S / self.claims, lambda slot=slot: self.start(slot))
        p = 4 * 60.0
        while p < self.hours * HOUR:
            self.at(p, self.reconcile)
            p += RECONCILE_EVERY_S
        while self.events:
            t, _, what = heapq.heappop(self.events)
            if t >= self.hours * HOUR:
                break
            if t > self.now():
                self.server.clock.advance(t - self.now())
            what()

    def client(self) -> MemoryGitHub:
        gh = self.server.client(BOT)
        self.clients.append(gh)
        return gh

    # -- actors -----------------------------------------------------------------------------

    def start(self, slot: Slot) -> None:
        """A worker (`run --next`) claims the queued issue a person just queued, starts its
        child with a first beat (the record says `running`), and beats on."""
        self.server.create_issue(f"work {slot.index}.{slot.runs}", [self.config.labels.queue])
        pid = next(self.pid)
        name = f"m{slot.index}-{slot.runs}"
        here = Machine(host=name, boot_id=f"{name}-boot", machine_id=f"{name}-id", pid_ns=f"{name}-ns")
        holder = Holder(here.host, here.boot_id, here.machine_id, here.pid_ns, pid, float(pid))
        gh = self.client()
        claimer = Claimer(gh, self.config, lambda _: None, self.clock, here, holder, sight=lambda *_: None)
        claimer.approval = self.trigger_check
        try:
            claim = claimer.claim_next(None)
        except GitHubError as exc:  # refused by a limit, say: the worker's next schedule tries again
            self.refused_claims.append(f"claim {name}: {exc}")
            self.at(self.now() + RECONCILE_EVERY_S, lambda: self.start(slot))
            return
        except NotClaimed as exc:  # the budget is short (ADR 0060): the next schedule tries again
            self.deferred_claims.append((self.now(), f"claim {name}: {exc}"))
            self.at(self.now() + RECONCILE_EVERY_S, lambda: self.start(slot))
            return
        slot.holding = Holding(gh, claim, self.config, lambda _: None, self.clock, here,
                               sight=lambda *_: None)
        slot.holding.child_pid = pid + 1
        slot.runs += 1
        slot.ends_at = self.now() + RUN_S
        self.beat(slot, slot.holding)

    def trigger_check(self, gh: Any, issue: Any, history: Any) -> None:
        for _ in range(TRIGGER_READS):
            self.trigger_reads += 1
            if self.limits.admit(BOT, False, self.server.clock.monotonic()) is not None:
                raise GitHubError("GitHub limited the trigger check (403)")

    def beat(self, slot: Slot, h: Holding) -> None:
        if slot.holding is not h:
            return
        if self.now() >= slot.ends_at:
            self.end(slot, h)
            return
        try:
            h.beat()
        except GitHubError:
            self.beat_failures += 1
        if h.lost is not None:
            self.lost.append(f"#{h.number}: {h.lost}")
            slot.holding = None
            self.at(self.now(), lambda: self.start(slot))
            return
        if h.lease_left() <= 0:  # the wrapper stops the child and records the outage (ADR 0019)
            self.lost.append(f"#{h.number}: the lease ran out")
            with contextlib.suppress(GitHubError):
                h.record_outage("the lease ran out", outage_bound(self.config, h.promise.stale_after),
                                lambda _: True)
            slot.holding = None
            self.at(self.now(), lambda: self.start(slot))
            return
        r = h.claim.record
        self.promises.append((self.now(), r.interval, r.stale_after, h.promise.why))
        self.at(min(self.now() + h.beat_interval(), slot.ends_at), lambda: self.beat(slot, h))

    def end(self, slot: Slot, h: Holding) -> None:
        try:
            why = h.conclude(finished(self.config, 0))
        except GitHubError as exc:
            why = str(exc)
        if why is not None:
            self.lost.append(f"#{h.number} ending: {why}")
        slot.holding = None
        self.start(slot)

    def reconcile(self) -> None:
        """A pass of the hosted reconciler (another machine: the heartbeat decides)."""
        self.passes.append(self.now())
        r = Reconciler(self.client(), self.config, lambda _: None, here=HOSTED, sight=lambda *_: None)
        try:
            for s in r.survey():
                if s.plan.action.value != "keep":
                    running = any(x.holding is not None and x.holding.number == s.issue.number
                                  for x in self.slots)
                    what = f"#{s.issue.number}: {s.plan.action.value} ({s.plan.reason})"
                    (self.releases if running else self.repairs).append(what)
                r.execute(s)
        except GitHubError as exc:
            self.repairs.append(f"pass at {self.now():.0f}s failed: {exc}")

    # -- figures ----------------------------------------------------------------------------

    def figures(self) -> dict[str, Any]:
        start = (self.hours - 1) * HOUR
        hour = [(t - self.t0, w, c) for t, w, c in self.limits.log if t - self.t0 >= start]
        charged = [(t, w) for t, w, c in hour if c]
        minutes = Counter(int((t - start) // 60) for t, _ in charged)
        write_minutes = Counter(int((t - start) // 60) for t, w in charged if w)
        promised = [p for p in self.promises if p[0] >= start]
        intervals = sorted(p[1] for p in promised)
        stale = max((p[2] for p in promised), default=self.config.stale_after)
        requests_h = len(charged)
        writes_h = sum(1 for _, w in charged if w)
        primary = IDENTITIES[self.identity]
        shares = {
            "requests_per_hour": requests_h / primary,
            "writes_per_hour": writes_h / WRITES_PER_HOUR,
            "peak_minute_writes": max(write_minutes.values(), default=0) / WRITES_PER_MINUTE,
        }
        return {
            "claims": self.claims,
            "identity": self.identity,
            "primary_limit_per_hour": primary,
            "requests_per_hour": requests_h,
            "free_304s_per_hour": sum(1 for _, _, c in hour if not c),
            "writes_per_hour": writes_h,
            "peak_minute_requests": max(minutes.values(), default=0),
            "peak_minute_writes": max(write_minutes.values(), default=0),
            "refused_per_hour": sum(1 for t in self.limits.refusals if t - self.t0 >= start),
            "share_of_limits": shares,
            "within_80_percent": all(v < SHARE for v in shares.values()),
            "beat_interval_s": {
                "median": intervals[len(intervals) // 2] if intervals else None,
                "max": intervals[-1] if intervals else None,
            },
            "beat_reasons": dict(Counter(p[3] for p in promised)),
            "stale_after_s": stale,
            "recovery_bound_s": stale + RECONCILE_EVERY_S,
            "reconcile_every_s": RECONCILE_EVERY_S,
            "claims_refused": len(self.refused_claims),
            "claims_deferred_per_hour": sum(1 for t, _ in self.deferred_claims if t >= start),
            "live_claims_at_end": sum(1 for x in self.slots if x.holding is not None),
            "runs_lost": len(self.lost),
            "running_holders_released": len(self.releases),
            "repairs": len(self.repairs),
            "beats_failed": self.beat_failures,
            "examples": (self.refused_claims[:2] + [x for _, x in self.deferred_claims[-1:]] + self.lost[:2]
                         + self.releases[:2] + self.repairs[:2]),
        }


def simulate(claims: int, identity: str, hours: float = 4.0) -> Sim:
    sim = Sim(claims, identity, hours)
    sim.run()
    return sim


def markdown(rows: list[dict[str, Any]]) -> str:
    """The capacity table of README.md and docs/operations.md, from the figures."""
    out = [
        "| identity | concurrent claims | beat | stale_after | requests/h (of limit) | "
        "content writes/h (of 500) | peak minute: requests, writes (of 80) | refused | "
        "claims held, waiting/h | runs lost | recovery bound |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        beat = r["beat_interval_s"]["max"] or 0
        share = r["share_of_limits"]
        out.append(
            f"| {'`GITHUB_TOKEN`' if r['identity'] == 'GITHUB_TOKEN' else 'one App identity'} "
            f"| {r['claims']} "
            f"| {_minutes(beat)} | {_minutes(r['stale_after_s'])} "
            f"| {r['requests_per_hour']} ({share['requests_per_hour']:.0%}) "
            f"| {r['writes_per_hour']} ({share['writes_per_hour']:.0%}) "
            f"| {r['peak_minute_requests']}, {r['peak_minute_writes']} "
            f"| {r['refused_per_hour']} | {r['live_claims_at_end']}, {r['claims_deferred_per_hour']} "
            f"| {r['runs_lost']} | {_minutes(r['recovery_bound_s'])} |"
        )
    return "\n".join(out) + "\n"


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 60 else f"{seconds:.0f} s"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="C = 10 and 50 on a GITHUB_TOKEN only")
    ap.add_argument("--out", default=str(ROOT / "bench" / "capacity.json"))
    ap.add_argument("--markdown", default=str(ROOT / "bench" / "capacity.md"))
    ap.add_argument("--docs", action="store_true",
                    help="also put the table into README.md and docs/operations.md (between their markers)")
    args = ap.parse_args()
    cases = [(c, i) for i in IDENTITIES for c in (10, 50, 100)]
    if args.quick:
        cases = [(10, "GITHUB_TOKEN"), (50, "GITHUB_TOKEN")]
    rows = []
    for claims, identity in cases:
        row = simulate(claims, identity).figures()
        rows.append(row)
        print(f"{identity:>12} C={claims:<3} requests/h {row['requests_per_hour']:>5} "
              f"writes/h {row['writes_per_hour']:>4} beat {row['beat_interval_s']['max']}s "
              f"stale_after {row['stale_after_s']:.0f}s refused {row['refused_per_hour']} "
              f"runs lost {row['runs_lost']} claims refused {row['claims_refused']}", flush=True)
    targets = {
        "C=50 under 80% of every limit on a GITHUB_TOKEN": _ok(rows, 50, "GITHUB_TOKEN"),
        "C=50 under 80% of one App identity's limits": _ok(rows, 50, "App"),
        "C=10 recovers within stale_after of 10 minutes": next(
            (r["stale_after_s"] <= 600 for r in rows if r["claims"] == 10), None),
        "within the limits no run loses its claim": all(
            r["runs_lost"] == 0 and r["claims_refused"] == 0 for r in rows if r["within_80_percent"]),
        "no running holder is released, at any load": all(r["running_holders_released"] == 0 for r in rows),
        "no run is lost, at any load (a claim waits instead, ADR 0060)": all(
            r["runs_lost"] == 0 for r in rows),
    }
    for name, ok in targets.items():
        print(f"{'PASS' if ok else 'MISS' if ok is not None else 'n/a '}  {name}")
    result = {
        "settings": {"config": "defaults", "run_s": RUN_S, "reconcile_every_s": RECONCILE_EVERY_S,
                     "measured": "the fourth virtual hour", "trigger_reads_per_claim": TRIGGER_READS},
        "targets": targets,
        "rows": rows,
    }
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    Path(args.markdown).write_text(markdown(rows))
    print(f"wrote {args.out} and {args.markdown}")
    if args.docs:
        for doc in DOCS:
            doc.write_text(with_table(doc.read_text(), markdown(rows)))
            print(f"updated the capacity table in {doc.relative_to(ROOT)}")
    return 0


def with_table(text: str, table: str) -> str:
    """`text` with the part between the capacity markers replaced by `table`."""
    head, rest = text.split(TABLE_START, 1)
    _, tail = rest.split(TABLE_END, 1)
    return f"{head}{TABLE_START}\n{table}{TABLE_END}{tail}"


def _ok(rows: list[dict[str, Any]], claims: int, identity: str) -> bool | None:
    return next((bool(r["within_80_percent"]) for r in rows
                 if r["claims"] == claims and r["identity"] == identity), None)


if __name__ == "__main__":
    raise SystemExit(main())
