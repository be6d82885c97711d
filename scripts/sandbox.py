#!/usr/bin/env python3
"""`make sandbox`: a local GitHub to try the CLI by hand, in two minutes, without a real repository.

It starts the test rig's GitHub emulator (npm `emulate`) and its proxy (which adds the one
route the emulator lacks) on free loopback ports, creates a repository, runs
`orion-action init` on it (so it has every label) and opens one sample issue in the queue,
then prints three `export` lines to paste into another shell. Everything stays up until
Ctrl-C (SIGINT) or SIGTERM, which stop the proxy and the emulator and exit 0. Nothing is
written outside a temporary directory, and nothing talks to github.com.

The token it prints is the emulator's own seeded token, not a secret.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}
SAMPLE_TITLE = "Sample task: summarise the README"
SAMPLE_BODY = ("A sample queued issue from `make sandbox`. Try:\n\n"
               "    orion-action status\n    orion-action run --next -- sh -c 'echo working; sleep 5'\n")


def main() -> int:
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]
    from rig import Emulator, Proxy, RepoHandle, orion_env

    stop = threading.Event()
    for signum in STOP_SIGNALS:
        signal.signal(signum, lambda *_: stop.set())
    emulator = proxy = None
    try:
        emulator = Emulator(token_pool=4).start()
        # emulate lacks GET /repos/{owner}/{repo}/issues/comments (reconcile reads it): the
        # rig's proxy serves it and passes everything else through.
        proxy = Proxy(emulator.url, tokens=emulator.tokens).start()
        repo = RepoHandle.create(emulator, proxy.url, hint="sandbox")
        env = orion_env(repo.full_name, proxy.url, Emulator.BOT_TOKEN)
        init = subprocess.run([sys.executable, "-m", "orion_action", "init"], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        if init.returncode != 0:
            print(f"sandbox: orion-action init failed (exit {init.returncode}): "
                  f"{(init.stderr or init.stdout).strip()}", file=sys.stderr)
            return 1
        number = repo.create_issue(SAMPLE_TITLE, ["orion"], body=SAMPLE_BODY)
        print(f"# orion-action sandbox: a local GitHub (emulator pid {emulator.pid}) with repository "
              f"{repo.full_name}, its labels, and #{number} queued.")
        print("# Paste these lines into another shell, then try `orion-action status`:")
        print(f"export GITHUB_API_URL={proxy.url} GITHUB_TOKEN={Emulator.BOT_TOKEN} "
              f"GITHUB_REPOSITORY={repo.full_name}")
        print(f"# (the CLI is {ROOT / '.venv' / 'bin' / 'orion-action'}). Ctrl-C here stops the sandbox.",
              flush=True)
        # The handlers run in the main thread at its next bytecode, whichever thread the
        # signal hit (the proxy has several): so wait in slices, not in one blocking call.
        while not stop.wait(0.5):
            pass
        print("sandbox: stopping", flush=True)
        return 0
    finally:
        if proxy is not None:
            proxy.stop()
        if emulator is not None:
            emulator.stop()


if __name__ == "__main__":
    sys.exit(main())
