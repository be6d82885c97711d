"""The claim record and the tombstone: what orion writes on an issue, and how it reads it back.

A claim record is one issue comment: a hidden, versioned JSON document inside an HTML comment
(GitHub does not render it) and a short visible line for people. A tombstone is a separate
comment that releases a claim by naming its token; it is appended, never edited into the
holder's comment, so the holder's next heartbeat cannot erase it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import re
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from enum import Enum
from typing import Any

from orion_action.config import MAX_DURATION, MIN_INTERVAL
from orion_action.core.markdown import escape

VERSION = 1
CLAIM_MARK = "orion-claim"
RELEASE_MARK = "orion-release"
# A block counts only where orion writes it: at the very start of a comment body, as one header
# line, the JSON on the next line(s), and a line "-->". A block quoted further down a comment
# (a reply, a code block) is text, never a record.
# With ORION_RECORD_KEY, the header ends " mac=<HMAC-SHA256, hex>" (seal, below).
_HEADER = re.compile(r"<!-- (orion-claim|orion-release) v(\d{1,4})( mac=[0-9a-f]{64})?\r?\Z")
_END = "\n-->"
# Our own blocks are about 1 KB; a body longer than this is not one of ours, and capping it keeps
# parsing linear and cheap whatever a comment holds (GitHub allows 65,536 characters).
MAX_BLOCK_CHARS = 16_384


class RecordError(ValueError):
    """A comment carries an orion block that cannot be read."""


class State(str, Enum):
    CLAIMING = "claiming"  # posted, arbitration not yet done
    RUNNING = "running"  # won; the child runs
    FINISHED = "finished"  # the child exited; exit_code says how
    INTERRUPTED = "interrupted"  # stopped by a signal or a time limit; handed back
    LOST = "lost"  # lost arbitration or was fenced; ran nothing (more)
    CANCELLED = "cancelled"  # a person asked for the run to stop (the cancel label)

    @property
    def is_open(self) -> bool:
        """An open record claims the issue until it is finished, interrupted or tombstoned."""
        return self in (State.CLAIMING, State.RUNNING)


@dataclass(frozen=True)
class Holder:
    """Where the claiming wrapper runs: enough to find it in a process table later."""

    host: str
    boot_id: str
    machine_id: str
    pid_ns: str
    pid: int
    pid_start: float  # the wrapper's process start time (seconds since the epoch)
    # The same in clock ticks since boot (/proc/PID/stat): exact, and unmoved when the wall
    # clock is stepped, unlike pid_start, which psutil derives from the wall clock's boot time.
    pid_start_ticks: int | None = None


@dataclass(frozen=True)
class ActionsRun:
    """The GitHub Actions job the wrapper ran in, if any."""

    run_id: int
    run_attempt: int = 1
    runner_name: str = ""
    url: str = ""  # the run's page, shown as a link (ADR 0042); display only


# The only run links shown: https, a host, owner/name, a numeric run id (a url read back from a
# comment is not trusted to be anything else).
RUN_URL = re.compile(r"https://[A-Za-z0-9.-]{1,253}(:\d{1,5})?/[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}"
                     r"/actions/runs/\d{1,20}\Z")


def _shown_url(url: str | None) -> str:
    return url if url and RUN_URL.match(url) else ""


def run_url(server_url: str, repository: str, run_id: int) -> str:
    """The Actions run's page, or "" when the pieces do not make a valid link."""
    url = f"{server_url.rstrip('/')}/{repository}/actions/runs/{run_id}"
    return url if RUN_URL.match(url) else ""


@dataclass(frozen=True)
class ClaimRecord:
    token: str
    state: State
    holder: Holder
    started_at: str  # ISO time on the wrapper's clock: display only, never used for ages
    heartbeat_at: str  # ditto
    beats: int = 0  # changes every beat so that the comment's updated_at moves
    interval: float = 120.0
    stale_after: float = 600.0
    stage: str | None = None
    attempt: int = 1
    child_pid: int | None = None  # also the child's process group id
    exit_code: int | None = None
    finished_at: str | None = None
    actions: ActionsRun | None = None
    note: str | None = None  # why a record is lost or interrupted, in plain words
    # Whether an interrupted run spends an attempt of the retry budget: not when GitHub itself
    # failed (an outage must not turn healthy issues failed).
    counts_attempt: bool = True
    progress: str | None = None  # the child's last progress line (plain text, capped)
    # Why a reconciler or a person released this claim, set when they rewrite its visible line:
    # such an edit moves the comment's updated_at, and must never read as a heartbeat.
    released: str | None = None
    # A claimer's own `lost` record says whether it sent its queue label removal (the winner's
    # unqueue) before giving up: true, the queueing may be taken by a claim that never ran and a
    # pass puts it back; false, it took no queueing, so a queue label gone is someone else's doing
    # (ADR 0067). None (not written): not known, as in every other record and older versions.
    unqueued: bool | None = None

    def with_changes(self, **changes: Any) -> ClaimRecord:
        return replace(self, **changes)


