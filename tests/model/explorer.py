"""A seeded random explorer over the protocol's world (tests/model/world.py).

Hypothesis's stateful testing (test_protocol_model.py) shrinks well but spends its examples on
short, shallow runs. The explorer walks long weighted random episodes instead, biased toward
what breaks protocols: several claimers racing for one issue, failures injected right at an
actor's next write, late writes landing, list lag above the settle, people acting in between.

Every action is a plain tuple (`Act`), applied by `apply`, so an episode is a list that
replays exactly: a failure names its seed and episode, and `shrink` cuts its action list down
(dropping chunks while the same invariant still breaks) to a short trace a person can read.
"""

from __future__ import annotations

import contextlib
import random
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

from model.world import CLONE, CONFIG, GRAPHQL, HOSTED, KNOWN_HOLES, MACHINES, InvariantError, World

MAX_WORKERS = 6
MAX_RECONCILERS = 5
TIMES = (0.5, 1.0, 2.0, 3.0, CONFIG.heartbeat_interval, 25.0, CONFIG.stale_after, CONFIG.stale_after + 5)
LAGS = (0.0, 1.0, 2.5, 4.0)  # the most a write stays out of listings, per episode (LIST_SETTLE_S = 1)
WRITES = ("post_comment", "edit_comment", "add_labels", "remove_label", "delete_comment", "finish")
# With the one-request ending (ORION_MODEL_GRAPHQL=1, ADR 0076), also its partial answers: the
# record edit landed and the addition refused, or the other way round (on any other request,
# "unavailable").
PARTIAL = ("partial", "partial-edit")
KINDS = ("unavailable", "ambiguous", "lost", "limited", "late") + (PARTIAL if GRAPHQL else ())
Act = tuple[object, ...]


@dataclass
class Setup:
    """An episode's world: how many issues, how much list lag, whole-second stamps; and the
    switches `hostile_for` draws: a snapshot clone of m1 (every id shared), m2's wall clock
    skewed by `skew` seconds, VMs that pause (their boot clock frozen meanwhile), guardians
    that are SIGKILLed, passes that dispatch the worker workflow (runners pick the runs up), a
    second repository (one more issue there; `--next` and drains claim over both, passes
    reconcile both), children that are SIGSTOPped (and SIGCONTed), people who queue an issue a
    run holds (ADR 0099)."""

    issues: int = 1
    max_lag: float = 0.0
    whole_seconds: bool = True
    clones: bool = False
    lag_seed: str = "0"
    skew: float = 0.0
    pauses: bool = False
    guardians_die: bool = False
    dispatch: bool = False
    repos: int = 1
    halts: bool = False
    mid_run_queueing: bool = False

    def world(self) -> World:
        world = World(self.issues, self.max_lag, self.whole_seconds, self.lag_seed, self.clones,
                      skew={"m2": self.skew} if self.skew else None, repos=self.repos)
        world.pauses, world.guardians_die, world.dispatch = self.pauses, self.guardians_die, self.dispatch
        world.halts, world.mid_run_queueing = self.halts, self.mid_run_queueing
        return world


@dataclass
class Failure:
    seed: int
    episode: int
    step: int
    error: str
    trace: list[str]
    setup: Setup = field(default_factory=Setup)
    acts: list[Act] = field(default_factory=list)
    shrunk: list[str] | None = None

    def __str__(self) -> str:
        shown = self.shrunk if self.shrunk is not None else self.trace[-40:]
        what = "shrunk trace" if self.shrunk is not None else "last actions"
        tail = "\n  ".join(shown)
        return (
            f"invariant broken: seed {self.seed}, episode {self.episode}, after {self.step} actions "
            f"({self.setup}):\n{self.error}\n{what}:\n  {tail}"
        )


def _worker(world: World, name: object):  # noqa: ANN202
    return world.workers.get(str(name))


