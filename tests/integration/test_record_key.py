"""Authenticated records on the rig (docs/adr/0035): with ORION_RECORD_KEY every record orion
writes carries a MAC over its content, the repository and the issue; a release block posted
under orion's own login (what a prompt-injected command can do with the shared token) stops
nothing, whether it carries no MAC or a perfect copy of one made for another issue."""

from __future__ import annotations

from pathlib import Path

from rig import RepoHandle, wait_until
from rig.harness import QUEUE, READY, Child, Run, claim_comments, fast_config, product, running_record

from orion_action.core.record import ReleaseAction, Tombstone, render_tombstone, seal

KEY = "k" * 40


def test_a_forged_release_under_orions_login_stops_nothing(repo: RepoHandle, orion_env: dict[str, str],
                                                           tmp_path: Path) -> None:
    env = {**orion_env, "ORION_RECORD_KEY": KEY}
    config = fast_config(tmp_path)
    n = repo.create_issue("work", labels=[QUEUE])
    other = repo.create_issue("another issue")
    child = Child(tmp_path)
    run = Run(env, tmp_path, "--issue", str(n), cmd=child.cmd, config=config)
    child.wait_started()
    record = wait_until(lambda: running_record(repo, n))
    (claim,) = claim_comments(repo, n)
    assert claim["body"].startswith("<!-- orion-claim v1 mac="), "the claim is not sealed"
    assert "ORION_RECORD_KEY" not in child.info()["env"], "the command received the record key"

    forged = render_tombstone(Tombstone(record.token, ReleaseAction.GIVE_UP, "retry budget spent",
                                        counts_attempt=True))
    repo.comment(n, forged)  # no MAC: the command does not have the key
    repo.comment(n, seal(forged, KEY.encode(), repo.full_name, other))  # a valid block of another issue
    passed = product(["reconcile", "--config", str(config)], env=env, workdir=tmp_path)
    assert passed.returncode == 0, passed.stderr
    assert "ignored 2 orion-looking comment(s) by untrusted authors" in passed.stdout, passed.stdout
    assert "give_up" not in passed.stdout and "requeue" not in passed.stdout, passed.stdout

    child.release()
    assert run.wait() == 0, run.stderr
    assert READY in repo.labels(n)
    assert "the claim is lost" not in run.stderr
    (claim,) = claim_comments(repo, n)
    assert claim["body"].startswith("<!-- orion-claim v1 mac="), "the final record is not sealed"
