"""A seeded random explorer over the protocol's world (tests/model/world.py).

Hypothesis's stateful testing (test_protocol_model.py) shrinks a failure to a readable
sequence, but it spends most examples on short, shallow runs. The explorer walks long,
weighted random episodes instead: several workers racing through their claims, beats and
endings while reconcilers, a person, crashes, stalls, reboots, list lag and time interleave,
thousands of steps a second. A failure names its seed and episode, and replays exactly.
"""

from __future__ import annotations

import random
import traceback
from collections.abc import Callable
from dataclasses import dataclass

from model.world import CONFIG, HOSTED, MACHINES, InvariantError, World

MAX_WORKERS = 4
MAX_RECONCILERS = 4
TIMES = (0.5, 1.0, 3.0, CONFIG.heartbeat_interval, 25.0, CONFIG.stale_after, CONFIG.stale_after + 5)


@dataclass
class Failure:
    seed: int
    episode: int
    step: int
    error: str
    trace: list[str]

    def __str__(self) -> str:
        tail = "\n  ".join(self.trace[-40:])
        return (
            f"invariant broken: seed {self.seed}, episode {self.episode}, after {self.step} actions:\n"
            f"{self.error}\nlast actions:\n  {tail}"
        )


def _actions(world: World, rng: random.Random) -> list[tuple[float, str, Callable[[], None]]]:
    """What may happen next, with weights."""
    live = [w for w in world.workers.values() if not (w.done or w.crashed)]
    runnable = world.runnable()
    acts: list[tuple[float, str, Callable[[], None]]] = []
    if runnable:
        actor = rng.choice(runnable)
        acts.append((50, f"step {actor}", lambda: world.step(actor)))
        burst = rng.randint(2, 10)

        def run_burst() -> None:
            for _ in range(burst):
                if actor not in world.runnable():
                    return
                world.step(actor)
                world.check()

        acts.append((15, f"run {actor} x{burst}", run_burst))
    if len(world.workers) < MAX_WORKERS:
        m = rng.choice(MACHINES)
        acts.append((8, f"worker on {m}", lambda: world.spawn_worker(m) and None))
    if world.reconcilers < MAX_RECONCILERS:
        m = rng.choice((*MACHINES, HOSTED))
        acts.append((4, f"reconciler on {m}", lambda: world.spawn_reconciler(m) and None))
    dt = rng.choice(TIMES)

    def time_passes() -> None:
        world.advance(dt)
        world.react()

    acts.append((10, f"time +{dt:g}s", time_passes))
    if live:
        w = rng.choice(live)
        code = rng.choice((0, 1))

        def stall() -> None:
            w.stalled = not w.stalled
            world.react()

        def exits() -> None:
            world.child_exits(w, code)
            world.react()

        def signal() -> None:
            world.signal(w)
            world.react()

        acts += [
            (2, f"crash {w.name}", lambda: world.crash(w)),
            (3, f"stall/resume {w.name}", stall),
            (4, f"{w.name}'s child exits {code}", exits),
            (2, f"signal {w.name}", signal),
        ]
    m = rng.choice(MACHINES)
    lag = rng.choice((0.0, 0.5, 1.0))

    def set_lag() -> None:
        world.server.list_lag = lag

    acts += [
        (0.5, f"reboot {m}", lambda: world.reboot(m)),
        (1, f"list lag {lag:g}s", set_lag),
        (3, "person requeues", world.person_requeue),
        (1, "person cancels", world.person_cancel),
        (1, "person comments", world.person_comments),
        (1, "person deletes a comment", lambda: world.person_deletes_comments(1)),
        (1, "person deletes two comments", lambda: world.person_deletes_comments(2)),
        (0.5, "person releases by hand with --force", lambda: world.spawn_forced_release() and None),
    ]
    return acts


def episode(rng: random.Random, steps: int, trace: list[str]) -> int:
    """One episode; returns the number of actions taken. Raises InvariantError."""
    world = World()
    try:
        for _n in range(steps):
            acts = _actions(world, rng)
            _, name, act = rng.choices(acts, weights=[a[0] for a in acts])[0]
            trace.append(name)
            act()
            world.check()
        trace.append("quiesce")
        world.quiesce()
        world.check_settled()
        return steps
    finally:
        world.close()


def explore(seed: int, episodes: int, steps: int = 80) -> tuple[int, Failure | None]:
    """Run `episodes` episodes from `seed`; (actions taken, the first failure or None)."""
    total = 0
    for e in range(episodes):
        rng = random.Random(f"{seed}-{e}")
        trace: list[str] = []
        try:
            total += episode(rng, steps, trace)
        except (InvariantError, Exception) as exc:  # any crash of the real code is a failure too
            detail = str(exc) if isinstance(exc, InvariantError) else traceback.format_exc()
            return total + len(trace), Failure(seed, e, len(trace), detail, trace)
    return total, None