def apply(world: World, act: Act) -> bool:
    """Do `act`; False if it does not apply in this world (a replay after shrinking)."""
    kind = act[0]
    runnable = world.runnable()
    if kind == "step":
        if act[1] not in runnable:
            return False
        world.step(str(act[1]))
    elif kind == "burst":
        actor, times = str(act[1]), int(act[2])  # type: ignore[call-overload]
        if actor not in runnable:
            return False
        for _ in range(times):
            if actor not in world.runnable():
                break
            world.step(actor)
            world.check()
    elif kind == "race":  # every claimer one step, in turn: concurrent claims
        claimers = [a for a in runnable if a.endswith(".claim")]
        if not claimers:
            return False
        for _ in range(int(act[1])):  # type: ignore[call-overload]
            for a in claimers:
                if a in world.runnable():
                    world.step(a)
                    world.check()
    elif kind == "worker":
        if len(world.workers) >= MAX_WORKERS:
            return False
        world.spawn_worker(str(act[1]), act[2], drain=bool(act[3]))  # type: ignore[arg-type]
    elif kind == "drain-next":
        w = _worker(world, act[1])
        if w is None or len(world.workers) >= MAX_WORKERS or world.drain_next(w) is None:
            return False
    elif kind == "drain-exits":
        w = _worker(world, act[1])
        if w is None:
            return False
        world.drain_exits(w)
    elif kind == "reconciler":
        if world.reconcilers >= MAX_RECONCILERS:
            return False
        world.spawn_reconciler(str(act[1]))
    elif kind == "time":
        world.advance(float(act[1]))  # type: ignore[arg-type]
        world.react()
    elif kind == "fail":
        world.fail(str(act[1]), str(act[2]), int(act[3]))  # type: ignore[call-overload]
    elif kind == "land":
        if not world.delayed():
            return False
        world.land(int(act[1]) % len(world.delayed()))  # type: ignore[call-overload]
    elif kind == "pickup":
        if not world.dispatch or len(world.workers) >= MAX_WORKERS or world.pickup(str(act[1])) is None:
            return False
    elif kind == "halt":  # SIGSTOP of the child, or SIGCONT
        w = _worker(world, act[1])
        if w is None or not world.halts or not (world.child_alive(w) or w.halted_local is not None):
            return False
        world.child_halts(w)
    elif kind == "guardian":
        w = _worker(world, act[1])
        if w is None or not world.guardians_die or not world.child_alive(w):
            return False
        world.guardian_dies(w)
    elif kind in ("crash", "stall", "exit", "signal"):
        w = _worker(world, act[1])
        if w is None or w.done or w.crashed:
            return False
        if kind == "crash":
            world.crash(w)
        elif kind == "stall":
            w.stalled = not w.stalled
        elif kind == "exit":
            world.child_exits(w, int(act[2]))  # type: ignore[call-overload]
        else:
            world.signal(w)
        world.react()
    elif kind == "reboot":
        world.reboot(str(act[1]))
    elif kind == "pause":  # the VM pauses, or resumes
        m = str(act[1])
        if not world.pauses:
            return False
        if m in world.paused:
            world.resume_vm(m)
        else:
            world.pause_vm(m)
        world.react()
    elif kind == "person":
        what, n = str(act[1]), int(act[2])  # type: ignore[call-overload]
        if n not in world.issue_numbers:
            return False
        if what == "requeue":
            world.person_requeue(n)
        elif what == "requeue-running":
            world.person_queues_running(n)
        elif what == "cancel":
            world.person_cancel(n)
        elif what == "comment":
            world.person_comments(n)
        elif what == "delete":
            world.person_deletes_comment(n, int(act[3]))  # type: ignore[call-overload]
        elif what == "unlock":
            world.person_unlocks(n)
        elif what == "force":
            if world.reconcilers >= MAX_RECONCILERS + 1:
                return False
            world.spawn_forced_release(n)
        world.react()
    else:
        raise ValueError(f"unknown act {act!r}")
    return True


