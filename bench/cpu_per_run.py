"""CPU seconds one `orion-action run --next -- true` costs against the rig (issue 19, ADR 0074).

    python bench/cpu_per_run.py [--runs 10] [--out FILE]

Starts the emulator and a proxy (tests/rig, as bench.py does), queues RUNS issues and runs
`run --next -- true` RUNS times one after another (each takes the next issue). Per run: the
CPU (user + system) of the wrapper process tree (the wrapper, its guardian and the command:
all are waited for, so RUSAGE_CHILDREN holds them), of this process (the proxy's threads, the
issue set-up excluded), and of the emulator; and the median over the runs. Also the CPU of a
bare `python -c pass` and of `python -m orion_action --version` (start-up alone). Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import Bench, Emulator, psutil  # noqa: E402  (bench sets sys.path for tests/ and the rig)


def _kids() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _self() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _emu(emu: Emulator) -> float:
    proc = getattr(emu, "_proc", None)
    if proc is None:
        return 0.0
    root = psutil.Process(proc.pid)
    return sum(t.user + t.system for p in [root, *root.children(recursive=True)] for t in [p.cpu_times()])


def _startup(argv: list[str], env: dict[str, str], runs: int) -> float:
    out = []
    for _ in range(runs):
        k = _kids()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        out.append(_kids() - k)
    return round(statistics.median(out), 3)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--out")
    ap.add_argument("--profile", help="also profile one more run (cProfile) into this file")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="orion-cpu-"))
    result: dict[str, object] = {}
    with Emulator() as emu:
        b = Bench(emu, work, quick=True)
        try:
            _proxy, repo, orion, _ = b.setup("cpu")
            numbers = [repo.create_issue(f"cpu: item {i}", ["orion"]) for i in range(args.runs)]
            argv = [sys.executable, "-m", "orion_action", "run", "--config", str(orion.config), "--next",
                    "--", "true"]
            tree, proxy, node = [], [], []
            for _ in range(args.runs):
                k, s, e = _kids(), _self(), _emu(emu)
                p = subprocess.run(argv, cwd=orion.workdir, env=orion.env, stdin=subprocess.DEVNULL,
                                   capture_output=True, text=True)
                tree.append(_kids() - k)
                proxy.append(_self() - s)
                node.append(_emu(emu) - e)
                assert p.returncode == 0, p.stderr
            if args.profile:
                repo.create_issue("cpu: profiled", ["orion"])
                # CPU time, not wall: the waits for GitHub's answers are not what this counts.
                code = ("import cProfile, runpy, sys, time\n"
                        "sys.argv = ['orion_action', *sys.argv[1:]]\n"
                        "prof = cProfile.Profile(time.process_time)\n"
                        "try:\n    prof.runcall(runpy.run_module, 'orion_action', run_name='__main__')\n"
                        f"finally:\n    prof.dump_stats({args.profile!r})\n")
                argv[1:3] = ["-X", "importtime", "-c", code]
                p = subprocess.run(argv, cwd=orion.workdir, env=orion.env, stdin=subprocess.DEVNULL,
                                   capture_output=True, text=True, check=True)
                Path(args.profile + ".imports").write_text(p.stderr)
            result = {
                "runs": args.runs, "issues": len(numbers),
                "run_tree_cpu_s": {"median": round(statistics.median(tree), 3),
                                   "min": round(min(tree), 3), "max": round(max(tree), 3)},
                "proxy_cpu_s_median": round(statistics.median(proxy), 3),
                "emulator_cpu_s_median": round(statistics.median(node), 3),
                "python_bare_cpu_s": _startup([sys.executable, "-c", "pass"], orion.env, args.runs),
                "orion_version_cpu_s": _startup([sys.executable, "-m", "orion_action", "--version"],
                                                orion.env, args.runs),
                "load_average": [round(x, 1) for x in os.getloadavg()],
            }
        finally:
            b.close()
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
