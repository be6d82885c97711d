"""The claim record and the tombstone: render/parse round trip, and unreadable blocks."""

from __future__ import annotations

import contextlib
import json
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orion_action.core.record import (
    CLAIM_MARK,
    MAX_BLOCK_CHARS,
    RELEASE_MARK,
    VERSION,
    ActionsRun,
    ClaimRecord,
    Holder,
    RecordError,
    ReleaseAction,
    State,
    Tombstone,
    mentions_orion,
    parse_block,
    render_record,
    render_tombstone,
    run_url,
    seal,
    verify,
    visible_line,
)

HOLDER = Holder(host="runner-1", boot_id="b00t", machine_id="m4ch", pid_ns="4026531836",
                pid=4242, pid_start=1_700_000_000.25)
RECORD = ClaimRecord(token="abc123", state=State.RUNNING, holder=HOLDER,
                     started_at="2026-01-02T03:04:05+00:00", heartbeat_at="2026-01-02T03:06:05+00:00",
                     beats=7, interval=120.0, stale_after=600.0, stage="build", attempt=2,
                     child_pid=4243, actions=ActionsRun(run_id=99, run_attempt=2, runner_name="r1"))

# Text a person or a hostile visitor might choose: HTML comment ends, Markdown, mentions.
NASTY = ["-->", "--!>", "<!-- orion-claim v1\n{}\n-->", "**bold** `code` [x](y)", "@octocat",
         "a\nb\r\nc", "<script>", "&amp;", "\u2028", "\ud800", "é漢字", "", " "]

texts = st.one_of(st.sampled_from(NASTY), st.text(max_size=60))
finite = st.floats(allow_nan=False, allow_infinity=False)
durations = st.floats(min_value=1.0, max_value=7 * 24 * 3600.0)  # the configuration's bounds
ints = st.integers(min_value=-(2**63), max_value=2**63)

holders = st.builds(Holder, host=texts, boot_id=texts, machine_id=texts, pid_ns=texts,
                    pid=st.integers(min_value=1, max_value=2**31), pid_start=finite)
records = st.builds(
    ClaimRecord,
    token=st.text(alphabet="0123456789abcdef", min_size=1, max_size=24),
    state=st.sampled_from(State),
    holder=holders,
    started_at=texts,
    heartbeat_at=texts,
    beats=st.integers(min_value=0, max_value=2**40),
    interval=durations,
    stale_after=durations,
    stage=st.none() | texts,
    attempt=st.integers(min_value=1, max_value=1000),
    child_pid=st.none() | st.integers(min_value=1, max_value=2**31),
    exit_code=st.none() | ints,
    finished_at=st.none() | texts,
    actions=st.none() | st.builds(ActionsRun, run_id=st.integers(min_value=1, max_value=2**53),
                                  run_attempt=st.integers(min_value=1, max_value=100),
                                  runner_name=texts),
    note=st.none() | texts,
    unqueued=st.none() | st.booleans(),
)
tombstones = st.builds(
    Tombstone, token=st.text(min_size=1, max_size=30), action=st.sampled_from(ReleaseAction),
    reason=texts, counts_attempt=st.booleans(), by=texts,
    extra=st.dictionaries(st.text(max_size=10), st.one_of(ints, texts, st.booleans()), max_size=3),
)


def _hidden_part(body: str) -> str:
    start = body.index("<!--")
    return body[start:body.index("-->", start) + 3]


@settings(max_examples=300, deadline=None)
@given(records)
def test_record_round_trip(record: ClaimRecord) -> None:
    body = render_record(record)
    parsed = parse_block(body)
    assert parsed == record
    # The hidden JSON can never end the HTML comment early: the first "-->" ends the block.
    hidden = _hidden_part(body)
    assert hidden.startswith(f"<!-- {CLAIM_MARK} v{VERSION}\n") and hidden.endswith("\n-->")
    assert mentions_orion(body)


def test_only_a_claimers_lost_record_says_whether_it_sent_its_unqueue() -> None:
    """ADR 0067: `unqueued` is written only when known (a claimer's own `lost` record), so every
    other record keeps the keys it had (a reader of an older version ignores a key it does not
    know); absent, it reads None (not known)."""
    assert '"unqueued"' not in render_record(RECORD)
    assert parse_block(render_record(RECORD)) == RECORD
    for sent in (True, False):
        lost = RECORD.with_changes(state=State.LOST, child_pid=None, unqueued=sent)
        body = render_record(lost)
        assert f"\"unqueued\":{str(sent).lower()}" in body
        assert parse_block(body) == lost