def _choose(world: World, rng: random.Random) -> Act:
    """What happens next, weighted; biased toward concurrent claims and failures at writes."""
    runnable = world.runnable()
    issues = world.issue_numbers
    live = [w for w in world.workers.values() if not (w.done or w.crashed)]
    acts: list[tuple[float, Act]] = []
    if runnable:
        actor = rng.choice(runnable)
        acts += [(50, ("step", actor)), (12, ("burst", actor, rng.randint(2, 10)))]
        if sum(a.endswith(".claim") for a in runnable) > 1:
            acts.append((10, ("race", rng.randint(1, 4))))
        at_write = [a for a in runnable if (world.sched.pending_op(a) or ("",))[0] in WRITES]
        victim = rng.choice(at_write) if at_write and rng.random() < 0.8 else actor
        acts.append((8, ("fail", victim, rng.choice(KINDS), rng.randint(1, 3))))
        finishing = [a for a in at_write if world.sched.pending_op(a)[0] == "finish"]  # type: ignore[index]
        if finishing and "partial" in KINDS:  # the one request a partial answer can hit (ADR 0076)
            acts.append((30, ("fail", rng.choice(finishing), rng.choice(PARTIAL), 1)))
        beats = [a for a in runnable if a.endswith((".beat", ".end"))]
        if beats:  # an incident for one holder: its next requests all fail (the outage path)
            acts.append((3, ("fail", rng.choice(beats), rng.choice(("unavailable", "ambiguous", "late")),
                             rng.randint(4, 12))))
    if len(world.workers) < MAX_WORKERS:
        m = rng.choice((*MACHINES, CLONE) if world.clones else MACHINES)
        target = rng.choice([*issues, None]) if len(issues) > 1 else issues[0]
        acts.append((8, ("worker", m, target, rng.random() < 0.25)))
        for w in world.workers.values():
            if w.drain and w.done and not w.proc.gone:
                acts += [(4, ("drain-next", w.name)), (1, ("drain-exits", w.name))]
    if world.reconcilers < MAX_RECONCILERS:
        acts.append((4, ("reconciler", rng.choice((*MACHINES, HOSTED)))))
    acts.append((10, ("time", rng.choice(TIMES))))
    if world.delayed():
        acts.append((6, ("land", rng.randrange(8))))
    if live:
        w = rng.choice(live)
        acts += [(2, ("crash", w.name)), (3, ("stall", w.name)), (4, ("exit", w.name, rng.choice((0, 1)))),
                 (2, ("signal", w.name))]
    n = rng.choice(issues)
    acts += [
        (0.5, ("reboot", rng.choice(MACHINES))),
        (3, ("person", "requeue", n)),
        (1, ("person", "cancel", n)),
        (1, ("person", "comment", n)),
        (0.5, ("person", "delete", n, rng.randrange(1000))),
        (0.3, ("person", "unlock", n)),
        (0.5, ("person", "force", n)),
    ]
    if world.pauses:  # drawn only then, so that episodes without pauses replay as before
        acts.append((2, ("pause", rng.choice(MACHINES))))
    if world.dispatch and world.queued_runs() and len(world.workers) < MAX_WORKERS:
        acts.append((8, ("pickup", rng.choice(MACHINES))))
    if world.guardians_die and live:
        acts.append((2, ("guardian", rng.choice(live).name)))
    if world.halts and live:
        acts.append((2, ("halt", rng.choice(live).name)))
    if world.mid_run_queueing and live:
        acts.append((2, ("person", "requeue-running", rng.choice(live).number or n)))
    return rng.choices([a for _, a in acts], weights=[w for w, _ in acts])[0]


def setup_for(rng: random.Random, seed: object, episode: int) -> Setup:
    return Setup(
        issues=rng.choice((1, 1, 2, 3)),
        max_lag=rng.choice(LAGS),
        whole_seconds=rng.random() < 0.8,
        lag_seed=f"{seed}-{episode}",
    )


def hostile_for(setup: Setup, seed: object, episode: int) -> Setup:
    """Turn on the world's newer switches for some episodes (ADR 0047), from a random stream of
    their own, so that an episode with none of them on replays exactly as it did before they
    existed. test_known_holes.py replays its witnesses with every switch off (`setup_for`
    alone), as they were found."""
    rng = random.Random(f"{seed}-{episode}-hostile")
    setup.clones = rng.random() < 0.2
    setup.skew = rng.choice((0.0, 0.0, 0.0, 2.0, -2.0, 30.0, -30.0))
    setup.pauses = rng.random() < 0.2
    setup.guardians_die = rng.random() < 0.2
    setup.dispatch = rng.random() < 0.25
    setup.repos = 2 if rng.random() < 0.2 else 1
    setup.halts = rng.random() < 0.2
    setup.mid_run_queueing = rng.random() < 0.25
    return setup


def breaks(setup: Setup, acts: list[Act]) -> bool:
    """Whether replaying `acts` (then quiescing) breaks any invariant, or crashes real code."""
    try:
        run_acts(setup, acts)
    except Exception:  # noqa: BLE001 - a crash of real code counts too
        return True
    return False


