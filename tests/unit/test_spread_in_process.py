"""`run --next` workers that do not all race for one issue (issue 19, ADR 0071), decided by the
real Claimer on the in-memory GitHub under the server's clock: a worker that sees no other
takes the head; one that sees another worker's claim in flight tries the head or the issue
after it by its own number, never past a higher priority; a loser skips two places a rival."""

from __future__ import annotations

from fakes.memory_github import BOT, MemoryServer, ServerTime

from orion_action.config import Config, Labels
from orion_action.core.liveness import Machine
from orion_action.core.record import ClaimRecord, Holder, State, render_record
from orion_action.ports import GitHubPort, QueueHistory
from orion_action.services.claiming import Claimer

P0, P1 = "orion-p0", "orion-p1"
CONFIG = Config(heartbeat_interval=10.0, stale_after=60.0, labels=Labels(priority=(P0, P1)), source="test")
LAB = CONFIG.labels
HERE = Machine(host="h", boot_id="h-boot", machine_id="h-id", pid_ns="h-ns")


def claimer(s: MemoryServer, pid: int) -> Claimer:
    return Claimer(s.client(), CONFIG, lambda _line: None, ServerTime(s), HERE,
                   Holder("h", "h-boot", "h-id", "h-ns", pid, float(pid)), sight=lambda _pid, _child: None)


def pids(parity: int, count: int = 3) -> list[int]:
    """Pids whose claimers' own numbers have this parity (first_pick's spread of 2)."""
    s = MemoryServer()
    return [p for p in range(100, 400) if claimer(s, p).pick_seed() % 2 == parity][:count]


def queue(s: MemoryServer, *labels: tuple[str, ...]) -> list[int]:
    """Queued issues, oldest first, each with its extra labels."""
    found = []
    for extra in labels:
        found.append(s.create_issue("queued", [LAB.queue, *extra]))
        s.clock.advance(1)
    return found


def in_flight(s: MemoryServer) -> int:
    """Another worker's claim between its lock and its unqueue: the listing shows it."""
    return s.create_issue("being claimed elsewhere", [LAB.queue, LAB.working])


def rival(s: MemoryServer, n: int, pid: int) -> None:
    now = s.clock.now.isoformat(timespec="seconds")
    record = ClaimRecord(token=f"rival-{pid}", state=State.CLAIMING,
                         holder=Holder("far", "b", "m", "n", pid, 1.0), started_at=now, heartbeat_at=now,
                         interval=CONFIG.heartbeat_interval, stale_after=CONFIG.stale_after)
    s.comment(n, render_record(record), BOT)


def test_seeds_of_both_parities_exist() -> None:
    assert len(pids(0)) == len(pids(1)) == 3


def test_a_worker_that_sees_no_other_takes_the_head_whatever_its_number() -> None:
    for pid in pids(0) + pids(1):
        s = MemoryServer()
        head, *_ = queue(s, (), (), ())
        assert claimer(s, pid).claim_next(None).number == head


def test_beside_a_claim_in_flight_workers_spread_over_the_head_and_the_next() -> None:
    for parity in (0, 1):
        for pid in pids(parity):
            s = MemoryServer()
            found = queue(s, (), (), ())
            in_flight(s)
            assert claimer(s, pid).claim_next(None).number == found[parity]


def test_beside_live_claims_workers_spread_too() -> None:
    for parity in (0, 1):
        s = MemoryServer()
        found = queue(s, (), ())
        c = claimer(s, pids(parity)[0])
        c.live = 2  # what `_admit` counted at the default beat (ADR 0060)
        assert c.claim_next(None).number == found[parity]


def test_never_past_a_higher_priority() -> None:
    for pid in pids(1):
        s = MemoryServer()
        top, _ = queue(s, (P0,), (P1,))
        in_flight(s)
        assert claimer(s, pid).claim_next(None).number == top


def test_a_loser_behind_two_rivals_skips_four_places() -> None:
    """The losers of the race at the head and those of the race at the next issue (first picks
    spread over both) go to different issues: two places a rival."""
    s = MemoryServer()
    found = queue(s, (), (), (), (), (), ())
    rival(s, found[0], 1)
    rival(s, found[0], 2)
    claim = claimer(s, pids(0)[0]).claim_next(None)  # alone: the head, then lost to two
    assert claim.number == found[4]
    assert [c.id for c in s.comments(found[1])] == []  # nothing posted on the issues between


def test_after_two_issues_passed_over_it_lists_again() -> None:
    """A listing gone stale (each issue tried was taken since it was listed) is not walked on:
    after RELIST_AFTER_PASSED issues passed over, one listing shows what is left."""
    s = MemoryServer()
    found = queue(s, (), (), (), (), (), ())
    c = claimer(s, pids(0)[0])
    calls: list[str] = []
    s.on_call = lambda op, args: calls.append(op)

    def read_queued(gh: GitHubPort, n: int) -> QueueHistory:
        if n in found[:4]:  # others took the first four since our listing
            for m in found[:4]:
                s.remove_label(m, LAB.queue)
                s.add_label(m, LAB.working)
        issue, _ = gh.get_issue(n)
        return QueueHistory(labelled=(), text_changed_at=None, issue=issue)

    c.read_queued = read_queued
    assert c.claim_next(None).number in (found[4], found[5])  # the fresh head, or the next
    assert calls.count("list_issues") == 2  # the first listing and one more, after two passed
    passed = [n for n in found[:4] if not any(True for _ in s.comments(n))]
    assert passed == found[:4]  # nothing posted on the issues taken