class ReleaseAction(str, Enum):
    UNLOCK = "unlock"
    REQUEUE = "requeue"
    GIVE_UP = "give_up"
    RELEASE = "release"
    # A holder's own end marker (by HOLDER_END): posted when a heartbeat it gave up on might
    # still land and turn its final record back into "running". Appended, so no late edit of
    # the claim comment can undo it; readers take the run's end from it.
    FINISHED = "finished"
    INTERRUPTED = "interrupted"
    CANCELLED = "cancelled"


HOLDER_END = "holder"
# The state a holder's end marker stands for.
END_STATES = {
    ReleaseAction.FINISHED: State.FINISHED,
    ReleaseAction.INTERRUPTED: State.INTERRUPTED,
    ReleaseAction.CANCELLED: State.CANCELLED,
}


@dataclass(frozen=True)
class Tombstone:
    """Releases the claim named by `token`; `counts_attempt` when its holder was dead."""

    token: str
    action: ReleaseAction
    reason: str
    counts_attempt: bool = False
    by: str = "reconcile"
    extra: dict[str, Any] = field(default_factory=dict)


def _hidden(mark: str, data: dict[str, Any]) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    # Keep the JSON from ever closing the HTML comment: escape <, > and & inside strings.
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f"<!-- {mark} v{VERSION}\n{text}\n-->"


def _human_time(iso: str | None) -> str:
    if not iso:
        return "?"
    try:
        return datetime.fromisoformat(iso).astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    except ValueError:
        return escape(iso)


PROGRESS_MAX_CHARS = 200


def clean_progress(text: str) -> str | None:
    """A progress line as shown: one line of plain text, control characters dropped, at most
    PROGRESS_MAX_CHARS. Markup is escaped where it is shown, and the record's JSON escapes
    `<` and `>`, so no progress line can end the hidden block or the HTML comment."""
    line = "".join(ch for ch in text.strip().splitlines()[-1] if ch.isprintable()) if text.strip() else ""
    return line[:PROGRESS_MAX_CHARS] or None


def visible_line(record: ClaimRecord, released: str | None = None) -> str:
    """The line a person reads under the hidden block. `released`: why a reconciler or a person
    released the claim; then the line no longer reads as working (the tombstone stays the
    authority)."""
    h = record.holder
    where = f"runner {escape(h.host)}, pid {h.pid}"
    if record.actions and (record.actions.runner_name or record.actions.url):
        run = f"run {record.actions.run_id}"
        if RUN_URL.match(record.actions.url):
            run = f"[{run}]({record.actions.url})"
        name = record.actions.runner_name
        runner = f"Actions runner {escape(name)} " if name else "Actions "
        where += f", {runner}({run})"
    stage = f", stage {escape(record.stage)}" if record.stage else ""
    since = _human_time(record.started_at)
    until = _human_time(record.finished_at)
    note = escape(record.note or "")
    released = released if released is not None else record.released
    if released is not None:
        return f"**orion no longer holds this issue** — {where}{stage}; released: {escape(released)}."
    if record.state is State.FINISHED:
        code = record.exit_code
        return f"**orion finished** with exit code {code} — {where}{stage}; ran from {since} to {until}."
    if record.state is State.INTERRUPTED:
        return f"**orion was interrupted** — {where}{stage}; ran from {since} to {until}. {note}".rstrip()
    if record.state is State.CANCELLED:
        return f"**orion run cancelled** — {where}{stage}; ran from {since} to {until}. {note}".rstrip()
    if record.state is State.LOST:
        if record.child_pid is not None:
            return f"**orion stopped here** — {where}{stage}: {note or 'the claim was lost'}."
        return f"**orion did not run here** — {where}: {note or 'another claim won'}."
    verb = "is claiming" if record.state is State.CLAIMING else "is working on"
    progress = f" Progress: {escape(record.progress)}" if record.progress else ""
    return (
        f"**orion {verb} this issue** — {where}{stage}, attempt {record.attempt}, since {since}; "
        f"last heartbeat {_human_time(record.heartbeat_at)} (beat {record.beats}, every "
        f"{record.interval:g}s).{progress} Do not remove the lock label by hand while it runs: "
        f"use `orion-action release`."
    )


