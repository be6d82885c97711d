"""A deterministic cooperative scheduler for real service code.

Each actor (a claimer, a holder, a reconciler, ...) is a plain callable run in a thread of
its own, but only one thread ever runs: an actor runs only inside `step`, from one GitHub call
to the next. The driver (a Hypothesis state machine) therefore chooses every interleaving,
and a failing one replays exactly.

The GitHub calls are the scheduling points: install `hook` as `MemoryServer.on_call`, and
give services `sleep` in place of `time.sleep` (a sleep is a point too, and advances no clock:
the driver moves the clock). Nothing else in an actor may block: `step` fails loudly if an
actor neither reaches a point nor returns within `timeout` real seconds.

`crash` models a process that dies and loses its local state: the actor's pending call, and
every later one from its thread (finally blocks, cleanup handlers), raises `Crashed`, a
BaseException that `except Exception` does not catch, so nothing more reaches GitHub.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

START = "start"  # the pending op of an actor that has not run yet
SLEEP = "sleep"


class Crashed(BaseException):
    """The actor was crashed by the driver: it may not touch GitHub again."""


class SchedulerError(AssertionError):
    """The scheduler was misused, or an actor blocked outside a scheduling point."""


@dataclass(frozen=True)
class StepResult:
    """Where an actor stands after a step: waiting to make `op`, or done."""

    actor: str
    op: str | None = None  # the call it waits to make; None once done
    args: tuple[object, ...] = ()
    done: bool = False
    result: object = None
    error: BaseException | None = None

    @property
    def crashed(self) -> bool:
        return isinstance(self.error, Crashed)


@dataclass(eq=False)
class _Actor:
    name: str
    fn: Callable[[], object]
    thread: threading.Thread | None = None
    pending: tuple[str, tuple[object, ...]] | None = None
    turn: bool = False  # the driver has let it perform its pending op
    done: bool = False
    crashed: bool = False
    result: object = None
    error: BaseException | None = None
    trace: list[tuple[str, tuple[object, ...]]] = field(default_factory=list)


class Scheduler:
    """`with Scheduler() as sched:` ... `sched.spawn(name, fn)`, `sched.step(name)`.

    The thread that creates the scheduler is the driver: its own GitHub calls and sleeps
    pass straight through (for setup and inspection). Any other thread that is not an
    actor may not call GitHub while the scheduler is installed."""

    # Generous: an actor's step normally takes milliseconds, and a loaded machine (2 cores,
    # parallel workers) must not turn that into a reported block (the rig's PATIENCE).
    def __init__(self, timeout: float = 60.0):
        self.timeout = timeout
        self.trace: list[tuple[str, str, tuple[object, ...]]] = []  # (actor, op, args) as performed
        self._actors: dict[str, _Actor] = {}
        self._by_thread: dict[int, _Actor] = {}
        self._driver = threading.get_ident()
        self._cv = threading.Condition()
        self._closed = False

    def __enter__(self) -> Scheduler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the points, called from actor threads ------------------------------------------------

    def hook(self, op: str, args: tuple[object, ...]) -> None:
        """Install as `MemoryServer.on_call`: blocks the calling actor until it is stepped."""
        actor = self._by_thread.get(threading.get_ident())
        if actor is None:
            if threading.get_ident() == self._driver:
                return
            raise SchedulerError(f"GitHub call {op} from {threading.current_thread().name!r}, "
                                 "a thread the scheduler does not run")
        self._wait_turn(actor, op, args)

    def sleep(self, seconds: float) -> None:
        """A service's sleep: a scheduling point that lets no time pass (the driver moves clocks)."""
        actor = self._by_thread.get(threading.get_ident())
        if actor is not None:
            self._wait_turn(actor, SLEEP, (seconds,))

    def _wait_turn(self, actor: _Actor, op: str, args: tuple[object, ...]) -> None:
        with self._cv:
            if actor.crashed:
                raise Crashed(actor.name)
            actor.pending, actor.turn = (op, args), False
            self._cv.notify_all()
            self._cv.wait_for(lambda: actor.turn or actor.crashed)
            if actor.crashed:
                raise Crashed(actor.name)
            actor.turn, actor.pending = False, None

    # -- the driver ----------------------------------------------------------------------------

    def spawn(self, name: str, fn: Callable[[], object]) -> StepResult:
        """A new actor, parked before its first line (pending op "start")."""
        if self._closed:
            raise SchedulerError("the scheduler is closed")
        if name in self._actors:
            raise SchedulerError(f"there is already an actor {name!r}")
        actor = _Actor(name, fn)

        def body() -> None:
            me = threading.get_ident()
            with self._cv:
                self._by_thread[me] = actor
            try:
                self._wait_turn(actor, START, ())
                actor.result = fn()
            except BaseException as exc:  # the driver reads it from the StepResult
                actor.error = exc
            finally:
                with self._cv:
                    del self._by_thread[me]
                    actor.done, actor.pending = True, None
                    self._cv.notify_all()

        actor.thread = threading.Thread(target=body, name=name, daemon=True)
        with self._cv:
            self._actors[name] = actor
        actor.thread.start()
        with self._cv:
            self._settle(actor)
        return self._result(actor)

    def step(self, name: str) -> StepResult:
        """Let `name` perform its pending op and run on to its next op, or to its end."""
        actor = self._get(name)
        with self._cv:
            if actor.done or actor.pending is None:
                raise SchedulerError(f"{name} is not waiting to run (done: {actor.done})")
            op, args = actor.pending
            self.trace.append((name, op, args))
            actor.trace.append((op, args))
            actor.turn = True
            self._cv.notify_all()
            self._settle(actor)
        return self._result(actor)

    def crash(self, name: str) -> StepResult:
        """The actor's process dies: its pending op and all later ones raise Crashed."""
        actor = self._get(name)
        with self._cv:
            if not actor.done:
                actor.crashed = True
                self._cv.notify_all()
                self._settle(actor, until_done=True)
        return self._result(actor)

    def runnable(self) -> list[str]:
        """Actors waiting to perform an op, in spawn order."""
        with self._cv:
            return [a.name for a in self._actors.values() if not a.done and a.pending is not None]

    def pending_op(self, name: str) -> tuple[str, tuple[object, ...]] | None:
        with self._cv:
            return self._get(name).pending

    def result(self, name: str) -> StepResult:
        with self._cv:
            return self._result(self._get(name))

    def close(self) -> None:
        """Crash every actor still alive and join every thread: nothing leaks into the next
        example. Raises if a thread cannot be stopped (it blocked outside a point)."""
        self._closed = True
        for name, actor in list(self._actors.items()):
            if not actor.done:
                with self._cv:
                    actor.crashed = True
                    self._cv.notify_all()
            assert actor.thread is not None
            actor.thread.join(self.timeout)
            if actor.thread.is_alive():
                raise SchedulerError(f"actor {name} did not stop: it blocks outside a scheduling point")

    # -- internals (callers hold the lock) --------------------------------------------------------

    def _get(self, name: str) -> _Actor:
        try:
            return self._actors[name]
        except KeyError:
            raise SchedulerError(f"no actor {name!r}") from None

    def _settle(self, actor: _Actor, until_done: bool = False) -> None:
        """Wait until the actor parks at its next point (a let-go actor has `turn` set until it
        wakes, so its old pending op does not count) or ends."""
        def parked() -> bool:
            return actor.done or (not until_done and actor.pending is not None and not actor.turn)

        if not self._cv.wait_for(parked, self.timeout):
            raise SchedulerError(f"actor {actor.name} neither reached a GitHub call or sleep nor "
                                 f"returned within {self.timeout}s: does it block on something else?")

    def _result(self, actor: _Actor) -> StepResult:
        if actor.done:
            return StepResult(actor.name, done=True, result=actor.result, error=actor.error)
        assert actor.pending is not None
        return StepResult(actor.name, actor.pending[0], actor.pending[1])
