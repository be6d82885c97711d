"""The command's result: the Markdown it may leave in $ORION_RESULT_FILE (ADR 0041).

The command is not trusted, so its text is made safe before anyone shows it: at most
RESULT_MAX_BYTES are used (GitHub allows 65,536 characters a comment, and the claim record
shares the comment), control characters other than newlines and tabs go, @mentions are
neutralised (a result must not page people), and nothing in it can be read as an orion record
or hide what follows: every `<!--` and `-->` is escaped, so the text opens no HTML comment and
no `<!-- orion-claim` / `<!-- orion-release` header can appear in it. It is shown only after
the claim comment's own block, which readers take from the start of the body alone.
"""

from __future__ import annotations

import re

from orion_action.core.markdown import escape as md
from orion_action.core.markdown import table
from orion_action.core.record import result_section

RESULT_MAX_BYTES = 16 * 1024
TRUNCATED = "\n\n*(truncated: the result file held more than 16 KiB)*"
# "@login" and "@org/team" page people; a word joiner after the "@" keeps the text readable
# while GitHub no longer links or notifies. An "@" inside a word (an e-mail address) is no mention.
_MENTION = re.compile(r"(?<![\w@])@(?=[A-Za-z0-9])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]")


def clean_result(raw: bytes) -> str | None:
    """The result as shown, from the first RESULT_MAX_BYTES of the file; None when blank."""
    cut = len(raw) > RESULT_MAX_BYTES
    text = raw[:RESULT_MAX_BYTES].decode("utf-8", "ignore")  # a cut mid-character drops it
    text = _CONTROL.sub("", text.replace("\r\n", "\n")).strip()
    if not text:
        return None
    text = text.replace("<!--", "&lt;!--").replace("-->", "--&gt;")
    text = _MENTION.sub("@\u2060", text)
    return text + (TRUNCATED if cut else "")


def run_summary(repo: str, number: int, title: str, outcome: str, attempt: int, seconds: float,
                result: str | None, server_url: str = "https://github.com") -> str:
    """The job summary of one `run` (ADR 0042): a table a person reads in the Actions UI, and
    the result last (its Markdown cannot break the table). `title` is the issue's, untrusted."""
    link = f"[{md(repo)}#{number}]({server_url.rstrip('/')}/{repo}/issues/{number})"
    minutes, secs = divmod(int(seconds), 60)
    rows = [["Issue", link], ["Title", md(" ".join(title.split())[:200])], ["Outcome", md(outcome)],
            ["Attempt", str(attempt)], ["Duration", f"{minutes}m {secs:02d}s" if minutes else f"{secs}s"]]
    lines = "\n".join(table(["", ""], rows))
    tail = result_section(result) or "\n*The command left no result in `ORION_RESULT_FILE`.*\n"
    return f"### orion-action run: {md(repo)}#{number}\n\n{lines}\n{tail}"