def render_record(record: ClaimRecord, released: str | None = None, result: str | None = None) -> str:
    """The claim comment's body. `result`: the command's result, already made safe by
    core/result.clean_result, shown under the visible line of a final record (ADR 0041)."""
    if released is not None:
        record = replace(record, released=released)
    data = asdict(record)
    data["state"] = record.state.value
    if record.unqueued is None:
        del data["unqueued"]  # only a claimer's own `lost` record says (ADR 0067)
    return f"{_hidden(CLAIM_MARK, data)}\n{visible_line(record, released)}\n{result_section(result)}"


RESULT_HEADING = "\n### Result\n\n"  # a claim comment's result follows it (the dashboard reads links there)


def result_section(result: str | None) -> str:
    """The "Result" part of a final claim comment (empty without a result)."""
    return f"{RESULT_HEADING}{result}\n" if result else ""


def render_tombstone(t: Tombstone, holder_line: str = "") -> str:
    data = asdict(t)
    data["action"] = t.action.value
    what = {
        ReleaseAction.UNLOCK: "the issue is closed, so its lock was removed",
        ReleaseAction.REQUEUE: "the issue was returned to the queue",
        ReleaseAction.GIVE_UP: "the retry budget is spent, so the issue was marked failed and needs a person",
        ReleaseAction.RELEASE: "the claim was released by hand",
        ReleaseAction.FINISHED: "the run finished",
        ReleaseAction.INTERRUPTED: "the run was interrupted",
        ReleaseAction.CANCELLED: "the run was cancelled",
    }[t.action]
    holder = f" ({holder_line})" if holder_line else ""
    if t.by == HOLDER_END:
        ended = f"**orion run ended** (claim `{t.token}`): {what}; {escape(t.reason)}."
        return f"{_hidden(RELEASE_MARK, data)}\n{ended}\n"
    return (
        f"{_hidden(RELEASE_MARK, data)}\n**orion released claim `{t.token}`**{holder}: "
        f"{escape(t.reason)}; {what}.\n"
    )


def _get(data: dict[str, Any], key: str, kind: type | tuple[type, ...], optional: bool = False) -> Any:
    if key not in data or data[key] is None:
        if optional:
            return None
        raise RecordError(f"missing field {key!r}")
    value = data[key]
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise RecordError(f"field {key!r} has the wrong type")
    if not isinstance(value, kind):
        raise RecordError(f"field {key!r} has the wrong type")
    return value


def _number(data: dict[str, Any], key: str) -> float:
    value = _get(data, key, (int, float))
    try:
        value = float(value)
    except OverflowError:
        raise RecordError(f"field {key!r} is out of range") from None
    if not math.isfinite(value):
        raise RecordError(f"field {key!r} is not a finite number")
    return value


def _bounded(data: dict[str, Any], key: str, least: float) -> float:
    """A duration a record promises, within the bounds the configuration loader allows: a
    record that says `stale_after: 1e308` must not keep a claim alive for ever (finding 3 of
    the round-3 security audit). Out of bounds, the record is unreadable."""
    value = float(_number(data, key))
    if not least <= value <= MAX_DURATION:
        raise RecordError(f"field {key!r} is {value:g}s, outside [{least:g}s, {MAX_DURATION:g}s]")
    return value


def _record_from(data: dict[str, Any]) -> ClaimRecord:
    h = _get(data, "holder", dict)
    try:
        state = State(_get(data, "state", str))
    except ValueError:
        raise RecordError(f"unknown state {data.get('state')!r}") from None
    actions = _get(data, "actions", dict, optional=True)
    return ClaimRecord(
        token=_get(data, "token", str),
        state=state,
        holder=Holder(
            host=_get(h, "host", str),
            boot_id=_get(h, "boot_id", str),
            machine_id=_get(h, "machine_id", str),
            pid_ns=_get(h, "pid_ns", str),
            pid=_get(h, "pid", int),
            pid_start=float(_number(h, "pid_start")),
            pid_start_ticks=_get(h, "pid_start_ticks", int, optional=True),
        ),
        started_at=_get(data, "started_at", str),
        heartbeat_at=_get(data, "heartbeat_at", str),
        beats=_get(data, "beats", int),
        interval=_bounded(data, "interval", MIN_INTERVAL),
        stale_after=_bounded(data, "stale_after", MIN_INTERVAL),
        stage=_get(data, "stage", str, optional=True),
        attempt=_get(data, "attempt", int),
        child_pid=_get(data, "child_pid", int, optional=True),
        exit_code=_get(data, "exit_code", int, optional=True),
        finished_at=_get(data, "finished_at", str, optional=True),
        actions=None
        if actions is None
        else ActionsRun(
            run_id=_get(actions, "run_id", int),
            run_attempt=_get(actions, "run_attempt", int),
            runner_name=_get(actions, "runner_name", str),
            url=_shown_url(_get(actions, "url", str, optional=True)),
        ),
        note=_get(data, "note", str, optional=True),
        counts_attempt=_flag(data, "counts_attempt", default=True),
        progress=_get(data, "progress", str, optional=True),
        released=_get(data, "released", str, optional=True),
        unqueued=_get(data, "unqueued", bool, optional=True),
    )


