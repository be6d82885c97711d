"""The newcomer mistakes of the adopter's review (r3 ecosystem, section 2) answer with what to
do: a repository never set up, an issue that is not queued or has ended, a GitHub that does not
answer (said at the first failure, not after the whole retry budget)."""

from __future__ import annotations

import os

import pytest
from fakes.host import HERE, VirtualClock, blind, real_host
from fakes.memory_github import MemoryGitHub, MemoryServer

from orion_action import report
from orion_action.adapters.actions import ActionsRunner
from orion_action.adapters.github import GitHubRepo
from orion_action.cli import main
from orion_action.config import Config, parse_config
from orion_action.errors import ConfigError, NotClaimed, Unavailable
from orion_action.services.claiming import missing_label_hint, not_queued_hint
from orion_action.services.pause import pause_command, read_pause
from orion_action.services.reconcile import release, status_repos
from orion_action.services.wrapper import RunRequest, Wrapper

CONFIG = Config()


def release_command(gh: MemoryGitHub, number: int) -> int:
    """`release --issue N` as the CLI runs it: the service, then its one line."""
    return report.release(release(gh, CONFIG, print, HERE, blind, number, force=False), CONFIG, number)


def status_command(gh: MemoryGitHub) -> int:
    return report.status(status_repos([gh], CONFIG, print, HERE, blind), CONFIG, lambda line: None,
                         ActionsRunner({}), as_json=False)


def test_a_missing_queue_label_says_run_init() -> None:
    s = MemoryServer()
    gh = s.client()
    hint = missing_label_hint(gh, CONFIG)
    assert "'orion' does not exist" in hint and "orion-action init" in hint
    s.create_issue("queued once", ["orion"])  # GitHub creates a label an issue is given
    assert missing_label_hint(gh, CONFIG) == ""


@pytest.mark.parametrize(
    ("labels", "is_open", "expected"),
    [
        ((), True, "add the 'orion' label to queue it"),
        (("orion-ready",), True, "remove that and add 'orion' to run it again"),
        (("orion-failed", "orion"), True, "remove that and add 'orion' to run it again"),
        (("orion",), False, ""),
    ],
)
def test_an_issue_that_is_not_queued_says_what_to_do(labels: tuple[str, ...], is_open: bool,
                                                     expected: str) -> None:
    s = MemoryServer()
    n = s.create_issue("an issue", list(labels))
    if not is_open:
        s.close(n)
    issue, _ = s.client().get_issue(n)
    hint = not_queued_hint(issue, CONFIG)
    assert (expected in hint) if expected else hint == ""


def test_the_first_transient_failure_is_said_at_once(dead_url: str) -> None:
    said: list[str] = []
    clock = VirtualClock()
    repo = GitHubRepo("o/r", "token", dead_url, retry_for=5.0, sleep=clock.sleep, clock=clock)
    repo.on_retry = said.append
    with pytest.raises(Unavailable):
        repo.own_login()
    assert clock.now > 1001.0  # at least two waits (0.5 s, then 1 s, less a fifth of jitter) followed
    assert len(said) == 1, said  # once, at the first failure, however many retries follow
    assert said[0].startswith("GitHub did not answer GET /user") and "check GITHUB_API_URL" in said[0]


# -- rows of the mistake table (r3 ecosystem review, section 2) that answered wrongly -------------


def test_an_interval_too_long_for_the_default_stale_after_names_the_interval() -> None:
    """`interval: 5m` alone used to blame heartbeat.stale_after, a key the user never set."""
    with pytest.raises(ConfigError) as caught:
        parse_config({"heartbeat": {"interval": "5m"}}, source=".github/orion.yml")
    assert str(caught.value) == (
        ".github/orion.yml: heartbeat.interval: 300s is too long for heartbeat.stale_after (600s, the "
        "default), which must be at least 3 x the interval: use an interval of at most 200s, or set "
        "heartbeat.stale_after to at least 900s")
    with pytest.raises(ConfigError) as both:  # both set: the rule names stale_after and the fix
        parse_config({"heartbeat": {"interval": "5m", "stale_after": "10m"}}, source="c.yml")
    assert str(both.value).startswith("c.yml: heartbeat.stale_after: must be at least 3 x heartbeat.interval "
                                      "(300s), got 600s: set it to at least 900s")


