#!/usr/bin/env python3
"""orion-action, end to end, in about 20 seconds: `make demo` (or `python demo/demo.py`).

Everything shown is real: the npm `emulate` GitHub API emulator on a free loopback port,
`orion-action` run as real subprocesses talking HTTP to it, a real SIGKILL, real process
checks with psutil. The demo only starts things, watches (polling the emulator's REST API
and the process table) and narrates; every decision is the product's.

  1. start the emulator, create a repository, run `orion-action init`, queue three issues;
  2. two worker slots (A and B) each run `orion-action run --next -- <agent>`;
  3. wrapper A is killed with SIGKILL mid-run: its agent dies with it, its issue is stranded;
  4. `orion-action status` judges it dead, `orion-action reconcile` requeues it;
  5. the slots keep taking `--next` until the queue is empty; every issue ends orion-ready.

Exit 0 when all issues end `orion-ready`, 1 (with the reason) otherwise: it is a smoke test too.
`python demo/demo.py --agent` is the demo's "agent": it works for a few seconds, printing
progress, in one process (so the wrapper's PR_SET_PDEATHSIG covers all of it).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[1]
AGENT_STEPS = 6  # seconds of "work" per issue
TIMEOUT_S = 90.0  # the whole demo, as a smoke test, gives up after this
CONFIG = """\
# orion-action configuration for the demo: fast beats so the demo takes seconds, not minutes.
heartbeat: {interval: 1, stale_after: 5}
run: {kill_grace: 1}
retry: {max_attempts: 3}
"""
ISSUES = ["Summarise the build logs", "Triage the flaky test", "Write the release notes"]
LABELS = {"queue": "orion", "working": "orion-working", "ready": "orion-ready",
          "failed": "orion-failed"}
EXIT_EMPTY = 75  # orion-action run: nothing claimed (here: the queue is empty)
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36
T = TypeVar("T")


# -- the agent (the child the wrappers run) ---------------------------------------------------

def agent() -> int:
    issue, repo = os.environ.get("ORION_ISSUE", "?"), os.environ.get("ORION_REPO", "?")
    attempt = os.environ.get("ORION_ATTEMPT", "?")
    print(f"agent: pid {os.getpid()} working on {repo}#{issue} (attempt {attempt})", flush=True)
    for step in range(1, AGENT_STEPS + 1):
        time.sleep(1.0)  # this *is* the work being simulated, not synchronisation
        print(f"agent: #{issue} step {step}/{AGENT_STEPS} done", flush=True)
    print(f"agent: #{issue} finished, exit 0", flush=True)
    return 0


# -- narration ------------------------------------------------------------------------------

class DemoFailed(Exception):
    """The demo could not show what it set out to show."""


class Narrator:
    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self._lock = threading.Lock()

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def say(self, text: str, prefix: str = "") -> None:
        stamp = f"[{self.elapsed():5.1f}s] "
        with self._lock:
            for line in text.splitlines() or [""]:
                print(f"{stamp}{prefix}{line}", flush=True)

    def section(self, title: str) -> None:
        with self._lock:
            print(f"\n== {title} ==", flush=True)


def wait_for(what: str, predicate: Callable[[], T], timeout: float, interval: float = 0.1) -> T:
    """Poll `predicate` until it returns something truthy; DemoFailed after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise DemoFailed(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(interval)


# -- reading the emulator (the demo's own view; the product never sees these requests) --------

HIDDEN = re.compile(r"<!--\s*(orion-claim|orion-release)\s+v\d+\s*\n(.*?)\n\s*-->", re.DOTALL)


def hidden_block(body: str) -> tuple[str, dict[str, Any]] | None:
    m = HIDDEN.search(body or "")
    if not m:
        return None
    try:
        return m.group(1), json.loads(m.group(2))
    except ValueError:
        return m.group(1), {}


def visible_text(body: str) -> str:
    return HIDDEN.sub("", body or "").strip()


class Watcher(threading.Thread):
    """Polls the repository's issues and narrates every label change and new comment."""

    def __init__(self, repo: Any, numbers: list[int], narrator: Narrator,
                 who: Callable[[int], str]) -> None:
        super().__init__(name="demo-watcher", daemon=True)
        self.repo, self.numbers, self.n, self.who = repo, numbers, narrator, who
        self.stop = threading.Event()
        self.labels: dict[int, tuple[str, ...]] = {}
        self.seen_comments: dict[int, set[int]] = {n: set() for n in numbers}
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.stop.wait(0.15):
                self.poll()
        except BaseException as exc:  # reported by the main thread
            self.error = exc

    def poll(self, narrate: bool = True) -> None:
        issues = self.repo.api("GET", "/issues", params={"state": "all", "per_page": 100})
        for issue in issues:
            n = issue["number"]
            if n not in self.seen_comments:
                continue
            if len(self.seen_comments[n]) != issue["comments"]:
                self._new_comments(n, narrate)
            labels = tuple(sorted(label["name"] for label in issue["labels"]))
            if labels != self.labels.get(n):
                self.labels[n] = labels
                if narrate:
                    self.n.say(f"#{n} labels: {', '.join(labels) or '(none)'}{self._holder_note(n, labels)}")

    def _new_comments(self, n: int, narrate: bool) -> None:
        for c in self.repo.comments(n):
            if c["id"] in self.seen_comments[n]:
                continue
            self.seen_comments[n].add(c["id"])
            if not narrate:
                continue
            block = hidden_block(c["body"])
            kind = {"orion-claim": "claim record", "orion-release": "tombstone"}.get(
                block[0] if block else "", "comment")
            self.n.say(f"#{n} new {kind} (comment {c['id']} by {c['user']}): "
                       f"{shorten(visible_text(c['body']), 110)}")

    def _holder_note(self, n: int, labels: tuple[str, ...]) -> str:
        if LABELS["working"] not in labels:
            return ""
        blocks = [(c["id"], hidden_block(c["body"])) for c in self.repo.comments(n)]
        released = {b[1].get("token") for _, b in blocks if b and b[0] == "orion-release"}
        live = [b[1] for _, b in blocks if b and b[0] == "orion-claim"
                and b[1].get("state") in ("claiming", "running") and b[1].get("token") not in released]
        if not live:
            return "  (no live claim record: the lock is stranded)"
        rec = live[0]  # the lowest comment id wins
        pid = rec.get("holder", {}).get("pid")
        return f"  ({self.who(pid)} pid {pid} holds it, attempt {rec.get('attempt')})"


def shorten(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


# -- processes ---------------------------------------------------------------------------------

def _die_with_demo() -> None:  # runs in the forked child before exec
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


class Wrapper:
    """One `orion-action run --next` subprocess, its output narrated with a prefix."""

    def __init__(self, name: str, cmd: list[str], env: dict[str, str], narrator: Narrator) -> None:
        self.name = name
        self.lines: list[str] = []
        self._cv = threading.Condition()
        self.proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     start_new_session=True, preexec_fn=_die_with_demo,
                                     text=True, bufsize=1)
        self.pid = self.proc.pid
        self.agent_pid: int | None = None
        self.issue: int | None = None
        self._readers = [threading.Thread(target=self._pump, args=(s, narrator), daemon=True)
                         for s in (self.proc.stdout, self.proc.stderr)]
        for r in self._readers:
            r.start()

    def _pump(self, stream: Any, narrator: Narrator) -> None:
        for line in stream:
            line = line.rstrip("\n")
            with self._cv:
                self.lines.append(line)
            narrator.say(line, prefix=f"  {self.name} | ")

    def saw(self, pattern: str) -> bool:
        with self._cv:
            return any(re.search(pattern, line) for line in self.lines)

    def find_agent(self) -> int | None:
        """The agent pid once the wrapper has started it (from the process table), and the
        issue it works (from the agent's own environment, ORION_ISSUE)."""
        import psutil

        if self.agent_pid is not None:
            return self.agent_pid
        try:
            for child in psutil.Process(self.pid).children(recursive=True):  # under the guardian
                if "--agent" in child.cmdline():
                    env = child.environ()
                    self.agent_pid, self.issue = child.pid, int(env["ORION_ISSUE"])
                    return self.agent_pid
        except (psutil.Error, KeyError, ValueError):
            return None
        return None

    def finish_readers(self) -> None:
        for r in self._readers:
            r.join(timeout=5)


def describe_exit(code: int, run: bool = True) -> str:
    """An exit status in words; `run`: of `orion-action run` (docs/design.md section 9)."""
    if code < 0:
        return f"killed by {signal.Signals(-code).name} (returncode {code})"
    meaning = {0: "success", 64: "usage or configuration error", 69: "GitHub unreachable"}
    if run:
        meaning.update({0: "the agent succeeded", EXIT_EMPTY: "nothing claimed: the queue is empty",
                        76: "the claim was lost; the agent was stopped"})
    return f"exit {code} ({meaning.get(code, 'the agent failed' if run else 'failed')})"


def process_gone(pid: int) -> str | None:
    """None while `pid` runs; else how it ended. Orphans are re-parented to the demo (child
    subreaper), so the demo reaps them itself and learns their exit status."""
    import psutil

    try:
        got, status = os.waitpid(pid, os.WNOHANG)
        if got == pid:
            if os.WIFSIGNALED(status):
                return f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
            return f"exited {os.WEXITSTATUS(status)}"
    except ChildProcessError:
        pass  # not (yet) ours to reap
    try:
        if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
            return "dead (a zombie awaiting its reaper)"
        return None
    except psutil.NoSuchProcess:
        return "gone from the process table"


# -- the demo ----------------------------------------------------------------------------------

class Demo:
    def __init__(self) -> None:
        self.n = Narrator()
        self.wrappers: list[Wrapper] = []
        self.emulator: Any = None
        self.proxy: Any = None
        self.watcher: Watcher | None = None
        self.tmp = tempfile.TemporaryDirectory(prefix="orion-demo-")
        self.config = Path(self.tmp.name, "orion.yml")

    # product commands -------------------------------------------------------------------------
    def product(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "orion_action", *args]

    def run_command(self, title: str, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = self.product(*args, "--config", str(self.config))
        self.n.say(f"$ orion-action {' '.join(args)} --config orion.yml")
        result = subprocess.run(cmd, env=self.env, cwd=ROOT, capture_output=True, text=True,
                                timeout=60, stdin=subprocess.DEVNULL)
        for line in (result.stdout + result.stderr).splitlines():
            self.n.say(line, prefix=f"  {title} | ")
        self.n.say(f"orion-action {args[0]}: {describe_exit(result.returncode, run=False)}")
        if result.returncode != 0:
            raise DemoFailed(f"orion-action {' '.join(args)} exited {result.returncode}")
        return result

    def start_wrapper(self, name: str) -> Wrapper:
        cmd = self.product("run", "--next", "--config", str(self.config), "--",
                           sys.executable, str(Path(__file__).resolve()), "--agent")
        w = Wrapper(name, cmd, self.env, self.n)
        self.wrappers.append(w)
        self.n.say(f"worker {name}: started `orion-action run --next -- demo.py --agent` (pid {w.pid})")
        return w

    def who(self, pid: int | None) -> str:
        for w in self.wrappers:
            if w.pid == pid:
                return f"worker {w.name}"
        return "an unknown process"

    def labels(self, n: int) -> list[str]:
        return sorted(self.repo.labels(n))

    # the story --------------------------------------------------------------------------------
    def run(self) -> int:
        sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]
        from rig import Emulator, Proxy, RepoHandle, orion_env

        self.n.section("1. a GitHub API emulator, a repository, `orion-action init`, three queued issues")
        self.emulator = Emulator(token_pool=4)
        self.emulator.start()
        self.n.say(f"emulate@0.11.2 (GitHub REST API emulator) listening on {self.emulator.url} "
                   f"(pid {self.emulator.pid})")
        # emulate 0.11.2 lacks GitHub's repository-wide comment listing, which a reconcile pass
        # reads (ADR 0018); the test rig's proxy serves it and passes everything else through.
        self.proxy = Proxy(self.emulator.url, tokens=self.emulator.tokens).start()
        self.n.say(f"a pass-through proxy on {self.proxy.url} adds the one GitHub route emulate lacks "
                   f"(GET /repos/{{owner}}/{{repo}}/issues/comments)")
        self.repo = RepoHandle.create(self.emulator, self.proxy.url, hint="orion-demo")
        self.env = orion_env(self.repo.full_name, self.proxy.url, Emulator.BOT_TOKEN)
        self.config.write_text(CONFIG)
        self.n.say(f"repository {self.repo.full_name}; GITHUB_API_URL={self.proxy.url}; "
                   f"config: {' '.join(CONFIG.splitlines()[1:])}")
        self.run_command("init", "init")
        numbers = [self.repo.create_issue(title, [LABELS["queue"]],
                                          body="Queued for the orion demo.") for title in ISSUES]
        for n, title in zip(numbers, ISSUES, strict=True):
            self.n.say(f"#{n} {title!r} created with labels: {', '.join(self.labels(n))}")

        self.watcher = Watcher(self.repo, numbers, self.n, self.who)
        self.watcher.poll(narrate=False)  # the starting point: only changes are narrated
        self.watcher.start()

        self.n.section("2. two workers take issues from the queue in parallel")
        a1, b = self.start_wrapper("A"), self.start_wrapper("B")
        for w in (a1, b):
            wait_for(f"worker {w.name} to start its agent",
                     lambda w=w: w.find_agent() or w.proc.poll() is not None, 20)
            if w.agent_pid is None:
                raise DemoFailed(f"worker {w.name} exited before running its agent: "
                                 f"{describe_exit(w.proc.returncode)}")
            self.n.say(f"worker {w.name} (pid {w.pid}) runs agent pid {w.agent_pid} on #{w.issue}")
        held = {a1.issue, b.issue}
        if len(held) != 2:
            raise DemoFailed(f"the two workers run the same issue: {held}")
        watcher = self.watcher
        wait_for("the lock label on both claimed issues", lambda: all(
            LABELS["working"] in watcher.labels.get(n, ()) for n in held), 10)

        self.n.section("3. worker A's runner dies: SIGKILL to the wrapper, mid-run")
        wait_for("worker A's agent to be mid-run", lambda: a1.saw(r"step 2/"), 15)
        victim_issue, victim_agent = a1.issue, a1.agent_pid
        assert victim_issue is not None and victim_agent is not None
        self.n.say(f"SIGKILL -> worker A's wrapper (pid {a1.pid}), which holds #{victim_issue} "
                   f"with agent pid {victim_agent}")
        os.kill(a1.pid, signal.SIGKILL)
        code = wait_for("wrapper A to die", lambda: a1.proc.poll(), 10)
        self.n.say(f"worker A wrapper pid {a1.pid}: {describe_exit(code)}")
        how = wait_for(f"agent pid {victim_agent} to die with its wrapper",
                       lambda: process_gone(victim_agent), 10, interval=0.05)
        self.n.say(f"psutil: agent pid {victim_agent} died with its wrapper: {how} "
                   f"(PR_SET_PDEATHSIG); it left no process behind")
        self.n.say(f"#{victim_issue} labels now: {', '.join(self.labels(victim_issue))} -- stranded: "
                   f"the lock is on, nobody works it, and no wrapper is left to hand it back")

        self.n.section("4. `orion-action status`, then `orion-action reconcile`")
        status = self.run_command("status", "status")
        if not re.search(rf"#{victim_issue}\s+dead", status.stdout):
            raise DemoFailed(f"status did not judge #{victim_issue} dead:\n{status.stdout}")
        self.n.say(f"status: #{victim_issue} is dead at once (same process table, wrapper pid gone), "
                   f"no need to wait for stale_after; the budget warning is expected: the demo "
                   f"beats every second")
        rec = self.run_command("reconcile", "reconcile")
        if not re.search(rf"#{victim_issue}\s+requeue", rec.stdout):
            raise DemoFailed(f"reconcile did not requeue #{victim_issue}:\n{rec.stdout}")
        after = self.labels(victim_issue)
        self.n.say(f"#{victim_issue} labels after reconcile: {', '.join(after)}  "
                   f"(requeued: the queue label is back, the lock is gone)")
        if LABELS["queue"] not in after or LABELS["working"] in after:
            raise DemoFailed(f"#{victim_issue} was not requeued; labels: {after}")

        self.n.section("5. the workers keep taking `--next` until the queue is empty")
        self.drain({"A": self.start_wrapper("A"), "B": b}, victim_issue)

        self.n.section("6. the end: every issue's labels and comments")
        return self.report(numbers)

    def drain(self, slots: dict[str, Wrapper], victim: int) -> None:
        """Each slot runs `--next` again after a success, and stops on an empty queue."""
        done: set[str] = set()
        deadline = time.monotonic() + TIMEOUT_S
        while len(done) < len(slots):
            if time.monotonic() > deadline:
                raise DemoFailed(f"the queue did not drain within {TIMEOUT_S:g}s")
            for name, w in slots.items():
                if name in done:
                    continue
                w.find_agent()
                code = w.proc.poll()
                if code is None:
                    continue
                w.finish_readers()
                self.n.say(f"worker {name} (pid {w.pid}): {describe_exit(code)}")
                if code == EXIT_EMPTY:
                    done.add(name)
                elif code == 0:
                    if w.issue == victim:
                        self.n.say(f"#{victim}, the issue whose worker was killed, was picked up "
                                   f"again and finished by worker {name}")
                    slots[name] = self.start_wrapper(name)
                else:
                    raise DemoFailed(f"worker {name} (pid {w.pid}) failed: {describe_exit(code)}")
            time.sleep(0.1)

    def report(self, numbers: list[int]) -> int:
        assert self.watcher is not None
        self.watcher.stop.set()
        self.watcher.join(timeout=5)
        if self.watcher.error:
            raise DemoFailed(f"the issue watcher failed: {self.watcher.error!r}")
        bad = []
        for n in numbers:
            issue = self.repo.issue(n)
            labels = self.labels(n)
            print(f"\n#{n} {issue['title']!r} ({issue['state']}) labels: {', '.join(labels)}")
            for c in self.repo.comments(n):
                block = hidden_block(c["body"])
                print(f"  comment {c['id']} by {c['user']}:")
                for line in textwrap.wrap(visible_text(c["body"]), 100):
                    print(f"    {line}")
                if block:
                    raw = json.dumps(block[1], separators=(",", ":"), sort_keys=True)
                    print(f"    <!-- {block[0]} {shorten(raw, 90)} -->")
            if labels != [LABELS["ready"]]:
                bad.append(f"#{n} ended with labels {labels}, not exactly [{LABELS['ready']!r}]")
        leftovers = [p for w in self.wrappers for p in (w.pid, w.agent_pid)
                     if p is not None and process_gone(p) is None]
        if leftovers:
            bad.append(f"processes still running: {leftovers}")
        print()
        if bad:
            for line in bad:
                print(f"DEMO FAILED: {line}", file=sys.stderr)
            return 1
        self.n.say(f"all {len(numbers)} issues ended orion-ready; no wrapper or agent process "
                   f"is left; took {self.n.elapsed():.1f}s")
        return 0

    # cleanup ----------------------------------------------------------------------------------
    def cleanup(self) -> None:
        if self.watcher is not None:
            self.watcher.stop.set()
        running = [w for w in self.wrappers if w.proc.poll() is None]
        for w in running:  # the polite way first: on SIGTERM a wrapper stops its agent, ends its run
            with contextlib.suppress(ProcessLookupError):
                os.kill(w.pid, signal.SIGTERM)
        for w in running:
            try:
                w.proc.wait(timeout=8)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(w.pid, signal.SIGKILL)
                w.proc.wait()
        for w in self.wrappers:
            if w.agent_pid is not None and process_gone(w.agent_pid) is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(w.agent_pid, signal.SIGKILL)
        if self.proxy is not None:
            self.proxy.stop()
        if self.emulator is not None:
            self.emulator.stop()
        self.tmp.cleanup()


def _on_sigterm(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", action="store_true", help="be the demo's agent (the wrapped child)")
    args = parser.parse_args(argv)
    if args.agent:
        return agent()
    # Orphans (the SIGKILLed wrapper's agent) come to us, so we can see how they ended.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1)
    signal.signal(signal.SIGTERM, _on_sigterm)
    demo = Demo()
    try:
        return demo.run()
    except DemoFailed as exc:
        print(f"\nDEMO FAILED: {exc}", file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted: stopping every process the demo started", file=sys.stderr, flush=True)
        return 130
    finally:
        demo.cleanup()


if __name__ == "__main__":
    sys.exit(main())