def _flag(data: dict[str, Any], key: str, default: bool) -> bool:
    value = _get(data, key, bool, optional=True)
    return default if value is None else bool(value)


def _tombstone_from(data: dict[str, Any]) -> Tombstone:
    try:
        action = ReleaseAction(_get(data, "action", str))
    except ValueError:
        raise RecordError(f"unknown release action {data.get('action')!r}") from None
    return Tombstone(
        token=_get(data, "token", str),
        action=action,
        reason=_get(data, "reason", str),
        counts_attempt=_get(data, "counts_attempt", bool),
        by=_get(data, "by", str),
        extra=_get(data, "extra", dict, optional=True) or {},
    )


def block_kind(body: str) -> str | None:
    """CLAIM_MARK or RELEASE_MARK when the body starts with an orion block header, else None."""
    m = _header(body)
    return m.group(1) if m else None


def _header(body: str) -> re.Match[str] | None:
    if not body.startswith("<!-- orion-"):
        return None
    newline = body.find("\n", 0, 160)
    return _HEADER.match(body, 0, newline) if newline > 0 else None


def _mac(key: bytes, repo: str, number: int, unsealed: str) -> str:
    """HMAC-SHA256 over the repository, the issue number and the whole unsealed body: a copy
    on another issue or in another repository does not verify there."""
    message = f"{repo.lower()}\n{number}\n{unsealed}".encode("utf-8", "surrogatepass")
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def seal(body: str, key: bytes, repo: str, number: int) -> str:
    """`body` with a MAC in its orion block's header (a body without a block is unchanged).
    Only orion holds the key (ORION_RECORD_KEY): the command, which may post as orion's own
    login, cannot make a block that verifies (docs/adr/0035-authenticated-records.md)."""
    unsealed, _ = unseal(body)
    m = _header(unsealed)
    if m is None:
        return body
    end = m.end(2)
    return f"{unsealed[:end]} mac={_mac(key, repo, number, unsealed)}{unsealed[end:]}"


def unseal(body: str) -> tuple[str, str | None]:
    """The body without its MAC, and the MAC (None when its block has none, or no block)."""
    m = _header(body or "")
    if m is None or m.group(3) is None:
        return body, None
    return body[: m.start(3)] + body[m.end(3) :], m.group(3)[len(" mac=") :]


def verify(body: str, key: bytes, repo: str, number: int) -> tuple[str, bool]:
    """The body without its MAC, and whether that MAC was made with `key` for this issue."""
    unsealed, mac = unseal(body)
    return unsealed, mac is not None and hmac.compare_digest(mac, _mac(key, repo, number, unsealed))


def parse_block(body: str) -> ClaimRecord | Tombstone | None:
    """The orion block that starts a comment body: None if the body does not start with one;
    RecordError if it does but cannot be read. Linear in the body's length, and capped."""
    body = body or ""
    m = _header(body)
    if m is None:
        return None
    mark = m.group(1)
    header_end = body.find("\n")
    version = int(m.group(2))
    if version != VERSION:
        raise RecordError(f"{mark} version {version} is not understood by this orion-action")
    end = body.find(_END, header_end, MAX_BLOCK_CHARS)
    if end < 0:
        raise RecordError(f"the {mark} block has no end within {MAX_BLOCK_CHARS} characters")
    try:
        data = json.loads(body[header_end + 1 : end])
    except json.JSONDecodeError as exc:
        raise RecordError(f"invalid JSON: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:  # an integer too long, nesting too deep
        raise RecordError(f"invalid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise RecordError("the record is not a JSON object")
    return _record_from(data) if mark == CLAIM_MARK else _tombstone_from(data)


def mentions_orion(body: str) -> bool:
    """Whether a comment looks like an orion block anywhere (used to report forgeries)."""
    return f"<!-- {CLAIM_MARK}" in (body or "") or f"<!-- {RELEASE_MARK}" in (body or "")
