"""How the GitHub adapter presents comments to the trust rules (docs/adr/0035): records sealed
with ORION_RECORD_KEY verify only on their own issue; trusted authors are matched by user id.
The adapter is exercised on GitHub's JSON, with no request (ids are resolved beforehand)."""

from __future__ import annotations

from typing import Any

from orion_action.adapters.github import UNSEALED, GitHubRepo, _comment
from orion_action.core.issue import read_log, trusted_set
from orion_action.core.record import ReleaseAction, Tombstone, render_tombstone, seal

KEY = b"k" * 40
REPO = "o/r"
TOMB = render_tombstone(Tombstone("t1", ReleaseAction.GIVE_UP, "budget spent", counts_attempt=True))


def gh(key: bytes | None = KEY, trusted: tuple[str, ...] = ()) -> GitHubRepo:
    repo = GitHubRepo(REPO, "token", "http://localhost:1", record_key=key, trusted_logins=trusted)
    repo.learn_login("orion-bot")
    return repo


def data(body: str, login: str = "orion-bot", user_id: int = 1, issue: int = 7,
         cid: int = 10) -> dict[str, Any]:
    return {"id": cid, "user": {"login": login, "id": user_id}, "body": body,
            "created_at": "2026-12-03T10:00:00Z", "updated_at": "2026-12-03T10:00:00Z",
            "issue_url": f"http://localhost:1/repos/{REPO}/issues/{issue}"}


def trusted_tombstones(repo: GitHubRepo, *comments: dict[str, Any]) -> list[str]:
    log = read_log([repo._trusted_view(_comment(c)) for c in comments], trusted_set("orion-bot", ("helper",)))
    return [t.tombstone.token for t in log.tombstones]


def test_with_a_key_only_a_block_sealed_for_this_issue_is_trusted() -> None:
    repo = gh()
    good = data(seal(TOMB, KEY, REPO, 7))
    assert trusted_tombstones(repo, good) == ["t1"]
    assert repo._trusted_view(_comment(good)).body == TOMB  # readers compare bodies without the MAC
    copied = data(seal(TOMB, KEY, REPO, 8), cid=11)  # a perfect copy of #8's block
    unsigned = data(TOMB, cid=12)  # what a command with orion's token can post
    other_key = data(seal(TOMB, b"x" * 40, REPO, 7), cid=13)
    assert trusted_tombstones(repo, copied, unsigned, other_key) == []
    assert repo._trusted_view(_comment(unsigned)).author == f"orion-bot {UNSEALED}"


def test_without_a_key_trust_is_by_author_alone() -> None:
    repo = gh(key=None)
    assert trusted_tombstones(repo, data(TOMB), data(seal(TOMB, KEY, REPO, 8), cid=11)) == ["t1", "t1"]
    assert trusted_tombstones(repo, data(TOMB, login="mallory", user_id=66)) == []


def test_plain_comments_are_untouched_by_the_key() -> None:
    assert gh()._trusted_view(_comment(data("just a comment"))).author == "orion-bot"


def test_trusted_authors_are_matched_by_user_id() -> None:
    repo = gh(key=None, trusted=("helper",))
    repo._resolved = {42: "helper"}  # GET /users/helper answered id 42
    by_helper = data(TOMB, login="helper", user_id=42)
    renamed = data(TOMB, login="helper-renamed", user_id=42, cid=11)  # the same account, renamed
    squatter = data(TOMB, login="helper", user_id=666, cid=12)  # the old name, someone else
    assert trusted_tombstones(repo, by_helper) == ["t1"]
    assert trusted_tombstones(repo, renamed) == ["t1"]
    assert trusted_tombstones(repo, squatter) == []
    assert repo._trusted_view(_comment(squatter)).author == "helper (another account, id 666)"
    # The token's own login needs no look-up: it cannot change hands while the token works.
    assert trusted_tombstones(repo, data(TOMB, login="orion-bot", user_id=1, cid=13)) == ["t1"]


def test_orion_s_logins_match_whatever_the_case() -> None:
    """GitHub logins are case-insensitive: a label event's actor spelt `Orion-Bot` is orion's, and
    the rules that set orion's own removals aside must see it so (trusted_set(...).has)."""
    orion = trusted_set("Orion-Bot", ("Helper",))
    assert orion.has("orion-bot") and orion.has("ORION-BOT") and orion.has("helper")
    assert not orion.has("someone") and not orion.has("orion-bot2")
    assert orion == {"orion-bot", "helper"}  # still a set of lower-cased logins for read_log
