"""Bench section [5]: SIGKILL to the issue running again, on the example workflows' schedule.

The real product (a wrapper SIGKILLed mid-run, `reconcile` passes, `run` workers) runs against
the emulator through the rig's proxy; the harness plays GitHub Actions on a compressed clock
(SCALE real seconds per bench second: 1 bench second = 1 real minute):

* the reconcile workflow's schedule: a pass every R, first one at a random phase after the kill,
  judged from another machine (`unshare` namespaces, as a hosted runner sees a self-hosted
  worker's claim: by its heartbeat only), or, for the self-hosted reconciler, on the worker's
  own machine (its process table shows the holder gone: no stale_after wait);
* the worker workflow's schedule: `run --next --drain` every D, at a random phase;
* with `dispatch.workflow` set, the Actions side of a workflow_dispatch: when the proxy records
  one, `run --issue N` starts after the dispatch latency L (the synthetic run goes queued ->
  in_progress -> completed, which the dispatcher reads to start no second run).

It measures SIGKILL -> the first child of a new run of that issue starting (from the children's
own log, whichever path got there first). Periods come from the example workflows' cron lines
and `stale_after`/`heartbeat.interval` from the configuration defaults, all divided by SCALE.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from faults import Machines, child_events, wait_child_started
from rig import Proxy, wait_until
from rig.harness import Orion, Proc

from orion_action.config import Config

ROOT = Path(__file__).resolve().parents[1]
SCALE = 60.0  # real seconds per bench second
WORKFLOW = "orion-worker.yml"
COMMENT = r"/issues/comments/\d+$"
V01_RECONCILE_PERIOD_MIN = 5.0  # v0.1's examples/orion-reconcile.yml: cron '3-59/5 * * * *'


def cron_period_minutes(path: Path) -> float:
    """The period of the first `A-59/P * * * *` (or `*/P`) cron line of a workflow file."""
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.search(r"cron:\s*'(?:\d+-59|\*)/(\d+) \* \* \* \*'", line)
        if m:
            return float(m.group(1))
    raise ValueError(f"no periodic cron line in {path}")


@dataclass(frozen=True)
class Settings:
    """One scenario, in real units (minutes, seconds); the bench divides them by SCALE."""

    name: str
    reconcile_period_min: float
    drain_period_min: float
    dispatch: bool
    stale_after_min: float
    interval_min: float
    dispatch_latency_s: float = 20.0  # workflow_dispatch -> the worker job starting
    cron_late_max_min: float = 0.0  # each scheduled start is late by U(0, this)
    judge_here: bool = False  # the reconciler runs on the worker's machine (self-hosted example)

    def target_s(self) -> float:
        """The schedule's share of the target, in bench seconds: the claim goes stale (unless the
        judge sees the process table), the next pass comes within one reconcile period, then
        the dispatch latency."""
        s = self.scaled()
        stale = 0.0 if self.judge_here else s["stale_after_s"]
        return stale + s["reconcile_period_s"] + s["dispatch_latency_s"]

    def scaled(self) -> dict[str, float]:
        return {"reconcile_period_s": self.reconcile_period_min * 60 / SCALE,
                "drain_period_s": self.drain_period_min * 60 / SCALE,
                "stale_after_s": self.stale_after_min * 60 / SCALE,
                "interval_s": self.interval_min * 60 / SCALE,
                "dispatch_latency_s": self.dispatch_latency_s / SCALE,
                "cron_late_max_s": self.cron_late_max_min * 60 / SCALE}

    def config_text(self) -> str:
        s = self.scaled()
        text = (f"heartbeat: {{interval: {s['interval_s']:g}, stale_after: {s['stale_after_s']:g}}}\n"
                "run: {kill_grace: 1}\n")
        if self.dispatch:
            text += f"dispatch: {{workflow: {WORKFLOW}, max_runs: 4}}\n"
        return text


def example_settings() -> list[Settings]:
    """Before: v0.1's examples (hosted reconcile every 5 min, drain every 15, no dispatch).
    After: today's examples (hosted reconcile and drain on their cron lines, dispatch set); and
    the same with the self-hosted reconciler (its own cron line, judging on the worker's
    machine by the process table, so no stale_after wait)."""
    defaults = Config()
    stale, interval = defaults.stale_after / 60, defaults.heartbeat_interval / 60
    examples = ROOT / "examples"
    drain = cron_period_minutes(examples / "orion-worker.yml")
    hosted = cron_period_minutes(examples / "orion-reconcile.yml")
    out = [Settings("before", V01_RECONCILE_PERIOD_MIN, drain, False, stale, interval),
           Settings("after", hosted, drain, True, stale, interval)]
    here = cron_period_minutes(examples / "orion-reconcile-self-hosted.yml")
    out.append(Settings("after_self_hosted_reconciler", here, drain, True, stale, interval,
                        judge_here=True))
    return out


class Scenario:
    """One SIGKILL and the schedules that bring the issue back, until a new child starts."""

    def __init__(self, settings: Settings, proxy: Proxy, repo: Any, orion: Orion, seed: int,
                 other_machine: bool):
        self.s, self.proxy, self.repo, self.orion = settings, proxy, repo, orion
        self.scaled = settings.scaled()
        self.rng = random.Random(seed)
        self.prefix = Machines(orion.workdir).other() if other_machine and not settings.judge_here else []
        self.go = orion.workdir / "go"
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.procs: list[Proc] = []
        self.passes: list[tuple[float, float]] = []  # (start, end), time.time()
        self.spawned: dict[str, float] = {}  # child log name -> when its wrapper was started
        self.dispatched: list[float] = []  # when each workflow_dispatch was recorded
        self.fired = {"reconcile": 0, "drain": 0, "dispatch": 0}
        self.phases: dict[str, float] = {}

    def _child(self, tag: str) -> list[str]:
        with self.lock:
            self.fired[tag] += 1
            k = self.fired[tag]
            self.spawned[f"pickup-{tag}-{k}.log"] = time.time()
        return self.orion.child_argv(self.orion.workdir / f"pickup-{tag}-{k}.log", until=self.go)

    def _spawn(self, args: list[str], prefix: list[str] | None = None) -> Proc:
        proc = self.orion.spawn(args, prefix or [])
        with self.lock:
            self.procs.append(proc)
        return proc

    def _cron(self, name: str, period: float, t0: float, fire: Callable[[], None]) -> threading.Thread:
        phase = self.rng.uniform(0, period)
        self.phases[name] = phase
        late = self.scaled["cron_late_max_s"]

        def loop() -> None:
            t = t0 + phase
            while not self.stop.wait(max(0.0, t + self.rng.uniform(0, late) - time.time())):
                fire()
                t = max(t + period, time.time())  # after a fire slower than the period, the next at once

        thread = threading.Thread(target=loop, name=f"{self.s.name}-{name}", daemon=True)
        thread.start()
        return thread

    def _reconcile(self) -> None:
        with self.lock:
            self.fired["reconcile"] += 1
        t = time.time()
        proc = self._spawn(["reconcile", "--config", str(self.orion.config)], self.prefix)
        proc.wait(120)  # passes never overlap (the workflow's concurrency group)
        self.passes.append((t, time.time()))

    def _drain(self) -> None:
        running = [p for p in self.procs if "--drain" in p.argv and p.poll() is None]
        if running:  # the worker's concurrency group: a drain is already at work
            return
        self._spawn(["run", "--config", str(self.orion.config), "--next", "--drain", "--",
                     *self._child("drain")])

    def _actions(self) -> threading.Thread:
        """GitHub Actions' side of workflow_dispatch: each recorded dispatch starts `run --issue N`
        after the dispatch latency."""
        owner, name = self.repo.owner, self.repo.name

        def job(d: dict[str, Any]) -> None:
            if self.stop.wait(self.scaled["dispatch_latency_s"]):
                return
            self.proxy.set_workflow_run(owner, name, d["run_id"], "in_progress")
            proc = self._spawn(["run", "--config", str(self.orion.config), "--issue", d["inputs"]["issue"],
                                "--", *self._child("dispatch")])
            rc = proc.popen.wait()
            self.proxy.set_workflow_run(owner, name, d["run_id"], "completed",
                                        "success" if rc == 0 else "failure")

        def loop() -> None:
            seen = 0
            while not self.stop.wait(0.02):  # the harness's polling of the proxy's dispatch record
                new = self.proxy.dispatches[seen:]
                seen += len(new)
                for d in new:
                    self.dispatched.append(time.time())
                    threading.Thread(target=job, args=(d,), daemon=True).start()

        thread = threading.Thread(target=loop, name=f"{self.s.name}-actions", daemon=True)
        thread.start()
        return thread

    def run(self) -> dict[str, Any]:
        n = self.repo.create_issue(f"bench: pickup {self.s.name}", ["orion"])
        first = self.orion.workdir / "first.log"
        victim = self.orion.run(n, child=self.orion.child_argv(first))
        wait_child_started(first)
        self.proxy.wait_for("PATCH", COMMENT, n=2, status=200)  # "running" and one beat
        if self.s.dispatch:
            self.proxy.add_workflow(self.repo.owner, self.repo.name, WORKFLOW)
        t_kill = time.time()
        victim.kill(signal.SIGKILL)
        victim.wait(10)
        threads = [self._cron("reconcile", self.scaled["reconcile_period_s"], t_kill, self._reconcile),
                   self._cron("drain", self.scaled["drain_period_s"], t_kill, self._drain)]
        if self.s.dispatch:
            threads.append(self._actions())
        s = self.scaled
        bound = s["stale_after_s"] + s["reconcile_period_s"] + s["drain_period_s"] + s["cron_late_max_s"]

        def restarted() -> tuple[float, str] | None:
            starts = [(e["t"], log.name)
                      for log in self.orion.workdir.glob("pickup-*.log")
                      for e in child_events(log) if e["event"] == "start" and e["issue"] == str(n)]
            return min(starts) if starts else None

        try:
            t_start, log_name = wait_until(restarted, timeout=2 * bound + 60, interval=0.05,
                                       message=f"issue {n} did not run again ({self.s.name})")
        finally:
            self.stop.set()
            self.go.touch()
            for thread in threads:
                thread.join(150)
            with self.lock:
                procs = list(self.procs)
            for proc in procs:
                proc.wait(60)
        # The schedule's share: when the first worker that could pick the issue up was started
        # (for a dispatch: the dispatching pass's start plus the time to the worker's start, so
        # the pass's own run time is not counted). The rest is the product's own time (a pass,
        # a wrapper's start and claim), real seconds as taken here, not a share of the schedule.
        def share(log: str) -> float:
            if not log.startswith("pickup-dispatch"):
                return self.spawned[log] - t_kill
            sent = max(t for t in self.dispatched if t <= self.spawned[log])
            return max(a for a, _ in self.passes if a <= sent) - t_kill + self.spawned[log] - sent

        candidates = [log_name] + [k for k in self.spawned if k.startswith("pickup-dispatch")]
        schedule = min(share(k) for k in candidates)
        path = log_name.split("-")[1]
        return {"seconds": t_start - t_kill, "path": path, "product_s": t_start - t_kill - schedule,
                "passes": [b - a for a, b in self.passes], "phases": dict(self.phases),
                "timeline": {"passes": [round(a - t_kill, 2) for a, _ in self.passes],
                             "dispatches": [round(t - t_kill, 2) for t in self.dispatched],
                             "workers": {k: round(t - t_kill, 2) for k, t in self.spawned.items()},
                             "child": round(t_start - t_kill, 2)}}


def run_section(bench: Any) -> None:
    """Section [5] of bench.py: `bench` gives setup(), row(), results and quick."""
    reps = 1 if bench.quick else 4
    other = os.geteuid() == 0 and shutil.which("unshare") is not None
    settings = example_settings()
    print(f"\n[5] SIGKILL to running again, example workflows' schedules at 1 s = {SCALE / 60:g} min "
          f"real ({reps} run(s) each, judge: {'another machine' if other else 'this machine (not root)'})")
    jobs = [(s, rep) for s in settings for rep in range(reps)]
    outcomes: dict[str, list[dict[str, Any]]] = {s.name: [] for s in settings}
    errors: list[BaseException] = []

    def one(s: Settings, rep: int) -> None:
        try:
            proxy, repo, orion, _ = bench.setup(f"pickup-{s.name}-{rep}", s.config_text())
            scenario = Scenario(s, proxy, repo, orion, seed=1000 + rep, other_machine=other)
            outcome = scenario.run()
            outcomes[s.name].append({**outcome, "rep": rep})
        except BaseException as exc:  # reported after the others finish
            errors.append(exc)

    # The scenarios mostly wait on their schedules: run them side by side (at most 4 at once).
    pending = list(jobs)
    while pending:
        batch, pending = pending[:4], pending[4:]
        threads = [threading.Thread(target=one, args=job) for job in batch]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    if errors:
        raise errors[0]

    out: dict[str, Any] = {"scale_real_seconds_per_bench_second": SCALE,
                           "judge": "another_machine" if other else "same_machine (not root: no unshare)",
                           "repetitions": reps}
    for s in settings:
        got = sorted(outcomes[s.name], key=lambda o: o["rep"])  # rep k: the same random phases in each
        secs = [o["seconds"] for o in got]
        sched = [o["seconds"] - o["product_s"] for o in got]  # the schedule's share, bench seconds
        real_min = [(x * SCALE + o["product_s"]) / 60 for x, o in zip(sched, got, strict=True)]
        passes = [p for o in got for p in o["passes"]]
        sc = s.scaled()
        target = s.target_s()
        bound = ((0.0 if s.judge_here else sc["stale_after_s"]) + sc["reconcile_period_s"]
                 + sc["drain_period_s"] + sc["cron_late_max_s"])
        out[s.name] = {
            "settings_real": asdict(s), "settings_scaled_s": {k: round(v, 3) for k, v in sc.items()},
            "seconds": [round(x, 2) for x in secs], "median_s": round(statistics.median(secs), 2),
            "max_s": round(max(secs), 2),
            "product_seconds_on_the_winning_path": [round(o["product_s"], 2) for o in got],
            "schedule_share_s": [round(x, 2) for x in sched],
            "real_minutes_equivalent": [round(x, 1) for x in real_min],
            "real_minutes_median": round(statistics.median(real_min), 1),
            "real_minutes_max": round(max(real_min), 1),
            "picked_up_by": [o["path"] for o in got],
            "reconcile_pass_s": {"median": round(statistics.median(passes), 2) if passes else None,
                                 "max": round(max(passes), 2) if passes else None},
            "cron_phases_s": [{k: round(v, 2) for k, v in o["phases"].items()} for o in got],
            "timelines_s": [o["timeline"] for o in got],
            "target_schedule_share_s": round(target, 2) if s.dispatch else None,
            "target_real_min": round(target * SCALE / 60, 1) if s.dispatch else None,
            "schedule_bound_s": round(bound, 2),
        }
        label = {"before": "before (v0.1 examples, no dispatch)",
                 "after": "after (hosted reconciler, dispatch)",
                 "after_self_hosted_reconciler": "after (self-hosted reconciler, dispatch)"}[s.name]
        bench.row(f"SIGKILL to running again, {label}", statistics.median(secs), "s median")
        bench.row("  ... max", max(secs), "s")
        worst = max(sched)
        if s.dispatch:
            what = "R+L" if s.judge_here else "stale+R+L"
            bench.row("  ... schedule share (minus product time), max", worst, "s",
                      f"<= {target:.1f} s ({what})", worst <= target)
        else:
            bench.row("  ... schedule share (minus product time), max", worst, "s",
                      f"bound {bound:.0f} s (stale+R+D)")
        shown = f"{statistics.median(real_min):.1f} / {max(real_min):.1f}"
        bench.row("  ... in real time, median / max", shown, "min",
                  f"target {target * SCALE / 60:.1f} min" if s.dispatch else "")
    bench.results["sigkill_to_running_again"] = out
