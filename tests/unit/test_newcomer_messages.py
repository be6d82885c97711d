"""The newcomer mistakes of the adopter's review (r3 ecosystem, section 2) answer with what to
do: a repository never set up, an issue that is not queued or has ended, a GitHub that does not
answer (said at the first failure, not after the whole retry budget)."""

from __future__ import annotations

import pytest
from fakes.memory_github import MemoryServer

from orion_action.adapters.github import GitHubRepo
from orion_action.config import Config
from orion_action.errors import Unavailable
from orion_action.services.claiming import missing_label_hint, not_queued_hint

CONFIG = Config()


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
    repo = GitHubRepo("o/r", "token", dead_url, retry_for=1.0)
    repo.on_retry = said.append
    with pytest.raises(Unavailable):
        repo.own_login()
    assert len(said) == 1, said  # once, at the first failure, however many retries follow
    assert said[0].startswith("GitHub did not answer GET /user") and "check GITHUB_API_URL" in said[0]