@settings(max_examples=200, deadline=None)
@given(tombstones)
def test_tombstone_round_trip(t: Tombstone) -> None:
    body = render_tombstone(t, holder_line="runner x, pid 1")
    assert parse_block(body) == t
    assert _hidden_part(body).startswith(f"<!-- {RELEASE_MARK} v{VERSION}\n")


def _unescaped(text: str, chars: str) -> list[int]:
    """Positions of `chars` in `text` not escaped by an odd run of backslashes."""
    found = []
    for i, ch in enumerate(text):
        if ch in chars:
            run = len(text[:i]) - len(text[:i].rstrip("\\"))
            if run % 2 == 0:
                found.append(i)
    return found


@settings(max_examples=200, deadline=None)
@given(records)
def test_visible_line_neutralises_what_people_chose(record: ClaimRecord) -> None:
    # Host, stage, runner name and note never open HTML, a mention, or a link in the line.
    line = visible_line(record)
    assert _unescaped(line, "<>@[]") == []


@pytest.mark.parametrize("stage", ["-->", "x --> y", "**bold**", "<!-- orion-release v1\n{}\n-->"])
def test_stage_with_comment_end_or_markdown(stage: str) -> None:
    record = RECORD.with_changes(stage=stage)
    body = render_record(record)
    assert parse_block(body) == record
    assert body.count("-->") == 1  # only the real end of the hidden block


def test_visible_line_says_who_and_when() -> None:
    line = visible_line(RECORD)
    assert "runner-1" in line and "pid 4242" in line and "since 2026-01-02 03:04:05 UTC" in line
    assert "last heartbeat 2026-01-02 03:06:05 UTC" in line and "stage build" in line
    done = visible_line(RECORD.with_changes(state=State.FINISHED, exit_code=3,
                                            finished_at="2026-01-02T04:00:00+00:00"))
    assert "finished" in done and "exit code 3" in done


def test_no_block_is_none() -> None:
    assert parse_block("just a comment") is None
    assert parse_block("") is None
    assert not mentions_orion("orion-claim without the html comment")


def _body(data: object, mark: str = CLAIM_MARK, version: int = VERSION) -> str:
    text = data if isinstance(data, str) else json.dumps(data)
    return f"<!-- {mark} v{version}\n{text}\n-->\nvisible"


def _good() -> dict:
    body = render_record(RECORD)
    return json.loads(body.split("\n")[1])


def _without(key: str) -> dict:
    d = _good()
    del d[key]
    return d


def _with(path: str, value: object) -> dict:
    d = _good()
    *parents, last = path.split(".")
    node = d
    for p in parents:
        node = node[p]
    node[last] = value
    return d


UNREADABLE = [
    ("bad JSON", _body("{not json")),
    ("truncated JSON", _body('{"token": "x"')),
    ("not an object", _body("[1, 2, 3]")),
    ("wrong version", _body(_good(), version=2)),
    ("future version", _body(_good(), version=99)),
    ("missing token", _body(_without("token"))),
    ("missing holder", _body(_without("holder"))),
    ("missing state", _body(_without("state"))),
    ("missing beats", _body(_without("beats"))),
    ("missing holder.pid", _body(_with("holder", {k: v for k, v in _good()["holder"].items()
                                                  if k != "pid"}))),
    ("unknown state", _body(_with("state", "sleeping"))),
    ("token a number", _body(_with("token", 5))),
    ("pid a string", _body(_with("holder.pid", "4242"))),
    ("pid a float", _body(_with("holder.pid", 4242.5))),
    ("pid a boolean", _body(_with("holder.pid", True))),
    ("beats a boolean", _body(_with("beats", False))),
    ("interval a string", _body(_with("interval", "120"))),
    ("interval not finite", _body(_good() | {"interval": "NaN"}).replace('"NaN"', "NaN")),
    ("stale_after beyond a week (keeps a forged claim alive)", _body(_with("stale_after", 1e308))),
    ("stale_after zero", _body(_with("stale_after", 0))),
    ("interval below a second", _body(_with("interval", 0.001))),
    ("interval beyond a week", _body(_with("interval", 8 * 24 * 3600))),
    ("pid_start infinite", _body(_with("holder.pid_start", 1e999))),
    ("pid_start out of range", _body(_with("holder.pid_start", 10**400))),
    ("holder a list", _body(_with("holder", []))),
    ("actions a string", _body(_with("actions", "run 5"))),
    ("actions.run_id a string", _body(_with("actions.run_id", "5"))),
    ("stage a number", _body(_with("stage", 3))),
    ("huge integer", _body(_good()).replace('"beats": 7', '"beats": ' + "9" * 5000)),
    ("deep nesting", _body('{"x":' * 100_000 + "1" + "}" * 100_000)),
    ("tombstone missing reason", _body({"token": "t", "action": "requeue", "counts_attempt": True,
                                        "by": "reconcile"}, RELEASE_MARK)),
    ("tombstone unknown action", _body({"token": "t", "action": "steal", "reason": "r",
                                        "counts_attempt": True, "by": "x"}, RELEASE_MARK)),
    ("tombstone counts_attempt not bool", _body({"token": "t", "action": "requeue", "reason": "r",
                                                 "counts_attempt": 1, "by": "x"}, RELEASE_MARK)),
]


