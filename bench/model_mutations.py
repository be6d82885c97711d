"""How strong is the model checker? Break one safety rule at a time and count the actions the
explorer needs to notice (`make bench-model`, or `python bench/model_mutations.py`).

Each mutation is applied to a copy of the package in a temporary directory (the working tree
is never touched); the explorer (tests/model/explorer.py) then runs `make simulate`'s fixed
seeds and budget (250 episodes of 80 actions per seed) until it breaks an invariant on actions
that the unmutated code survives (a second process replays every broken episode on the
unmutated code: a break it shows too is no kill, a known hole's name excuses nothing), or
gives up; then the directed scenarios of tests/model/scenarios.py run (ADR 0047).
`python bench/model_mutations.py WORD...` runs only the mutations whose name contains a WORD
(and writes nothing). Prints a table and writes bench/model-mutations.json.
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
SEEDS = (1, 3, 4)  # make simulate's fixed seeds: the code as it is breaks no invariant there
EPISODES = int(os.environ.get("MUTATION_EPISODES", "250"))  # per seed, 80 actions each

# name -> [(file, text to find, replacement), ...]: each removes or weakens one rule of the protocol.
MUTATIONS: dict[str, list[tuple[str, str, str]]] = {
    "arbitration ignores a lower live claim": [(
        "core/arbitration.py",
        "    if first is not None and first.comment_id < mine.comment_id:",
        "    if False:",
    )],
    "no settle before arbitration (list lag)": [
        ("services/claiming.py", "LIST_SETTLE_S = 1.0", "LIST_SETTLE_S = 0.0"),
    ],
    "a claimer does not judge its own age and the lease starts late": [(
        "services/claiming.py",
        "        if max(age, spent) >= self.config.renew_deadline:",
        "        if False:",
    )],
    "a loser removes the queue label before arbitrating": [(
        "services/claiming.py",
        "                after_lock = self.gh.add_labels(n, [lab.working, *filter(None, [lab.stage(stage)])])"
        "\n",
        "                after_lock = self.gh.add_labels(n, [lab.working, *filter(None, [lab.stage(stage)])])"
        "\n                self.gh.remove_label(n, lab.queue)\n",
    )],
    "endings skip the fence check": [(
        "services/holding.py",
        "        why, released = self.fresh_check()\n",
        "        why, released = None, False\n",
    )],
    "a beat renews the lease even when the claim is lost": [(
        "services/holding.py",
        "        if self.lost is None:\n            self.promise, self.last_sent = promise, sent",
        "        if True:\n            self.promise, self.last_sent = promise, sent",
    )],
    "the plan orders by update time (the v0.1 livelock)": [(
        "core/plan.py",
        "    return max(events, key=lambda e: e.comment_id, default=None)",
        "    return max(events, key=lambda e: getattr(e, 'updated_at', e.created_at), default=None)",
    )],
    "a pass ignores the queue label beside a dead claim": [(
        "core/plan.py",
        "    queued = labels.queue in on_issue and not",
        "    queued = False and not",
    )],
    "a reboot alone proves death (no missed beat)": [(
        "core/liveness.py",
        "    if rebooted(h, seen.machine) and age > MISSED_BEAT_FACTOR * record.interval:",
        "    if rebooted(h, seen.machine):",
    )],
    # The protocol audit's three (docs/adr/0026: the model of 0a77c48 missed all of them).
    "audit: the outage path moves labels whatever the time (ADR 0019's bound gone)": [
        (
            "services/holding.py",
            "        too_late = self.clock.monotonic() >= self._last_label_write()",
            "        too_late = False",
        ),
        (
            "services/holding.py",
            "        with self.gh.bounded(Policy(self.clock, self._last_label_write())):",
            "        with self.gh.bounded(Policy(self.clock, float('inf'))):",
        ),
    ],
    "audit: a claimer ignores an earlier claim that ran meanwhile (ADR 0011)": [(
        "services/claiming.py",
        "        meanwhile = ran_meanwhile(log, record.token, issue.read_at)",
        "        meanwhile = None",
    )],
    "audit: keep_on_fresh_beat ignores recent tombstones (ADR 0018)": [(
        "core/plan.py", "    if recent.tombstones or recent.unreadable", "    if recent.unreadable",
    )],
    # The code review's survivors (reviews r3, code-quality.md section 4).
    "review: a pass drops the cancelled-run repair branch": [(
        "core/plan.py", "    if rec.state is State.CANCELLED:", "    if False:",
    )],
    "review: an interrupted run at the end of its budget is kept, not given up": [(
        "core/plan.py",
        "        Action.GIVE_UP, _STOPPED + ",
        "        Action.KEEP, _STOPPED + ",
    )],
    "review: blocker ignores that the claim itself was released": [(
        "core/arbitration.py", "    if token in log.released_tokens():", "    if False:",
    )],
    "review: ended_before misses a tombstone in the cut-off second": [(
        "core/arbitration.py",
        "t.created_at <= cutoff for t in log.tombstones",
        "t.created_at < cutoff for t in log.tombstones",
    )],
    # The fence itself.
    "a beat never lists new comments (a blind fence)": [(
        "services/holding.py",
        "        log = self._read_new_comments(issue, gh)\n"
        "        self.lost = self._keep_lock(issue, log, now, gh)",
        "        log = read_log(c.comments.values(), c.trusted)\n"
        "        self.lost = self._keep_lock(issue, log, now, gh)",
    )],
    "a beat lists only when the comment count changed (ADR 0044)": [(
        "services/holding.py",
        "        log = self._read_new_comments(issue, gh)\n"
        "        self.lost = self._keep_lock(issue, log, now, gh)",
        "        log = (self._read_new_comments(issue, gh) if issue.comments != len(c.listed)\n"
        "               else read_log(c.comments.values(), c.trusted))\n"
        "        self.lost = self._keep_lock(issue, log, now, gh)",
    )],
    # h1-protocol's rules for the r3 audit's findings (ADRs 0023-0025).
    "the fence counts comments it never listed as seen (ADR 0023)": [(
        "services/holding.py",
        "        c.listed = c.listed[:kept] + [x.id for x in comments]\n",
        "        c.listed = c.listed[:kept] + [x.id for x in comments]\n"
        "        c.listed += [0] * max(0, issue.comments - len(c.listed))\n",
    )],
    "the settle counts from before the claim POST (ADR 0023)": [(
        "services/claiming.py",
        "            self.clock.sleep(LIST_SETTLE_S - (self.clock.monotonic() - posted_at))",
        "            self.clock.sleep(LIST_SETTLE_S - (self.clock.monotonic() - lease_start))",
    )],
    "the fence trusts a page computed from a count deletions invalidate (ADR 0023)": [(
        "services/holding.py",
        "        if first_page > 1 and (not comments or comments[0].id != c.listed[kept]):",
        "        if False:",
    )],
    "an outage retry moves labels after its record may be final (ADR 0024)": [(
        "services/holding.py",
        "        if lost is None and (sent_before or later is not None or too_late):",
        "        if lost is None and (later is not None or too_late):",
    )],
    "an outage try moves labels over a later claim (ADR 0024)": [(
        "services/holding.py",
        "        if lost is None and (sent_before or later is not None or too_late):",
        "        if lost is None and (sent_before or too_late):",
    )],
    "every outage try rewrites its record (ADR 0024)": [(
        "services/holding.py",
        "            self._put_back(self._outage_record)",
        "            self._write_final(self._outage_record.with_changes(finished_at=self.clock.now_iso()))",
    )],
    "holder label writes start until 5 s before presumption (ADR 0024)": [(
        "services/holding.py",
        "LABEL_LANDING_MARGIN_S = GITHUB_REQUEST_LIMIT_S + SERVER_TIME_SLACK_S",
        "LABEL_LANDING_MARGIN_S = 5.0",
    )],
    "an ending moves labels whenever it comes (ADR 0024)": [(
        "services/holding.py",
        "        if self.clock.monotonic() >= self._last_label_write():\n            raise Unavailable(",
        "        if False:\n            raise Unavailable(",
    )],
    "a released winner leaves the strand its late unqueue made (ADR 0025)": [(
        "services/holding.py",
        "        if self.claim.unqueued:  # our unqueue may have landed after the release (ADR 0025)",
        "        if False:",
    )],
    "a winner runs whether or not its unqueue took the queue label (ADR 0048)": [(
        "services/claiming.py",
        "        if not took_queueing:",
        "        if False:",
    )],
    "a pass unlocks a queued issue with no claim listed (ADR 0049)": [(
        "core/plan.py",
        "    if queued and not log.claims:\n        return Fated(Fate.CLAIM_IN_FLIGHT)",
        "    if False:\n        return Fated(Fate.CLAIM_IN_FLIGHT)",
    )],
    "every copy of a claim posted twice is a claim (ADR 0049)": [(
        "core/issue.py",
        "    claims = [c for c in claims if last_copy[c.record.token] == c.comment_id]",
        "",
    )],
    "a pass requeues a dead run under a cancel (ADR 0049)": [(
        "core/plan.py",
        "    for_cancel = target == labels.queue and labels.cancel in on_issue",
        "    for_cancel = False",
    )],
    "a loser tidies whatever the comment count says (ADR 0049)": [(
        "services/claiming.py",
        "            if issue.comments > len(comments):\n                return\n",
        "",
    )],
    "a pass moves labels after the lock was taken off (ADR 0049)": [(
        "services/reconcile.py",
        "        if self.config.labels.working not in issue.labels:",
        "        if False:",
    )],
    "a pass moves labels whatever the comment count says (ADR 0049)": [(
        "services/reconcile.py",
        "        if listed is None or issue.comments <= listed:",
        "        if True:",
    )],
    "a forced release requeues a cancelled issue (ADR 0049)": [(
        "core/plan.py",
        "    cancelled = labels.cancel in on_issue",
        "    cancelled = False",
    )],
    "a release by hand unlocks a queued lock with no claim listed, not queueing it (ADR 0052)": [(
        "services/reconcile.py",
        "        if not s.log.claims and not s.log.unreadable and lab.queue not in issue.labels:",
        "        if not s.log.claims and not s.log.unreadable:",
    )],
    "a stopped child is never ended by run.idle_timeout (issue 15: a child that stops)": [(
        "core/ending.py",
        "    if config.idle_timeout > 0 and idle_s is not None and idle_s >= config.idle_timeout:",
        "    if False:",
    )],
    # h20-holder-holes: the holder side of issue 15's open holes (ADR 0055).
    "a winner looks for its unanswered unqueue's strand at once (ADR 0055)": [(
        "services/claiming.py",
        "                self.clock.sleep(UNQUEUE_LANDED_S)",
        "                self.clock.sleep(0.0)",
    )],
    "the label-write bound counts on the boot clock alone (ADR 0055)": [(
        "services/holding.py",
        "        if self._stamp is not None and self._read_at is not None:",
        "        if False:",
    )],
    # The outage account is appended as a marker no edit undoes (ADR 0092, superseding ADR
    # 0056's looks back at the record).
    "the outage path appends no marker: its record alone excuses the attempt (ADR 0092)": [(
        "services/holding.py",
        "        self._append_outage_marker(record)\n",
        "",
    )],
    # A holder reads GitHub's record of the cancel label when its issue changed (ADR 0093).
    "a holder judges a cancel by the label alone (ADR 0093)": [(
        "services/holding.py",
        "        if lab.cancel in issue.labels or self._cancel_taken_off(issue, gh):",
        "        if lab.cancel in issue.labels:",
    )],
    "a holder counts a failed read of the cancel record as judged (ADR 0093)": [(
        "services/holding.py",
        "        try:\n            events = gh.queue_history(",
        "        self._issue_judged = issue.updated_at\n        try:\n            events = gh.queue_history(",
    )],
    "a holder's outage marker after a release or a later run decides the issue's fate (ADR 0092)": [(
        "core/plan.py",
        "    releases = [t for t in log.tombstones if a_release_of(log, t, ran)]",
        "    releases = [t for t in log.tombstones if a_release_of(log, t, ran) or t.tombstone.by"
        " == 'holder']",
    )],
    "the late-unqueue look takes a holder's overtaken outage marker for the last event (ADR 0092)": [(
        "core/requeue.py",
        "    releases = (t for t in log.tombstones if a_release_of(log, t, took_something))",
        "    releases = (t for t in log.tombstones if a_release_of(log, t, took_something) or t.tombstone.by"
        " == 'holder')",
    )],
    "a pass's release of a claim that never ran counts as a return to the queue (ADR 0098)": [(
        "core/requeue.py",
        "    releases = (t for t in log.tombstones if a_release_of(log, t, took_something))",
        "    releases = (t for t in log.tombstones if a_release_of(log, t, took_something) or t.tombstone.by"
        " == 'reconcile')",
    )],
    # Adaptive beats (ADR 0045): run with ORION_MODEL_ADAPTIVE=1 (ENVIRONMENTS below), where a
    # 2 s base beat stretches nine-fold and records promise several times the judges' stale_after.
    "a judge uses its own stale_after, not the record's promise (ADR 0045)": [(
        "core/liveness.py",
        "    limit = max(stale_after, record.stale_after)",
        "    limit = stale_after",
    )],
    "the holder's lease ignores the promise: config.renew_deadline (ADR 0045)": [(
        "services/holding.py",
        "            self.lease_until = max(self.lease_until, sent + renew_deadline(promise.stale_after))",
        "            self.lease_until = max(self.lease_until, sent + self.config.renew_deadline)",
    )],
    # h19's pass rules (ADRs 0053, 0054).
    "the cancel sweep takes the labels off while a claim may still add its lock (ADR 0053)": [(
        "services/reconcile.py",
        "        in_flight = self._claim_in_flight(issue)\n",
        "        in_flight = None\n",
    )],
    "a queue label beside the cancel label requeues a dead run (ADR 0053)": [(
        "core/plan.py",
        "    if queued and labels.cancel not in on_issue:",
        "    if queued:",
    )],
    "a pass's last listing before its label move ignores another pass's release (ADR 0054)": [(
        "services/reconcile.py",
        "        beaten = self._beaten_to_it(read_log(comments, self.trusted), plan, mine, known)",
        "        beaten = self._beaten_to_it(read_log(comments, self.trusted), plan, set(), known)",
    )],
    "a pass's lock removal is retried by the client after a lost answer (ADR 0054)": [(
        "services/reconcile.py",
        "                with self.gh.bounded(ONE_TRY):\n",
        "                with self.gh.bounded(replace(ONE_TRY, abort=None)):\n",
    )],
    "a pass unlocks beside the queue label whatever its listing lags (ADR 0054)": [(
        "services/reconcile.py",
        "        if self.config.labels.queue in issue.labels and recent:",
        "        if False:",
    )],
    "the cancel sweep removes what it planned from its listing (ADR 0053)": [(
        "services/reconcile.py",
        "        plan = fresh\n",
        "",
    )],
    # h42's holder rule (ADR 0065).
    "a live holder never puts back a lock orion's stale write took off (ADR 0065)": [(
        "services/holding.py",
        "        if not decided.put_back:\n",
        "        if True:\n",
    )],
    # h44: a person who deletes a live run's claim comment takes the issue over (ADR 0068).
    "a beat whose claim comment was deleted carries on (ADR 0068)": [(
        "services/holding.py",
        "        except Unavailable:\n"
        "            self._ambiguous_write = True  # the server may still apply it\n",
        "        except NotFound:\n            self.claim.record = record\n"
        "            return datetime.fromisoformat(self.clock.now_iso())\n"
        "        except Unavailable:\n"
        "            self._ambiguous_write = True  # the server may still apply it\n",
    )],
    "a cancel taken off by orion's own sweep no longer stands (ADR 0061)": [(
        "core/cancelled.py",
        "        elif name == c and standing is not None and e.login and not is_orion(e.login):",
        "        elif name == c and standing is not None:",
    )],
    "the cancel sweep does not put back a cancel its removal took after its read (ADR 0073)": [(
        "core/cancelled.py",
        "    if cancel in on_issue or not (queue in on_issue or lock in on_issue):",
        "    if True:",
    )],
    "a pass rewrites a released record its holder wrote since the plan's read (ADR 0073)": [(
        "services/reconcile.py",
        "                if fresh.updated_at != entry.updated_at or parse_block(fresh.body) != entry.record:",
        "                if False:",
    )],
    "the cancel sweep does not put back a queueing its removal took after its read (ADR 0073)": [(
        "core/cancelled.py",
        "    if queue in on_issue or lock in on_issue:",
        "    if True:",
    )],
    "a holder's repair requeues an issue cancelled since its release (ADR 0073)": [(
        "services/claiming.py",
        "        if cancel_against_a_persons_queueing(record, lab.queue, lab.cancel,",
        "        if False and cancel_against_a_persons_queueing(record, lab.queue, lab.cancel,",
    )],
    "a pass keeps a fate it added after someone else moved the labels (ADR 0073)": [(
        "core/stale_add.py",
        "    if lab.working in after:",
        "    if True:",
    )],
    # Session 11: a signal-cancelled run stays out of the queue (ADRs 0043, 0069).
    "a cancelled Actions job hands its issue back, spending no attempt (ADR 0043)": [(
        "core/ending.py",
        '    if config.on_signal == "requeue":\n'
        '        return handed_back(config, attempt, why, counts=started)',
        '    if True:\n        return handed_back(config, attempt, why, counts=False)',
    )],
    # h43-queue: the claim side of issue 15's open holes (ADRs 0066, 0067).
    "a claimer ignores the cancel label in its lock write's answer (ADR 0066)": [(
        "services/claiming.py",
        "                if cancelled is not None:  # give up before anything runs (ADR 0066)",
        "                if False:",
    )],
    "a winner whose unqueue went unanswered writes `lost` before its wait (ADR 0067)": [(
        "services/claiming.py",
        "            if claim.unqueued and isinstance(exc, Unavailable):\n",
        "            if claim.unqueued and isinstance(exc, Unavailable):\n"
        "                self._give_up(claim, f\"the claim could not be completed: {exc}\", unqueued=True)\n",
    )],
    "a lost record never says it sent its unqueue (ADR 0067)": [(
        "services/claiming.py",
        "unqueued=claim.unqueued)",
        "unqueued=False)",
    )],
    "a pass ignores the queueing a lost claim took (ADR 0067)": [(
        "core/plan.py",
        "    owed = _queueing_owed(log, last)\n",
        "    owed = None\n",
    )],
    "a pass unlocks as queued again although the queue label went meanwhile (ADR 0067)": [(
        "services/reconcile.py",
        "        if plan.action is Action.REQUEUE and not plan.add_labels and not plan.for_cancel \\\n",
        "        if False \\\n",
    )],
    "a pass requeues beside a claim that says it took no queueing (ADR 0067)": [(
        "core/plan.py",
        "        taken = newest.record.state is State.LOST and newest.record.unqueued is False\n",
        "        taken = False\n",
    )],
    "a claimer's lost record says nothing of its unqueue (ADR 0067)": [(
        "services/claiming.py",
        "state=State.LOST, note=why, unqueued=unqueued)",
        "state=State.LOST, note=why, unqueued=unqueued or None)",
    )],
    # h47: a person's release decides the fate whatever its claim's record says (ADR 0064).
    "a person's release of a claim whose record reads as never run decides nothing (ADR 0064)": [(
        "core/arbitration.py",
        '    return (t.tombstone.by == "release" or claim is None or matters(claim)) and not overtaken(log, t'
        ')',
        "    return (claim is None or matters(claim)) and not overtaken(log, t)",
    )],
    # h52: a dead claim that never started is held in doubt while its unqueue may land (ADR 0072).
    "a pass requeues a dead claim that never started while its unqueue may still land (ADR 0072)": [(
        "core/liveness.py",
        "    if age >= window:\n        return verdict\n",
        "    if True:\n        return verdict\n",
    )],
    "a pass never looks for an issue a dead holder left with no label (ADR 0072)": [(
        "services/reconcile.py",
        "        if listing is None or not self.strands:",
        "        if True:",
    )],
    # h58: the holder's ending sends its final record and outcome label in one request, the lock
    # left on until the last write (ADR 0076).
    "a pass leaves an outcome label beside the lock of a run it requeues (ADR 0076)": [(
        "core/plan.py",
        "    return tuple(n for n in (labels.ready, labels.failed) if n in on_issue and n != target)",
        "    return ()",
    )],
    "the lock comes off before the record+outcome request answered (ADR 0076)": [(
        "services/holding.py",
        "        done, sent = self._finish_at_once(record, outcome.add)\n",
        "        self.gh.remove_label(self.number, self.config.labels.working)\n"
        "        done, sent = self._finish_at_once(record, outcome.add)\n",
    )],
    "the lock comes off while the unanswered one request may still land (ADR 0076)": [(
        "services/holding.py",
        "                self.clock.sleep(max(0.0, sent + LABEL_LANDING_MARGIN_S - self.clock.monotonic()))"
        "\n",
        "                pass\n",
    )],
    "the holder does not add by REST what the one request refused (ADR 0076)": [(
        "services/holding.py",
        "            add = None if done is not None and done.added else outcome.add\n",
        "            add = None if done is not None else outcome.add\n",
    )],
    # A person's cancel of a dead run, then the lock taken off by hand: the sweep takes the cancel
    # label off, and only GitHub's record says the stranded issue is cancelled (ADR 0078).
    "a stranded issue's repair requeues past a person's standing cancel (ADR 0078)": [(
        "services/reconcile.py",
        "                               cancel_stands=stands)",
        "                               cancel_stands=False)",
    )],
    # A released holder's repair does not count a stale queue addition as a requeue (ADR 0083).
    "a released holder's repair counts orion's stale queue addition as a new queueing (ADR 0083)": [(
        "services/claiming.py",
        "        if cancel_against_a_persons_queueing(record, lab.queue, lab.cancel, claim.trusted.has):",
        "        if __import__('orion_action.core.cancelled', fromlist=['_']).standing_cancel(\n"
        "                record, lab.queue, lab.cancel, claim.trusted.has):",
    )],
    # A loser's tidy reads the labels after its listing (ADR 0082).
    "a loser's tidy reads the labels before it lists the comments (ADR 0082)": [(
        "services/claiming.py",
        "            comments, _ = self.gh.list_comments(n)\n            issue, _ = self.gh.get_issue(n)\n",
        "            issue, _ = self.gh.get_issue(n)\n            comments, _ = self.gh.list_comments(n)\n",
    )],
    # The strand look anchored at the previous successful pass (ADR 0081).
    "the strand look reaches back 2 x stale_after however long ago the previous pass ran (ADR 0081)": [(
        "core/plan.py",
        "    if previous is None:\n        return unanchored",
        "    if True:\n        return unanchored",
    )],
    # A person's release beside the holder's own ending in the same second (ADR 0080).
    "a release's re-read of a record it rewrites compares whole-second times only (ADR 0080)": [(
        "services/reconcile.py",
        "                if fresh.updated_at != entry.updated_at or parse_block(fresh.body) != entry.record:",
        "                if fresh.updated_at != entry.updated_at:",
    )],
    # A pass's requeue that lands after a person's cancel was carried out by another pass (ADR 0079).
    "a pass's late requeue does not ask the record for a cancel carried out meanwhile (ADR 0079)": [(
        "services/reconcile.py",
        "            if asks_the_record(plan.add_labels, after, self.config.labels):",
        "            if False:",
    )],
    # The next pass looks at the queued issues a cancel still stands against (ADR 0085).
    "a pass does not look at the queued issues a cancel still stands against (ADR 0085)": [(
        "services/reconcile.py",
        "            if cancel is not None:\n                who = cancel.login or \"someone\"\n",
        "            if False:\n                who = cancel.login or \"someone\"\n",
    )],
    # The next pass queues again an issue a released claim's late unqueue stranded (ADR 0086).
    "a pass does not put back a requeue a released claim's late unqueue took (ADR 0086)": [(
        "services/reconcile.py",
        "                 for p in self.survey_late_unqueues(locked | self._queued)]\n",
        "                 for p in ()]\n",
    )],
    "a pass does not put back a queueing a claim that gave up after its unqueue took (ADR 0086)": [(
        "core/requeue.py",
        "    if isinstance(last, ClaimEntry) and last.record.state is State.LOST and last.record.unqueued:",
        "    if False:",
    )],
    # The next pass puts back a person's queueing a stale removal took (ADR 0088).
    "a pass does not put back a queueing a pass's stale removal took (ADR 0088)": [(
        "services/reconcile.py",
        "                 for p in self.survey_taken_queueings(locked | self._queued | repaired)]\n",
        "                 for p in ()]\n",
    )],
    "a lock since the queueing hides a stale removal though every claim took nothing (ADR 0088)": [(
        "core/requeue.py",
        "    if locks and not (since_then and all(map(gave_up_taking_nothing, since_then))",
        "    if locks and not (since_then and all(map(gave_up_taking_nothing, since_then)) and False",
    )],
    "orion's put-back of a cancel counts as a person's cancel (ADR 0088)": [(
        "core/cancelled.py",
        "            if put_back:\n                continue",
        "            if False:\n                continue",
    )],
    "the sweep leaves orion's stale cancel label on after putting a queueing back (ADR 0088)": [(
        "services/reconcile.py",
        "                if lab.cancel in issue.labels:\n                    # orion's own put-back",
        "                if False:\n                    # orion's own put-back",
    )],
    # A claim posted after the pass's tombstone came after its release (ADR 0089).
    "a pass takes its release back for a claim posted after it (ADR 0089)": [(
        "services/reconcile.py",
        "            duplicate = self._beaten_to_it(fresh_log, plan, set(mine), known, before_mine=True)",
        "            duplicate = self._beaten_to_it(fresh_log, plan, set(mine), known)",
    )],
    # An unqueue whose answer was lost and whose retry found the label gone is not "mine" (ADR 0096).
    "a winner's unqueue that went unanswered and then read 404 counts as taking the queueing (ADR 0096)": [(
        "services/claiming.py",
        "                    took_queueing = not another_claim_may_have_taken(after, record.token, "
        "issue.read_at)",
        "                    took_queueing = True",
    )],
    # The late-unqueue look counts orion's removal however late it landed (ADR 0095).
    "the late-unqueue look bounds orion's removal by the released claim's lease (ADR 0095)": [(
        "services/reconcile.py",
        "            if taken_by_a_late_unqueue(events, lab.queue, self.trusted.has, risk.since):",
        "            if taken_by_a_late_unqueue(events, lab.queue, self.trusted.has, risk.since) and ("
        "orion_took_the_queue_label(events, lab.queue, self.trusted.has).at <= min("
        "(c.created_at for c in logs[n].claims), default=risk.since) + timedelta(seconds=52)):",
    )],
    "the late-unqueue look judges by a listing that may lag a later claim's edits (ADR 0095)": [(
        "services/reconcile.py",
        "                by_id[c.comment_id], _ = self.gh.get_comment(c.comment_id)",
        "                pass",
    )],
    # The next pass puts on the queue label of a release whose writer died before its labels (ADR 0098).
    "a release back to the queue whose label never landed is left with no label (ADR 0098)": [(
        "services/reconcile.py",
        "            elif risk.released and requeue_never_landed(events, lab.queue, risk.since):",
        "            elif False:",
    )],
    # The next pass takes off a stale fate that landed beside a person's queueing (ADR 0094).
    "a pass leaves a fate orion added after a person's queueing and the lock's removal (ADR 0094)": [(
        "core/stale_add.py",
        "            off.append(FateOff(name, \"stale-fate\"))  # row stale-fate",
        "            pass",
    )],
    # A run's fate added after a person queued the issue mid-run comes off (ADR 0099).
    "a pass leaves a run's fate added after a person's mid-run queueing (ADR 0099)": [(
        "core/stale_add.py",
        "            off.append(FateOff(name, \"queued-mid-run\"))  # row queued-mid-run",
        "            pass",
    )],
    # ...also when the person queued after the fate landed, the lock still on (ADR 0099).
    "a person's queueing after a run's fate, under the lock, counts as queueing a done issue (ADR 0099)": [(
        "core/stale_add.py",
        "    mid_run = not orion_queued and lock is not None and q < lock  # a person's, under the lock",
        "    mid_run = False",
    )],
    # ...and one orion added after its own queueing and the lock's removal (ADR 0099).
    "a pass leaves a fate orion added after orion's own requeue took the lock off (ADR 0099)": [(
        "core/stale_add.py",
        "    mid_run = not orion_queued and lock is not None and q < lock  # a person's, under the lock",
        "    mid_run = not orion_queued and lock is not None and q < lock\n"
        "    if orion_queued:\n        return ()",
    )],
    # A stale requeue of orion's beside a run's fate comes off (ADR 0099).
    "a pass leaves orion's stale requeue beside a run's fate (ADR 0099)": [(
        "services/reconcile.py",
        "            elif requeue_over_a_fate(events, on, lab, self.trusted.has):",
        "            elif False:",
    )],
    # ...and looks again, for a holder's outage hand-back that took the fate off meanwhile (ADR 0099).
    "a pass that took a stale requeue off leaves the issue with no label (ADR 0099)": [(
        "services/reconcile.py",
        "        return self._hand_back_meanwhile(plan) if plan.action is Action.COMPLETE else plan",
        "        return plan",
    )],
    # Two of orion's writes under one lock: the last run's record says which was the run's own (ADR 0102).
    "a pass leaves orion's queue label and a fate both added under one lock (ADR 0102)": [(
        "core/stale_add.py",
        "        return RunDecides((lab.queue, *(x for x in fates if x != end.label)), \"run-ended\")",
        "        return RunDecides((), \"no-word\")",
    )],
    # ...the run handed back: the stale fate comes off (ADR 0102).
    "a pass leaves a stale fate beside a handed-back run's queue label under its lock (ADR 0102)": [(
        "core/stale_add.py",
        "        return RunDecides(fates, \"handed-back\")",
        "        return RunDecides((), \"no-word\")",
    )],
    # ...and a cancelled run's stale queue label under its lock, no fate beside it (ADR 0103).
    "a pass leaves orion's stale queue label after the run under its lock was cancelled (ADR 0103)": [(
        "core/stale_add.py",
        "        return RunDecides((lab.queue,), \"cancelled\")",
        "        return RunDecides((), \"no-word\")",
    )],
    # ...and a signal's cancel ending takes off a queue label orion added under its lock (ADR 0104).
    "a signal's cancel ending leaves orion's stale queue label on (ADR 0104)": [(
        "services/holding.py",
        "        return (lab.queue,) if row == \"orions-requeue\" else ()",
        "        return ()",
    )],
    # A claim after a cancelled run runs only a person's queueing since it (ADR 0105).
    "a claimer runs orion's stale queue label after a cancelled run (ADR 0105)": [(
        "services/claiming.py",
        "        if row == \"persons-queueing\":",
        "        if True:",
    )],
    "a claimer takes orion's queue label after a cancelled run for a person's (ADR 0105)": [(
        "core/stale_add.py",
        "    if any(e.added and e.login and not is_orion(e.login) for e in since):",
        "    if any(e.added and e.login for e in since):",
    )],
    # A person's forced release moves no labels under a claim made after its survey (ADR 0107).
    "a person's forced release takes the lock of a claim made after its survey (ADR 0107)": [(
        "services/reconcile.py",
        "        since = self._claimed_since_the_survey(now, {c.record.token for c in ordered}, set(posted))",
        "        since = None",
    )],
    # ...read past a pass's release posted after a later run (ADR 0102).
    "a pass's release posted after a later run decides the issue's fate (ADR 0102)": [(
        "core/arbitration.py",
        "    if claim is None or t.tombstone.by == \"release\":",
        "    if claim is None or t.tombstone.by != HOLDER_END:",
    )],
    # A claimer whose unanswered unqueue made it list the comments stops on its own release.
    "a claimer that listed its own release after an unanswered unqueue runs anyway (ADR 0096)": [(
        "services/claiming.py",
        "        if released:",
        "        if False:",
    )],
    # The queueing a stale removal took is the person's, through orion's put-backs of it (ADR 0088).
    "the look for a queueing a stale removal took stops at orion's put-back of it (ADR 0088)": [(
        "core/requeue.py",
        "                 and e.login and not is_orion(e.login)), default=None)",
        "                 ), default=None)\n"
        "    if added is not None and not (found[added].login and not is_orion(found[added].login)):\n"
        "        return None",
    )],
    # A pass rewrites only the record of a holder it saw gone (ADR 0090).
    "a pass rewrites the record of a holder judged dead by its silence (ADR 0090)": [(
        "services/reconcile.py",
        "                 if (v := s.verdicts.get(e.record.token)) is not None and v.holder_gone)",
        "                 if (v := s.verdicts.get(e.record.token)) is not None)",
    )],
    # A pass that could not make every read or write does not anchor the next (ADR 0091).
    "an incomplete pass counts as the previous successful pass (ADR 0091)": [(
        "services/reconcile.py",
        "        self.incomplete.append(why)\n",
        "",
    )],
    # The strand look reads past a loser's claim to the winner's (ADR 0072, seed 151 episode 87).
    "the strand look takes a newer lost claim for the issue's story (ADR 0072)": [(
        "core/plan.py",
        "        standing = [c for c in log.claims if not took_nothing(c)]",
        "        standing = list(log.claims)",
    )],
    "a claim that took nothing hides the release a late unqueue undid (ADR 0086)": [(
        "core/requeue.py",
        "    events: list[ClaimEntry | TombstoneEntry] = [*filter(took_something, log.claims), *releases]",
        "    events: list[ClaimEntry | TombstoneEntry] = [*log.claims, *releases]",
    )],
    "the strand look leaves a run that lost its lease to the lock it no longer has (ADR 0086)": [(
        "core/plan.py",
        "        stopped = newest.record.state is State.LOST and ran(newest)",
        "        stopped = False",
    )],
    # A claim looks past orion's own queue labels to a person's (ADR 0085).
    "the trigger check counts orion's own queue label as a new queueing (ADR 0085)": [(
        "services/trigger.py",
        "    cancel = cancel_against_a_persons_queueing(events, lab.queue, lab.cancel, is_orion)",
        "    cancel = __import__('orion_action.core.cancelled', fromlist=['_']).standing_cancel(\n"
        "        events[queue[-1]:], lab.queue, lab.cancel, is_orion)",
    )],
}

# The environment a mutation runs in, beyond this process's (both the mutated and the reference
# run): the adaptive ones only show where beats stretch.
ENVIRONMENTS: dict[str, dict[str, str]] = {
    "a judge uses its own stale_after, not the record's promise (ADR 0045)": {"ORION_MODEL_ADAPTIVE": "1"},
    "the holder's lease ignores the promise: config.renew_deadline (ADR 0045)": {"ORION_MODEL_ADAPTIVE": "1"},
}
# Rules whose break is orion taking a live run's lock off: since ADR 0065 the run puts the lock
# back, so they are judged in the world's strict mode (world.STRICT_LOCKS), where the removal
# itself is the break (the unmutated code replays the same actions in the same mode).
STRICT = {"ORION_MODEL_STRICT_LOCKS": "1"}
ENVIRONMENTS.update({name: STRICT for name in (
    "audit: the outage path moves labels whatever the time (ADR 0019's bound gone)",
    "an outage retry moves labels after its record may be final (ADR 0024)",
    "holder label writes start until 5 s before presumption (ADR 0024)",
    "a pass moves labels after the lock was taken off (ADR 0049)",
    "a pass moves labels whatever the comment count says (ADR 0049)",
    "a pass's last listing before its label move ignores another pass's release (ADR 0054)",
    "a pass's lock removal is retried by the client after a lost answer (ADR 0054)",
    "a pass unlocks beside the queue label whatever its listing lags (ADR 0054)",
    # its ending's label writes take the next run's lock; ADRs 0065 and 0076 repair what follows
    "the label-write bound counts on the boot clock alone (ADR 0055)",
)})

# Rules whose break is a stale queue label on a cancelled issue, a queueing a late unqueue took,
# or an issue left with no label: the next pass repairs each (ADRs 0085, 0086, 0072), so they are
# judged without those looks (world.NEXT_PASS_LOOKS).
NO_NEXT_PASS_LOOKS = {"ORION_MODEL_NO_NEXT_PASS_LOOKS": "1"}
ENVIRONMENTS.update({name: NO_NEXT_PASS_LOOKS for name in (
    "a holder's repair requeues an issue cancelled since its release (ADR 0073)",
    "a released holder's repair counts orion's stale queue addition as a new queueing (ADR 0083)",
    "a pass's late requeue does not ask the record for a cancel carried out meanwhile (ADR 0079)",
    "a released winner leaves the strand its late unqueue made (ADR 0025)",
    "a winner looks for its unanswered unqueue's strand at once (ADR 0055)",
    "the cancel sweep removes what it planned from its listing (ADR 0053)",
    "a winner whose unqueue went unanswered writes `lost` before its wait (ADR 0067)",
    "a pass unlocks as queued again although the queue label went meanwhile (ADR 0067)",
    "a pass requeues beside a claim that says it took no queueing (ADR 0067)",
    "a pass requeues a dead claim that never started while its unqueue may still land (ADR 0072)",
    "a stranded issue's repair requeues past a person's standing cancel (ADR 0078)",
    "a release's re-read of a record it rewrites compares whole-second times only (ADR 0080)",
    "a claimer's lost record says nothing of its unqueue (ADR 0067)",
    "the cancel sweep does not put back a queueing its removal took after its read (ADR 0073)",
    # its two fates are repaired by the next pass's look at the queue (ADR 0094)
    "a pass keeps a fate it added after someone else moved the labels (ADR 0073)",
)})
# And those the strand look mends (ADR 0072): judged without it, and without the other two.
NO_STRAND_LOOK = {**NO_NEXT_PASS_LOOKS, "ORION_MODEL_NO_STRAND_LOOK": "1"}
ENVIRONMENTS.update({name: NO_STRAND_LOOK for name in (
    "a loser's tidy reads the labels before it lists the comments (ADR 0082)",
    "a release by hand unlocks a queued lock with no claim listed, not queueing it (ADR 0052)",
)})

# And the ADR 0053 rule a holder's read of GitHub's record of the cancel label now also covers
# (ADR 0093): judged with holders that go by the label alone.
ENVIRONMENTS["the cancel sweep takes the labels off while a claim may still add its lock (ADR 0053)"] = {
    "ORION_MODEL_NO_HOLDER_CANCEL_READ": "1"}

# And the claim rules whose break (two winners, or a winner after an earlier run) ADR 0096's look
# for another claim after an unanswered unqueue now also stops: judged with winners that read
# such an unqueue as "mine", as before ADR 0096.
ENVIRONMENTS.update({name: {"ORION_MODEL_NO_UNQUEUE_LOOK": "1"} for name in (
    "audit: a claimer ignores an earlier claim that ran meanwhile (ADR 0011)",
    "the settle counts from before the claim POST (ADR 0023)",
)})

# The mutated code runs in one process; the unmutated code in a second (REFERENCE), which
# replays every episode the mutated code breaks: only a break the unmutated code survives on
# the very same actions is a kill (explorer.explore's `reference`). Known holes excuse nothing.
REFERENCE = """
import sys, json
sys.path[:0] = [sys.argv[1], sys.argv[2]]
from model.explorer import Setup, breaks
for line in sys.stdin:
    ask = json.loads(line)
    print(int(breaks(Setup(**ask["setup"]), ask["acts"])), flush=True)
