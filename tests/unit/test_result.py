"""ORION_RESULT_FILE (ADR 0041) and the run's job summary (ADR 0042): the command's Markdown is
bounded, mentions are neutralised, nothing in it is ever read as an orion record; and the real
wrapper, on the in-memory GitHub, puts it in the final comment and the job summary."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from fakes.host import real_host
from fakes.memory_github import MemoryServer

from orion_action.config import Config
from orion_action.core.issue import read_log, trusted_set
from orion_action.core.record import block_kind, mentions_orion, parse_block
from orion_action.core.result import RESULT_MAX_BYTES, TRUNCATED, clean_result, run_summary
from orion_action.services.holding import Holding
from orion_action.services.wrapper import RunRequest, Wrapper, read_result

# The trigger check has its own tests (test_trigger_check.py); the in-memory GitHub keeps no events.
CONFIG = Config(heartbeat_interval=1.0, stale_after=30.0, kill_grace=1.0, trigger_permission="none",
                source="test")
LAB = CONFIG.labels
FORGED = ('<!-- orion-release v1\n{"token":"x","action":"requeue","reason":"r","counts_attempt":false,'
          '"by":"reconcile","extra":{}}\n-->')


def test_mentions_are_neutralised_but_addresses_and_text_stay() -> None:
    text = clean_result(b"Done @alice and @org/team; mail bob@example.com; see #12")
    assert text is not None
    assert "@alice" not in text and "@org/team" not in text
    assert "@\u2060alice" in text and "@\u2060org/team" in text
    assert "bob@example.com" in text and "#12" in text


def test_no_html_comment_and_no_record_header_survive() -> None:
    text = clean_result(f"{FORGED}\n<!-- hide the rest -->".encode())
    assert text is not None
    assert "<!--" not in text and "-->" not in text
    assert not mentions_orion(text)


def test_bounded_to_16_kib_and_blank_is_none() -> None:
    assert clean_result(b"  \n\t\n") is None
    assert clean_result(b"") is None
    big = clean_result(b"a" * (RESULT_MAX_BYTES + 100))
    assert big is not None and big.startswith("a" * RESULT_MAX_BYTES + "\n") and "truncated" in big
    # A cut in the middle of a multi-byte character drops that character, nothing more.
    cut = clean_result("é".encode() * (RESULT_MAX_BYTES // 2 + 1))
    assert cut is not None and cut.startswith("é" * (RESULT_MAX_BYTES // 2))
    assert clean_result(b"ok\x00\x1b[31m\r\nnext") == "ok[31m\nnext"


def test_read_result_follows_no_link_and_opens_no_fifo(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("token")
    link = tmp_path / "link.md"
    link.symlink_to(secret)
    fifo = tmp_path / "fifo.md"
    os.mkfifo(fifo)
    assert read_result(link) is None
    assert read_result(fifo) is None  # returns at once: nothing writes the FIFO
    assert read_result(tmp_path / "missing.md") is None
    (tmp_path / "ok.md").write_text("PR: https://example.test/pull/1")
    assert read_result(tmp_path / "ok.md") == "PR: https://example.test/pull/1"


def test_summary_escapes_the_title_and_puts_the_result_last() -> None:
    text = run_summary("o/r", 7, "Fix | the @table", "finished -> orion-ready", 2, 125.0, "Result **here**")
    assert "| Issue | [o/r#7](https://github.com/o/r/issues/7) |" in text
    assert "the \\@table" in text and "\\|" in text  # a title cannot break the table or mention
    assert "| Attempt | 2 |" in text and "| Duration | 2m 05s |" in text
    assert text.rstrip().endswith("Result **here**") and "### Result" in text


def run_wrapper(tmp_path: Path, script: str, summary: bool = True) -> tuple[MemoryServer, int, int, Path]:
    s = MemoryServer()
    n = s.create_issue("Write the @release notes", [LAB.queue])
    out = tmp_path / "summary.md"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    if summary:  # as in an Actions job
        env.update(GITHUB_STEP_SUMMARY=str(out), GITHUB_ACTIONS="true", GITHUB_RUN_ID="123",
                   GITHUB_REPOSITORY="orion-bot/work", GITHUB_SERVER_URL="https://github.com",
                   RUNNER_NAME="runner-7")
    w = Wrapper([s.client()], CONFIG, lambda line: None, env, real_host(env))
    code = w.run(RunRequest(command=[sys.executable, "-c", script], issue=n))
    return s, n, code, out


def claim_comment(s: MemoryServer, n: int) -> str:
    return next(c.body for c in s.comments(n) if block_kind(c.body) == "orion-claim")


@pytest.mark.timeout(60)
def test_the_result_goes_into_the_final_comment_and_the_job_summary(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = ("import os; open(os.environ['ORION_RESULT_FILE'], 'w').write("
              f"'Pull request: https://example.test/pull/9\\n\\ncc @maintainers\\n' + {FORGED!r})")
    s, n, code, out = run_wrapper(tmp_path, script)
    assert code == 0
    assert LAB.ready in s.issue(n).labels
    body = claim_comment(s, n)
    record = parse_block(body)
    assert record is not None and record.state.value == "finished"  # type: ignore[union-attr]
    head, result = body.split("\n### Result\n", 1)
    # The visible line links the Actions run (ADR 0042).
    assert "Actions runner runner-7 ([run 123](https://github.com/orion-bot/work/actions/runs/123))" in head
    assert "Pull request: https://example.test/pull/9" in result and "@\u2060maintainers" in result
    assert not mentions_orion(result)
    # Every reader sees one claim record and no release: the forged tombstone is text.
    comments = s.comments(n)
    log = read_log(comments, trusted_set("orion-bot", ()))
    assert not log.released_tokens()
    summary = out.read_text()
    assert f"#{n}" in summary and "Write the \\@release notes" in summary
    assert "finished, exit code 0; labelled orion-ready" in summary
    assert "Pull request: https://example.test/pull/9" in summary
    # In Actions the run is one collapsible group of the job's log.
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"::group::orion-action: #{n} Write the @release notes" and lines[-1] == "::endgroup::"


@pytest.mark.timeout(60)
def test_no_result_file_means_no_result_section(tmp_path: Path) -> None:
    s, n, code, out = run_wrapper(tmp_path, "raise SystemExit(3)")
    assert code == 3
    assert "### Result" not in claim_comment(s, n)
    summary = out.read_text()
    assert "left no result" in summary and "finished, exit code 3; labelled orion-failed" in summary


@pytest.mark.timeout(60)
def test_the_summary_says_when_the_labels_were_left(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the claim no longer holds the issue at the end (conclude says why), the job summary
    says the labels were left instead of claiming a label move that did not happen."""
    monkeypatch.setattr(Holding, "conclude", lambda self, outcome: "the issue was closed")
    s, n, code, out = run_wrapper(tmp_path, "raise SystemExit(0)")
    assert code == 0
    summary = out.read_text()
    assert "finished, exit code 0; the labels were left: the issue was closed" in summary
    assert "labelled" not in summary


def test_the_bound_is_the_16_kib_the_notice_names_and_a_full_file_is_not_cut() -> None:
    assert RESULT_MAX_BYTES == 16 * 1024 and "16 KiB" in TRUNCATED
    exact = clean_result(b"a" * RESULT_MAX_BYTES)
    assert exact == "a" * RESULT_MAX_BYTES  # exactly the bound: all of it, no truncation notice


def test_a_long_title_is_cut_to_200_characters_in_the_summary() -> None:
    summary = run_summary("o/r", 7, "t" * 300, "finished", 1, 5, None)
    assert "| Title | " + "t" * 200 + " |" in summary
