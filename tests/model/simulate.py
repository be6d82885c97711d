"""`make simulate`: a long seeded run of the protocol model (tests/model/explorer.py).

    python tests/model/simulate.py [--steps 100000] [--seed 20261203] [--episode-steps 80]

Runs episodes until at least --steps actions were taken, prints progress and, on the first
broken invariant, the seed and episode that replay it; exits 1 then.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: fakes, model

from model.explorer import explore  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=20261203)
    parser.add_argument("--episode-steps", type=int, default=80)
    args = parser.parse_args()
    started = time.monotonic()
    total, batch, seed = 0, 100, args.seed
    while total < args.steps:
        taken, failure = explore(seed, batch, args.episode_steps)
        total += taken
        if failure is not None:
            print(failure)
            print(f"replay: python tests/model/simulate.py --seed {failure.seed} (episode {failure.episode})")
            return 1
        print(f"seed {seed}: {batch} episodes, {total} actions so far, {time.monotonic() - started:.0f}s",
              flush=True)
        seed += 1
    print(f"simulate: {total} actions from seed {args.seed} on, no invariant broken "
          f"({time.monotonic() - started:.0f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