def test_pausing_again_keeps_the_reason_or_says_which_it_replaced() -> None:
    s = MemoryServer()
    gh = s.client()
    pause_command(gh, CONFIG, lambda line: None, "deploy freeze")
    said = pause_command(gh, CONFIG, lambda line: None, None)  # the second `pause` without --reason
    paused = read_pause(gh, CONFIG)
    assert paused is not None and paused.reason.strip() == "deploy freeze"
    assert said == ["already paused, reason kept: 'deploy freeze'; pass --reason to replace it, "
                    "or `orion-action resume` to resume"]
    said = pause_command(gh, CONFIG, lambda line: None, "incident 42")
    paused = read_pause(gh, CONFIG)
    assert paused is not None and paused.reason.strip() == "incident 42"
    assert "(it already was; this replaces the reason 'deploy freeze')" in said[0]


def test_releasing_a_lock_a_person_added_does_not_queue_the_issue(capsys: pytest.CaptureFixture[str]) -> None:
    """No orion run ever claimed it, so nothing queued it: the lock comes off and the issue is
    left for a person to queue (a lock with a dead run's record is still requeued:
    tests/integration/test_status_release.py)."""
    s = MemoryServer()
    gh = s.client()
    n = s.create_issue("touched by hand", [CONFIG.labels.working, CONFIG.labels.stage("build") or ""])
    assert release_command(gh, n) == 0
    assert s.issue(n).labels == frozenset() and s.comments(n) == []
    assert capsys.readouterr().out.strip() == (
        f"#{n}: orion-working removed (no orion run ever claimed it: the lock label was added by hand); "
        "not queued: add the 'orion' label to queue it")
    # Still queued and locked, no record seen: how a claim whose comment GitHub's list does not
    # show yet looks. It was queued, so it stays queued (as before this rule).
    q = s.create_issue("claimed just now?", [CONFIG.labels.queue, CONFIG.labels.working])
    assert release_command(gh, q) == 0
    assert s.issue(q).labels == frozenset({CONFIG.labels.queue})


@pytest.mark.parametrize("argv", [["--repo", "o/r", "status"], []])
def test_an_option_before_the_command_or_no_command_says_the_order(
        argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(argv, env={})
    assert caught.value.code == 64
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "orion-action orion-action" not in err
    assert "the command comes first and its options after it, e.g. orion-action status --repo" in err


def test_a_repository_never_set_up_says_run_init_in_status_and_run(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The 'labels missing (no init)' row: `status` and `run --issue` say the label does not
    exist and to run init (the queue label is looked up only when nothing is queued)."""
    s = MemoryServer()
    gh = s.client()
    n = s.create_issue("never queued")
    assert status_command(gh) == 0
    assert f"queue (0, in pick order): empty; the label 'orion' does not exist in {gh.full_name}: run " \
           "`orion-action init`" in capsys.readouterr().out
    env = {"PATH": os.defpath}
    w = Wrapper([gh], CONFIG, lambda line: None, env, real_host(env))
    with pytest.raises(NotClaimed) as caught:
        w.run(RunRequest(command=["true"], issue=n))
    assert str(caught.value) == (f"issue #{n} is not queued (open; labels: none); add the 'orion' label to "
                                 f"queue it; the label 'orion' does not exist in {gh.full_name}: run "
                                 "`orion-action init`")
    s.create_issue("queued", ["orion"])  # GitHub creates a label an issue is given: no hint now
    assert status_command(gh) == 0
    assert "does not exist" not in capsys.readouterr().out