@pytest.mark.parametrize("why,body", UNREADABLE, ids=[u[0] for u in UNREADABLE])
def test_unreadable_blocks_raise_record_error(why: str, body: str) -> None:
    with pytest.raises(RecordError):
        parse_block(body)


def test_the_good_body_used_above_parses() -> None:
    assert parse_block(_body(_good())) == RECORD


def test_visible_part_cannot_smuggle_a_second_record() -> None:
    # The first block is the record; a host name that looks like a block stays inside it.
    record = RECORD.with_changes(holder=replace(HOLDER, host="<!-- orion-claim v1\n{}\n-->"))
    assert parse_block(render_record(record)) == record


# -- Defects 8 and 9 of the v0.1 audit: only a block that starts the body counts, and parsing
# is linear whatever a comment holds.

QUOTED = [
    ("after text", "I saw this:\n" + render_record(RECORD)),
    ("in a code block", "```\n" + render_record(RECORD) + "```\n"),
    ("in a quote", "> " + render_record(RECORD).replace("\n", "\n> ")),
    ("after a blank line", "\n" + render_record(RECORD)),
    ("indented", "    " + render_record(RECORD)),
]


@pytest.mark.parametrize("why,body", QUOTED, ids=[q[0] for q in QUOTED])
def test_a_block_that_does_not_start_the_body_is_not_a_record(why: str, body: str) -> None:
    assert parse_block(body) is None
    assert mentions_orion(body)  # still reported as orion-looking


def test_a_block_edited_in_the_web_interface_with_crlf_still_parses() -> None:
    assert parse_block(render_record(RECORD).replace("\n", "\r\n")) == RECORD


ADVERSARIAL = [
    ("newlines after a header", "<!-- orion-claim v1\n" + "\n" * 65_000),
    ("spaces after a header", "<!-- orion-claim v1\n" + " \n" * 32_000),
    ("many headers", "<!-- orion-claim v1\n" * 3_000),
    ("an end far away", "<!-- orion-release v1\n{" + "x" * 60_000 + "\n-->"),
    ("header without newline", "<!-- orion-claim v1"),
]


@pytest.mark.timeout(5)
@pytest.mark.parametrize("why,body", ADVERSARIAL, ids=[a[0] for a in ADVERSARIAL])
def test_adversarial_bodies_are_rejected_quickly(why: str, body: str) -> None:
    # v0.1 took 187 s on 8,000 newlines (cubic backtracking); the timeout catches a regression.
    for _ in range(20):
        with contextlib.suppress(RecordError):
            assert parse_block(body) is None


KEY = b"k" * 32


def test_a_sealed_block_verifies_only_on_its_own_issue_and_repository() -> None:
    """The MAC binds the content, the repository and the issue number (docs/adr/0035): a
    perfect copy on another issue or repository, or a block edited by hand, does not verify."""
    body = render_tombstone(Tombstone("t0", ReleaseAction.GIVE_UP, "budget spent", counts_attempt=True))
    sealed = seal(body, KEY, "o/r", 7)
    assert sealed != body and sealed.startswith(f"<!-- {RELEASE_MARK} v{VERSION} mac=")
    assert verify(sealed, KEY, "o/r", 7) == (body, True)
    assert verify(sealed, KEY, "O/R", 7) == (body, True)  # GitHub's names ignore case
    assert verify(sealed, KEY, "o/r", 8) == (body, False)
    assert verify(sealed, KEY, "o/other", 7) == (body, False)
    assert verify(sealed, b"another key", "o/r", 7) == (body, False)
    assert verify(body, KEY, "o/r", 7) == (body, False)  # no MAC at all
    assert verify(sealed.replace("budget spent", "budget spenT"), KEY, "o/r", 7)[1] is False
    assert parse_block(sealed) == parse_block(body)  # readers without the key still read it
    assert seal(sealed, KEY, "o/r", 7) == sealed  # sealing again replaces, never stacks
    assert seal("just a comment", KEY, "o/r", 7) == "just a comment"