"""

RUNNER = """
import sys, json, dataclasses, subprocess
sys.path[:0] = [sys.argv[1], sys.argv[2]]
from model.explorer import explore
mutated = sys.argv[7] == "1"  # the code as it is: known holes excused, as make simulate does
ref = subprocess.Popen([sys.executable, "-c", sys.argv[6], sys.argv[5], sys.argv[2]],
                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) if mutated else None
def reference(setup, acts):
    ref.stdin.write(json.dumps({"setup": dataclasses.asdict(setup), "acts": acts}) + "\\n")
    ref.stdin.flush()
    return ref.stdout.readline().strip() == "1"
total, broken, excused = 0, None, {}
for seed in json.loads(sys.argv[4]):
    taken, failure = explore(seed, int(sys.argv[3]), known=excused, reference=reference if mutated else None)
    total += taken
    if failure is not None:
        lines = failure.error.strip().splitlines()
        last = lines[-1 if lines[0].startswith("Traceback") else 0]
        broken = f"seed {seed} episode {failure.episode}: " + last
        break
if broken is None:  # the directed scenarios (tests/model/scenarios.py): the code as it is passes them all
    from model.scenarios import (NEEDS_THE_HOLDER_CANCEL_READ, NEEDS_THE_NEXT_PASS_LOOKS,
                                 NEEDS_THE_STRAND_LOOK, NEEDS_THE_UNQUEUE_LOOK, SCENARIOS,
                                 STALE_LOCK_REMOVALS, Unplayable)
    from model.scheduler import SchedulerError
    from model.world import (HOLDER_CANCEL_READ, NEXT_PASS_LOOKS, STRAND_LOOK, STRICT_LOCKS, UNQUEUE_LOOK,
                             InvariantError)
    for name, scenario in SCENARIOS.items():
        if STRICT_LOCKS and name in STALE_LOCK_REMOVALS:
            continue  # the code as it is takes a live run's lock off there: strict mode breaks it
        if (not NEXT_PASS_LOOKS and name in NEEDS_THE_NEXT_PASS_LOOKS) or (
                not STRAND_LOOK and name in NEEDS_THE_STRAND_LOOK) or (
                not HOLDER_CANCEL_READ and name in NEEDS_THE_HOLDER_CANCEL_READ) or (
                not UNQUEUE_LOOK and name in NEEDS_THE_UNQUEUE_LOOK):
            continue  # the code as it is leaves labels there only the next pass's looks repair
        try:
            scenario()
        except (SchedulerError, Unplayable):
            # The mutated code makes other requests than the scenario scripts (a step it expects
            # is not there, a claim it expects to win loses): that shows no unsafe act, so it
            # kills nothing.
            continue
        except (InvariantError, AssertionError) as exc:
            lines = str(exc).strip().splitlines() or [type(exc).__name__]
            broken = f"directed scenario {name}: {lines[0]}"
            break
