"""How strong is the model checker? Break one safety rule at a time and count the actions the
explorer needs to notice (`make bench-model`, or `python bench/model_mutations.py`).

Each mutation is applied to a copy of the package in a temporary directory (the working tree
is never touched); the explorer (tests/model/explorer.py) then runs from a fixed seed until it
breaks an invariant or gives up. Prints a table and writes bench/model-mutations.json.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EPISODES = int(os.environ.get("MUTATION_EPISODES", "1500"))

# name -> (file, text to find, replacement): each removes or weakens one rule of the protocol.
MUTATIONS: dict[str, tuple[str, str, str]] = {
    "arbitration ignores a lower live claim": (
        "core/arbitration.py",
        "    if first is not None and first.comment_id < mine.comment_id:",
        "    if False:",
    ),
    "no settle before arbitration (list lag)": (
        "services/claiming.py", "LIST_SETTLE_S = 1.0", "LIST_SETTLE_S = 0.0",
    ),
    "a claimer does not judge its own age and the lease starts late": (
        "services/claiming.py",
        "        if max(age, spent) >= self.config.renew_deadline:",
        "        if False:",
    ),
    "a loser removes the queue label before arbitrating": (
        "services/claiming.py",
        "            self.gh.add_labels(n, [lab.working, *filter(None, [lab.stage(stage)])])\n",
        "            self.gh.add_labels(n, [lab.working, *filter(None, [lab.stage(stage)])])\n"
        "            self.gh.remove_label(n, lab.queue)\n",
    ),
    "endings skip the fence check": (
        "services/holding.py",
        "        why, released = self.fresh_check()\n",
        "        why, released = None, False\n",
    ),
    "a beat renews the lease even when the claim is lost": (
        "services/holding.py",
        "        if self.lost is None:\n            self.lease_until",
        "        if True:\n            self.lease_until",
    ),
    "the plan orders by update time (the v0.1 livelock)": (
        "core/plan.py",
        "    last = max(events, key=lambda e: e.comment_id, default=None)",
        "    last = max(events, key=lambda e: getattr(e, 'updated_at', e.created_at), default=None)",
    ),
    "a pass ignores the queue label beside a dead claim": (
        "core/plan.py",
        "    if labels.queue in on_issue and not",
        "    if False and not",
    ),
    "a reboot alone proves death (no missed beat)": (
        "core/liveness.py",
        "    if rebooted(h, seen.machine) and age > MISSED_BEAT_FACTOR * record.interval:",
        "    if rebooted(h, seen.machine):",
    ),
    "the fence counts comments it never listed as seen (ADR 0023)": (
        "services/holding.py",
        "        c.listed = c.listed[:kept] + [x.id for x in comments]\n",
        "        c.listed = c.listed[:kept] + [x.id for x in comments]\n"
        "        c.listed += [0] * max(0, issue.comments - len(c.listed))\n",
    ),
    "the settle counts from before the claim POST (ADR 0023)": (
        "services/claiming.py",
        "            self.clock.sleep(LIST_SETTLE_S - (self.clock.monotonic() - posted_at))",
        "            self.clock.sleep(LIST_SETTLE_S - (self.clock.monotonic() - lease_start))",
    ),
    "the fence trusts a page computed from a count deletions invalidate (ADR 0023)": (
        "services/holding.py",
        "        if first_page > 1 and (not comments or comments[0].id != c.listed[kept]):",
        "        if False:",
    ),
    "the fence lists only when the lock is gone or the issue closed (ADR 0044)": (
        "services/holding.py",
        "        log = self._read_new_comments(issue, gh)\n"
        "        self.lost = self._lost_reason(issue, log, now)\n"
        "        self.released = c.record.token in log.released_tokens()\n",
        "        if not issue.is_open or lab.working not in issue.labels:\n"
        "            log = self._read_new_comments(issue, gh)\n"
        "            self.lost = self._lost_reason(issue, log, now)\n"
        "            self.released = c.record.token in log.released_tokens()\n",
    ),
    "an outage retry moves labels after its record may be final (ADR 0024)": (
        "services/holding.py",
        "        if lost is None and (sent_before or later is not None or too_late):",
        "        if lost is None and (later is not None or too_late):",
    ),
    "an outage try moves labels over a later claim (ADR 0024)": (
        "services/holding.py",
        "        if lost is None and (sent_before or later is not None or too_late):",
        "        if lost is None and (sent_before or too_late):",
    ),
    "every outage try rewrites its record (ADR 0024)": (
        "services/holding.py",
        "            self._put_back(self._outage_record)",
        "            self._write_final(self._outage_record.with_changes(finished_at=self.clock.now_iso()))",
    ),
    "holder label writes start until 5 s before presumption (ADR 0024)": (
        "services/holding.py",
        "LABEL_LANDING_MARGIN_S = GITHUB_REQUEST_LIMIT_S + SERVER_TIME_SLACK_S",
        "LABEL_LANDING_MARGIN_S = 5.0",
    ),
    "an ending moves labels whenever it comes (ADR 0024)": (
        "services/holding.py",
        "        if self.clock.monotonic() >= self._last_label_write():\n            raise Unavailable(",
        "        if False:\n            raise Unavailable(",
    ),
    "a released winner leaves the strand its late unqueue made (ADR 0025)": (
        "services/holding.py",
        "        if self.claim.unqueued:  # our unqueue may have landed after the release (ADR 0025)",
        "        if False:",
    ),
}

RUNNER = """
import sys, json
sys.path[:0] = [sys.argv[1], sys.argv[2]]
from model.explorer import explore
taken, failure = explore(7, int(sys.argv[3]))
print(json.dumps({"actions": taken, "broken": None if failure is None else failure.error.splitlines()[0]}))
"""


def run_one(name: str, mutation: tuple[str, str, str] | None) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        pkg = Path(tmp) / "orion_action"
        shutil.copytree(ROOT / "orion_action", pkg)
        if mutation is not None:
            file, find, replace = mutation
            path = pkg / file
            text = path.read_text()
            if find not in text:
                return {"mutation": name, "error": f"pattern not found in {file}"}
            path.write_text(text.replace(find, replace, 1))
        started = time.monotonic()
        out = subprocess.run(
            [sys.executable, "-c", RUNNER, tmp, str(ROOT / "tests"), str(EPISODES)],
            capture_output=True, text=True, timeout=1800,
        )
        if out.returncode != 0:
            return {"mutation": name, "error": out.stderr.strip().splitlines()[-1:]}
        result = json.loads(out.stdout.strip().splitlines()[-1])
        return {"mutation": name, **result, "seconds": round(time.monotonic() - started, 1)}


def main() -> int:
    rows = [run_one("(none: the code as it is)", None)]
    rows += [run_one(name, m) for name, m in MUTATIONS.items()]
    for r in rows:
        verdict = "caught" if r.get("broken") else ("ERROR" if r.get("error") else "missed")
        why = r.get("broken") or r.get("error") or ""
        print(f"{verdict:7} {r.get('actions', '-')!s:>7} actions  {r['mutation']}  {why}")
    (ROOT / "bench" / "model-mutations.json").write_text(json.dumps(rows, indent=2) + "\n")
    baseline_ok = rows[0].get("broken") is None and not rows[0].get("error")
    return 0 if baseline_ok else 1


if __name__ == "__main__":
    sys.exit(main())
