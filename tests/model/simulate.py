"""`make simulate`: a long seeded search of the protocol model (tests/model/explorer.py).

    python tests/model/simulate.py [--seed N ...] [--episodes 250] [--random/--no-random]
                                   [--scenarios/--no-scenarios]

Runs each fixed seed (by default 1, 3 and 4), then one seed drawn afresh each run and printed
first, so that any failure replays (`--seed N --no-random`). On the first break it cannot
attribute to a known open hole (world.KNOWN_HOLES) it prints the seed, the episode and a
shrunk trace, and exits 1. Breaks of known holes are counted and printed. Then it plays every
directed scenario (tests/model/scenarios.py: interleavings random search reaches too rarely), so
that this one command is the budget the mutation bench judges the model by (ADR 0047); a
replay of one seed (`SEED=N`) skips them.
"""

from __future__ import annotations

import argparse
import secrets
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: fakes, model

from model.explorer import explore  # noqa: E402
from model.scenarios import SCENARIOS  # noqa: E402

FIXED_SEEDS = (1, 3, 4)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, action="append", help="a seed to run (repeatable)")
    parser.add_argument("--episodes", type=int, default=250, help="episodes per seed (80 actions each)")
    parser.add_argument("--random", action=argparse.BooleanOptionalAction, default=True,
                        help="also run one fresh seed (printed)")
    parser.add_argument("--scenarios", action=argparse.BooleanOptionalAction, default=True,
                        help="then play every directed scenario")
    args = parser.parse_args()
    seeds = list(args.seed or FIXED_SEEDS)
    if args.random:
        fresh = secrets.randbelow(10**9)
        print(f"simulate: this run's fresh seed is {fresh} (replay: --seed {fresh} --no-random)", flush=True)
        seeds.append(fresh)
    started = time.monotonic()
    total = 0
    known: dict[str, int] = {}
    for seed in seeds:
        taken, failure = explore(seed, args.episodes, shrink_failure=True, known=known)
        total += taken
        if failure is not None:
            print(failure)
            print(f"replay: python tests/model/simulate.py --seed {seed} --no-random "
                  f"(episode {failure.episode})")
            return 1
        spent = time.monotonic() - started
        print(f"seed {seed}: {args.episodes} episodes, {total} actions so far, {spent:.0f}s",
              flush=True)
    holes = ", ".join(f"{k} x{v}" for k, v in sorted(known.items())) or "none"
    print(f"simulate: {total} actions over seeds {seeds}, no invariant broken beyond known open holes "
          f"({holes}) ({time.monotonic() - started:.0f}s)")
    return play_scenarios() if args.scenarios else 0


def play_scenarios() -> int:
    """Every directed scenario, on the code as it is; the first that breaks is printed, exit 1."""
    started = time.monotonic()
    for name, scenario in SCENARIOS.items():
        try:
            scenario()
        except AssertionError as exc:  # an InvariantError, or a scenario's own assertion
            print(f"directed scenario {name} broke: {exc}")
            print(f"replay: python -m pytest "
                  f"'tests/model/test_scenarios.py::test_directed_scenario_holds[{name}]'")
            return 1
    print(f"simulate: {len(SCENARIOS)} directed scenarios hold ({time.monotonic() - started:.0f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