def run_acts(setup: Setup, acts: list[Act], trace: list[str] | None = None) -> None:
    """Replay `acts` in a fresh world, then quiesce and check. Raises on a broken invariant."""
    world = setup.world()
    try:
        for act in acts:
            try:
                applied = apply(world, act)
            except BaseException:
                if trace is not None:  # the act that broke belongs in the trace too
                    trace.append(_show(act))
                raise
            if applied and trace is not None:
                trace.append(_show(act))
            world.check()
        world.quiesce()
        world.check_settled()
    finally:
        world.close()


def _show(act: Act) -> str:
    return " ".join(str(x) for x in act)


def _signature(exc: BaseException) -> str:
    text = str(exc) if isinstance(exc, InvariantError) else type(exc).__name__
    return f"{text.split(':')[0]} [{getattr(exc, 'hole', None)}]"


def shrink(setup: Setup, acts: list[Act], want: str, budget: int = 300) -> list[Act]:
    """Drop chunks of `acts` (halves, then smaller) while the same invariant still breaks
    (`want`: the `_signature` of the break)."""

    def fails(candidate: list[Act]) -> bool:
        try:
            run_acts(setup, candidate)
        except Exception as exc:  # noqa: BLE001 - a crash of real code counts too
            return _signature(exc) == want
        return False

    chunk = max(1, len(acts) // 2)
    tries = 0
    while chunk >= 1 and tries < budget:
        i, changed = 0, False
        while i < len(acts) and tries < budget:
            candidate = acts[:i] + acts[i + chunk:]
            tries += 1
            if fails(candidate):
                acts, changed = candidate, True
            else:
                i += chunk
        if not changed:
            chunk //= 2
    return acts


def episode(rng: random.Random, steps: int, trace: list[str], acts: list[Act], setup: Setup) -> int:
    """One episode; returns the number of actions taken. Raises on a broken invariant."""
    world = setup.world()
    try:
        for _n in range(steps):
            act = _choose(world, rng)
            acts.append(act)
            trace.append(_show(act))
            apply(world, act)
            world.check()
        trace.append("quiesce")
        world.quiesce()
        world.check_settled()
        return steps
    finally:
        world.close()


def explore(seed: int | str, episodes: int, steps: int = 80, *, shrink_failure: bool = False,
            on_episode: Callable[[int], None] | None = None,
            tolerate: frozenset[str] = frozenset(KNOWN_HOLES),
            known: dict[str, int] | None = None,
            reference: Callable[[Setup, list[Act]], bool] | None = None) -> tuple[int, Failure | None]:
    """Run `episodes` episodes from `seed`; (actions taken, the first failure or None). A break
    the world attributes to a hole in `tolerate` ends its episode and is counted in `known`.

    `reference` (mutation runs, bench/model_mutations.py) replaces that attribution: it replays
    a broken episode's actions on the unmutated code and says whether that code breaks too.
    Every break (of a known hole or not) then counts as a failure exactly when the unmutated
    code survives the very same actions, so a mutation cannot hide behind a hole's name, and a
    break the code as it is also shows is never credited to the mutation."""
    total = 0
    for e in range(episodes):
        rng = random.Random(f"{seed}-{e}")
        setup = hostile_for(setup_for(rng, seed, e), seed, e)
        trace: list[str] = []
        acts: list[Act] = []
        try:
            total += episode(rng, steps, trace, acts, setup)
        except Exception as exc:  # noqa: BLE001 - any crash of the real code is a failure too
            hole = exc.hole if isinstance(exc, InvariantError) else None
            if reference is not None:
                excused = "(the unmutated code breaks too)" if reference(setup, acts) else None
            else:
                excused = hole if isinstance(exc, InvariantError) and hole in tolerate else None
            if excused is None:
                return total + len(trace), _failed(seed, e, trace, acts, setup, exc, shrink_failure)
            total += len(trace)
            if known is not None:
                known[excused] = known.get(excused, 0) + 1
        if on_episode is not None:
            on_episode(e)
    return total, None


def _failed(seed: int | str, e: int, trace: list[str], acts: list[Act], setup: Setup, exc: BaseException,
            shrink_failure: bool) -> Failure:
    detail = str(exc) if isinstance(exc, InvariantError) else traceback.format_exc()
    failure = Failure(int(seed) if str(seed).isdigit() else 0, e, len(trace), detail, trace, setup, acts)
    if shrink_failure:
        small = shrink(setup, acts, _signature(exc))
        shown: list[str] = []
        with contextlib.suppress(Exception):  # it breaks again: the trace is what we want
            run_acts(setup, small, shown)
        failure.shrunk = shown
    return failure
