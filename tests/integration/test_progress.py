"""Progress (docs/design.md section 12): the last line a real child writes to
$ORION_PROGRESS_FILE shows in the claim comment's visible line and in `status --json` within
one beat, and markup or an HTML comment in it cannot break the record."""

from __future__ import annotations

import json
from pathlib import Path

from rig import PATIENCE, ROOT, wait_until
from rig.harness import (
    BOT,
    QUEUE,
    READY,
    Run,
    child_cmd,
    claim_comments,
    fast_config,
    only_record,
    product,
    records,
)

from orion_action.core.record import State, parse_block

LINE = "step 3/5: **bold** [x](http://e.x) @someone <!-- x --> --> </details> `code` | a"


def status_progress(env: dict[str, str], config: Path, n: int) -> str | None:
    result = product(["status", "--config", str(config), "--json"], env=env, workdir=config.parent,
                     cwd=ROOT)
    assert result.returncode == 0, result.stderr
    (claim,) = [c for c in json.loads(result.stdout)["claims"] if c["issue"] == n]
    return claim["progress"]


def test_a_progress_line_shows_within_one_beat_and_cannot_break_the_record(repo, orion_env, tmp_path):
    config = fast_config(tmp_path)
    # The child writes an old line, then the real one (and a blank line) when the test says so,
    # then waits to be let go.
    child = child_cmd(steps=["progress:starting", f"wait:{tmp_path / 'write'}", f"progress:{LINE}",
                             "progress:", f"touch:{tmp_path / 'written'}"], until=tmp_path / "go")
    n = repo.create_issue("work", [QUEUE])
    r = Run(orion_env, tmp_path, "--issue", str(n), cmd=child, config=config)
    wait_until(lambda: [(x.state, x.progress) for x in records(repo, n)] == [(State.RUNNING, "starting")],
               PATIENCE, message=lambda: f"no first progress line:\n{r.stderr}")
    assert status_progress(orion_env, config, n) == "starting"

    (tmp_path / "write").touch()
    wait_until(lambda: (tmp_path / "written").exists())
    before = only_record(repo, n).beats  # read after the line was written
    # Within one beat, counted in beats rather than seconds (load cannot break the count): the
    # beat after `before` may have read the file before the line was written; the one after it
    # started after our read, so it carries the line.
    shown = wait_until(lambda: (x := only_record(repo, n)).progress == LINE and x, PATIENCE, 0.02,
                       message=lambda: f"the line never reached the record:\n{r.stderr}")
    assert shown.beats <= before + 2, (before, shown.beats)

    (comment,) = claim_comments(repo, n)
    assert comment["user"] == BOT
    body = comment["body"]
    block = parse_block(body)  # the record still parses, with the line as written
    assert block is not None and block.progress == LINE and block.state is State.RUNNING
    hidden, visible = body.split("-->", 1)
    assert LINE not in hidden and "<!--" not in hidden[4:]  # the record cannot be closed early
    assert "is working on this issue" in visible
    assert r"Progress: step 3/5: \*\*bold\*\* \[x\]\(http://e.x\) \@someone \<\!-- x --\> --\> " in visible
    assert status_progress(orion_env, config, n) == LINE

    (tmp_path / "go").touch()
    assert r.wait(PATIENCE) == 0, r.stderr
    assert set(repo.labels(n)) == {READY}