if ref is not None:
    ref.stdin.close()
print(json.dumps({"actions": total, "broken": broken, "excused": excused}))
"""


def run_one(name: str, mutation: list[tuple[str, str, str]] | None) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        pkg = Path(tmp) / "orion_action"
        shutil.copytree(ROOT / "orion_action", pkg)
        for file, find, replace in mutation or []:
            path = pkg / file
            text = path.read_text()
            if find not in text:
                return {"mutation": name, "error": f"pattern not found in {file}"}
            path.write_text(text.replace(find, replace, 1))
        started = time.monotonic()
        out = subprocess.run(
            [sys.executable, "-c", RUNNER, tmp, str(ROOT / "tests"), str(EPISODES), json.dumps(SEEDS),
             str(ROOT), REFERENCE, "1" if mutation else "0"],
            capture_output=True, text=True, timeout=1800, env={**os.environ, **ENVIRONMENTS.get(name, {})},
        )
        if out.returncode != 0:
            return {"mutation": name, "error": out.stderr.strip().splitlines()[-1:]}
        result = json.loads(out.stdout.strip().splitlines()[-1])
        return {"mutation": name, **result, **({"env": ENVIRONMENTS[name]} if name in ENVIRONMENTS else {}),
                "seconds": round(time.monotonic() - started, 1)}


def _show(r: dict[str, object]) -> None:
    verdict = "caught" if r.get("broken") else ("ERROR" if r.get("error") else "missed")
    why = r.get("broken") or r.get("error") or ""
    print(f"{verdict:7} {r.get('actions', '-')!s:>7} actions  {r['mutation']}  {why}", flush=True)


def main() -> int:
    only = sys.argv[1:]
    rows = [run_one("(none: the code as it is)", None)]
    _show(rows[0])
    for name, m in MUTATIONS.items():
        if not only or any(o in name for o in only):
            rows.append(run_one(name, m))
            _show(rows[-1])
    killed = sum(1 for r in rows[1:] if r.get("broken"))
    print(f"killed {killed} of {len(rows) - 1} mutations ({EPISODES} episodes per seed, seeds {SEEDS})")
    if not only:
        (ROOT / "bench" / "model-mutations.json").write_text(json.dumps(rows, indent=2) + "\n")
    baseline_ok = rows[0].get("broken") is None and not rows[0].get("error")
    return 0 if baseline_ok else 1


if __name__ == "__main__":
    sys.exit(main())
