"""What an issue's comments say: its claim records and tombstones, from trusted authors only."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from orion_action.core.record import ClaimRecord, RecordError, State, Tombstone, mentions_orion, parse_block


@dataclass(frozen=True)
class Comment:
    """An issue comment as GitHub reports it; times are GitHub's, never the local clock's."""

    id: int
    author: str
    body: str
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class ClaimEntry:
    """A claim record together with the comment that carries it."""

    comment_id: int
    record: ClaimRecord
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class TombstoneEntry:
    comment_id: int
    tombstone: Tombstone
    created_at: datetime


@dataclass(frozen=True)
class IssueLog:
    """The orion history of one issue, in comment-id order (GitHub's total order)."""

    claims: tuple[ClaimEntry, ...] = ()
    tombstones: tuple[TombstoneEntry, ...] = ()
    untrusted: tuple[int, ...] = ()  # ids of orion-looking comments by untrusted authors
    unreadable: tuple[tuple[int, str], ...] = ()  # (id, why) of trusted but unreadable blocks

    def released_tokens(self) -> frozenset[str]:
        return frozenset(t.tombstone.token for t in self.tombstones)

    def open_claims(self) -> tuple[ClaimEntry, ...]:
        """Records that still claim the issue: claiming/running and not tombstoned."""
        released = self.released_tokens()
        return tuple(c for c in self.claims if c.record.state.is_open and c.record.token not in released)

    def find(self, token: str) -> ClaimEntry | None:
        return next((c for c in self.claims if c.record.token == token), None)

    def attempts_used(self) -> int:
        """Dead releases since the issue last finished: the retry budget spent so far."""
        finished = [c.comment_id for c in self.claims if c.record.state is State.FINISHED]
        since = max(finished, default=0)
        # Distinct claims, not tombstones: a reconciler killed before it took back its duplicate
        # tombstone leaves two for one death.
        return len(
            {
                t.tombstone.token
                for t in self.tombstones
                if t.tombstone.counts_attempt and t.comment_id > since
            }
        )


def read_log(comments: Iterable[Comment], trusted: frozenset[str]) -> IssueLog:
    """Parse every comment; blocks by untrusted authors are set aside, never believed."""
    claims: list[ClaimEntry] = []
    tombstones: list[TombstoneEntry] = []
    untrusted: list[int] = []
    unreadable: list[tuple[int, str]] = []
    for c in sorted(comments, key=lambda c: c.id):
        if not mentions_orion(c.body):
            continue
        if c.author.lower() not in trusted:
            untrusted.append(c.id)
            continue
        try:
            block = parse_block(c.body)
        except RecordError as exc:
            unreadable.append((c.id, str(exc)))
            continue
        if isinstance(block, ClaimRecord):
            claims.append(ClaimEntry(c.id, block, c.created_at, c.updated_at))
        elif isinstance(block, Tombstone):
            tombstones.append(TombstoneEntry(c.id, block, c.created_at))
    return IssueLog(tuple(claims), tuple(tombstones), tuple(untrusted), tuple(unreadable))


def trusted_set(own_login: str | None, configured: Iterable[str]) -> frozenset[str]:
    """The token's own login plus the configured ones; GitHub logins are case-insensitive."""
    names = {n.lower() for n in configured}
    if own_login:
        names.add(own_login.lower())
    return frozenset(names)