@given(records)
def test_any_record_seals_and_verifies(record: ClaimRecord) -> None:
    body = render_record(record)
    assert verify(seal(body, KEY, "o/r", 1), KEY, "o/r", 1) == (body, True)


def test_the_visible_line_links_the_actions_run_and_only_a_well_formed_link() -> None:
    url = "https://github.com/o/r/actions/runs/99"
    linked = replace(RECORD, actions=ActionsRun(run_id=99, run_attempt=2, runner_name="r1", url=url))
    assert f"Actions runner r1 ([run 99]({url}))" in visible_line(linked)
    back = parse_block(render_record(linked))
    assert isinstance(back, ClaimRecord) and back.actions is not None and back.actions.url == url
    for bad in ("javascript:alert(1)", "https://h/o/r/actions/runs/9)[x](https://evil",
                "http://h/o/r/actions/runs/9", "https://h/o/r/actions/runs/9 x", "https://h/o/r/pull/9"):
        record = replace(RECORD, actions=ActionsRun(run_id=9, runner_name="r1", url=bad))
        assert bad not in visible_line(record)
        again = parse_block(render_record(record))
        assert isinstance(again, ClaimRecord) and again.actions is not None and again.actions.url == ""
    assert run_url("https://github.com/", "o/r", 5) == "https://github.com/o/r/actions/runs/5"
    assert run_url("https://github.com", "", 5) == ""  # no repository, no link


def test_the_header_says_version_1() -> None:
    """Records other versions wrote and read: the version is on the wire, not only in code."""
    assert render_record(RECORD).startswith("<!-- orion-claim v1\n")
    with pytest.raises(RecordError, match="version 2 is not understood"):
        parse_block(render_record(RECORD).replace("orion-claim v1", "orion-claim v2", 1))


def test_a_block_must_end_within_its_cap() -> None:
    body = render_record(RECORD)
    end = body.index("\n-->")
    fits = body[:end] + " " * (MAX_BLOCK_CHARS - 4 - end) + body[end:]  # "\n-->" ends at the cap
    assert parse_block(fits) == RECORD
    over = body[:end] + " " * (MAX_BLOCK_CHARS - 3 - end) + body[end:]
    with pytest.raises(RecordError, match=f"no end within {MAX_BLOCK_CHARS} characters"):
        parse_block(over)
    assert MAX_BLOCK_CHARS == 16_384


def _block(mark: str, data: dict) -> str:
    return f"<!-- {mark} v{VERSION}\n{json.dumps(data)}\n-->\nvisible"


def _data(body: str) -> dict:
    return json.loads(body.split("\n")[1])


def test_the_hidden_json_is_written_in_key_order() -> None:
    """The same record always renders the same bytes, whatever the fields' order in the code."""
    data = _data(render_record(RECORD))
    assert list(data) == sorted(data) and list(data["holder"]) == sorted(data["holder"])
    tomb = _data(render_tombstone(Tombstone("abc123", ReleaseAction.REQUEUE, "dead", extra={"b": 1, "a": 2})))
    assert list(tomb) == sorted(tomb) and list(tomb["extra"]) == ["a", "b"]


def test_a_record_whose_actions_run_has_no_url_reads_as_a_run_without_a_link() -> None:
    """A run's link came later than the run (ADR 0042): a record without it is still read."""
    data = _data(render_record(RECORD))
    del data["actions"]["url"]
    parsed = parse_block(_block(CLAIM_MARK, data))
    assert isinstance(parsed, ClaimRecord)
    assert parsed.actions == ActionsRun(run_id=99, run_attempt=2, runner_name="r1", url="")


def test_a_tombstone_without_extra_reads_as_one_with_none() -> None:
    data = _data(render_tombstone(Tombstone("abc123", ReleaseAction.REQUEUE, "dead")))
    del data["extra"]
    parsed = parse_block(_block(RELEASE_MARK, data))
    assert parsed == Tombstone("abc123", ReleaseAction.REQUEUE, "dead")
