"""Directed scenarios: named, deterministic interleavings of the model's world for situations
random search reaches too rarely to count on (ADR 0047). Each drives a `World` step by step,
checks every invariant after every step, then quiesces and checks the settled state; on the
code as it is none breaks (test_scenarios.py), and bench/model_mutations.py runs them all
against each mutation after the explorer's search.
"""

from __future__ import annotations

from collections.abc import Callable

from model.world import CLONE, CONFIG, HOSTED, ISSUE, World, Worker


def _run(world: World, actor: str, stop: Callable[[], bool] = lambda: False) -> None:
    """Step `actor` (checking the invariants after each step) until it is done or `stop()`."""
    while actor in world.runnable() and not stop():
        world.step(actor)
        world.check()


def _at(world: World, actor: str, op: str) -> Callable[[], bool]:
    return lambda: (world.sched.pending_op(actor) or ("",))[0] == op


def _settle(world: World) -> None:
    world.quiesce()
    world.check_settled()


def _pass(world: World, machine: str = HOSTED) -> None:
    _run(world, world.spawn_reconciler(machine))


def _running(world: World, machine: str) -> Worker:
    """A worker that claims issue 1 and starts its child (its first beat sent)."""
    w = world.spawn_worker(machine)
    _run(world, f"{w.name}.claim")
    assert w.child_started, f"{w.name} did not win the claim"
    _run(world, f"{w.name}.beat", _at(world, f"{w.name}.beat", "sleep"))
    return w


def budget_spent_by_time_limits() -> None:
    """Every attempt hits run.timeout and its holder dies after writing its "interrupted"
    record, before it moved the labels. After the last, the budget is spent: the pass gives
    the issue up (failed); it does not keep a dead holder for ever (the review's hand-back at
    the end of the budget)."""
    world = World()
    try:
        for _ in range(CONFIG.max_attempts):
            w = _running(world, "m1")
            world.time_limit(w)
            end = f"{w.name}.end"
            _run(world, end, lambda end=end: (world.sched.pending_op(end) or ("",))[0]
                 in ("add_labels", "remove_label"))
            world.crash(w)
            world.advance(CONFIG.stale_after + 5)
            _pass(world)
        _settle(world)
    finally:
        world.close()


def released_before_arbitration() -> None:
    """A person force-releases a claim between its post and its arbitration list: the claimer
    must see its own release and not run (the review's `blocker` own-release check)."""
    world = World()
    try:
        w = world.spawn_worker("m1")
        actor = f"{w.name}.claim"
        _run(world, actor, _at(world, actor, "list_comments"))
        _run(world, world.spawn_forced_release(ISSUE))
        world.advance(3.0)
        _run(world, actor)
        _settle(world)
    finally:
        world.close()


def claimer_paused_past_stale() -> None:
    """m1's VM pauses right after its claimer posted, before it took the lock (its boot clock
    frozen, so its deadline never comes); m2 finds the issue queued beside a stale claim,
    claims it and runs. On resume the claimer must judge
    its own claim's age on GitHub's clock and give up, not win as the lower claim."""
    world = World()
    try:
        w0 = world.spawn_worker("m1")
        a0 = f"{w0.name}.claim"
        _run(world, a0, _at(world, a0, "add_labels"))
        world.pause_vm("m1")
        world.advance(CONFIG.stale_after + 10)
        _running(world, "m2")
        world.resume_vm("m1")
        _run(world, a0)
        world.react()
        world.check()
        _settle(world)
    finally:
        world.close()


def clone_beside_rebooted_origin() -> None:
    """A snapshot clone of m1 runs (its records carry m1's ids); m1 reboots; a pass on m1 sees
    "m1 rebooted" but the clone's beat is fresh: a reboot alone proves no death."""
    world = World(clones=True)
    try:
        w = _running(world, CLONE)
        world.reboot("m1")
        world.advance(2.0)
        _run(world, f"{w.name}.beat", _at(world, f"{w.name}.beat", "sleep"))
        _pass(world, "m1")
        _settle(world)
    finally:
        world.close()


SCENARIOS: dict[str, Callable[[], None]] = {
    f.__name__: f
    for f in (budget_spent_by_time_limits, released_before_arbitration, claimer_paused_past_stale,
              clone_beside_rebooted_origin)
}
