"""The one child command the tests give the wrapper (`python tests/rig/child.py OPTIONS`).

    --log FILE        append one JSON line per event ("start", then "end") to FILE, each with a
                      single O_APPEND write (atomic for lines this short, even with many
                      writers): event, t (time.time()), pid, pgid, the ORION_ISSUE,
                      ORION_CLAIM_TOKEN and ORION_ATTEMPT it was given, name (--name); "end"
                      carries code, or signal when a signal of --end-on stopped it
    --name NAME       the name its log lines carry (children sharing one log)
    --pid-file FILE   write {"pid", "pgid", "env": its ORION_* environment} to FILE (atomically,
                      once started)
    --until FILE      hold until FILE exists
    --seconds S       hold at most S seconds (with neither this nor --until: no hold)
    --step KIND:ARG   before the hold, in order (repeatable): progress:TEXT appends the line TEXT
                      to $ORION_PROGRESS_FILE; wait:FILE waits until FILE exists; touch:FILE
                      creates FILE
    --exit CODE       exit with CODE (0)
    --ignore SIG      ignore SIG (int, term, hup); repeatable
    --end-on SIG      on SIG (int, term, hup) log "end" and exit 128+SIG; repeatable

Without --ignore or --end-on a signal has its default effect (SIGTERM kills it). It holds by
polling with select(), not time.sleep: under libfaketime time.sleep fails (faults.faketime_prefix).
"""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import sys
import time
from typing import Any

SIGNALS = {"int": signal.SIGINT, "term": signal.SIGTERM, "hup": signal.SIGHUP}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="child.py")
    parser.add_argument("--log")
    parser.add_argument("--name")
    parser.add_argument("--pid-file")
    parser.add_argument("--until")
    parser.add_argument("--seconds", type=float)
    parser.add_argument("--step", action="append", default=[])
    parser.add_argument("--exit", type=int, default=0)
    parser.add_argument("--ignore", action="append", choices=sorted(SIGNALS), default=[])
    parser.add_argument("--end-on", action="append", choices=sorted(SIGNALS), default=[])
    opts = parser.parse_args(argv)

    def event(kind: str, **extra: Any) -> None:
        if opts.log is None:
            return
        line = {"event": kind, "t": time.time(), "pid": os.getpid(), "pgid": os.getpgid(0),
                "issue": os.environ.get("ORION_ISSUE"), "token": os.environ.get("ORION_CLAIM_TOKEN"),
                "attempt": os.environ.get("ORION_ATTEMPT"), "name": opts.name, **extra}
        fd = os.open(opts.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (json.dumps(line) + "\n").encode())
        finally:
            os.close(fd)

    def end_on(signum: int, frame: Any) -> None:
        event("end", signal=signum)
        os._exit(128 + signum)

    for name in opts.ignore:
        signal.signal(SIGNALS[name], signal.SIG_IGN)
    for name in opts.end_on:
        signal.signal(SIGNALS[name], end_on)
    event("start")
    if opts.pid_file is not None:
        env = {k: v for k, v in os.environ.items() if k.startswith("ORION_")}
        tmp = opts.pid_file + ".tmp"
        with open(tmp, "w") as out:
            json.dump({"pid": os.getpid(), "pgid": os.getpgid(0), "env": env}, out)
        os.replace(tmp, opts.pid_file)
    for step in opts.step:
        kind, _, arg = step.partition(":")
        if kind == "progress":
            with open(os.environ["ORION_PROGRESS_FILE"], "a") as progress:
                progress.write(arg + "\n")
        elif kind == "wait":
            while not os.path.exists(arg):
                select.select([], [], [], 0.02)
        elif kind == "touch":
            open(arg, "w").close()
        else:
            parser.error(f"unknown step {step!r}")
    if opts.until is not None or opts.seconds is not None:
        deadline = None if opts.seconds is None else time.monotonic() + opts.seconds
        while deadline is None or time.monotonic() < deadline:
            if opts.until is not None and os.path.exists(opts.until):
                break
            select.select([], [], [], 0.02)
    event("end", code=opts.exit)
    return int(opts.exit)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
