"""What an issue's comments say: its claim records and tombstones, from trusted authors only."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime

from orion_action.core.record import (
    CLAIM_MARK,
    HOLDER_END,
    ClaimRecord,
    RecordError,
    State,
    Tombstone,
    block_kind,
    mentions_orion,
    parse_block,
)


@dataclass(frozen=True)
class Issue:
    """An issue as GitHub reported it, and GitHub's time of that report (`read_at`)."""

    number: int
    is_open: bool
    labels: frozenset[str]
    comments: int  # GitHub's count of the issue's comments
    created_at: datetime
    read_at: datetime
    updated_at: datetime | None = None  # the issue's last change (labels, comments, edits)
    is_pull_request: bool = False
    title: str = ""
    body: str = ""
    # (name, description) of each label, as the read returned them: the queue label's
    # description carries the pause switch (docs/adr/0022-pause-in-the-queue-label.md).
    label_descriptions: tuple[tuple[str, str], ...] = ()
    author: str = ""  # who opened it (the dashboard trusts only its own kind, docs/adr/0020)

    def label_description(self, name: str) -> str | None:
        return next((d for n, d in self.label_descriptions if n == name), None)


@dataclass(frozen=True)
class Comment:
    """An issue comment as GitHub reports it; times are GitHub's, never the local clock's."""

    id: int
    author: str
    body: str
    created_at: datetime
    updated_at: datetime
    issue: int | None = None  # the issue's number, when the listing said (repository-wide lists)
    author_id: int | None = None  # GitHub's numeric user id of the author, when it said


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
class Unreadable:
    """A trusted comment that starts with an orion block this version cannot read (a newer
    record version, a damaged edit). An unreadable claim blocks: uncertainty never lets a
    second run in. Release it by hand with its pseudo token (`release --force`)."""

    comment_id: int
    kind: str  # CLAIM_MARK or RELEASE_MARK
    why: str

    @property
    def token(self) -> str:
        return f"unreadable-{self.comment_id}"


@dataclass(frozen=True)
class UntrustedRelease:
    """A readable release block by an author who is not trusted: ignored, but when it names a
    trusted claim it almost always means the reconciler runs under a login missing from
    `trusted_authors`, which would strand the issue; callers make that loud."""

    comment_id: int
    author: str
    token: str


@dataclass(frozen=True)
class IssueLog:
    """The orion history of one issue, in comment-id order (GitHub's total order)."""

    claims: tuple[ClaimEntry, ...] = ()
    tombstones: tuple[TombstoneEntry, ...] = ()
    untrusted: tuple[int, ...] = ()  # ids of orion-looking comments by untrusted authors
    unreadable: tuple[Unreadable, ...] = ()
    untrusted_releases: tuple[UntrustedRelease, ...] = ()

    def released_tokens(self) -> frozenset[str]:
        return frozenset(t.tombstone.token for t in self.tombstones)

    def open_claims(self) -> tuple[ClaimEntry, ...]:
        """Records that still claim the issue: claiming/running and not tombstoned."""
        released = self.released_tokens()
        return tuple(c for c in self.claims if c.record.state.is_open and c.record.token not in released)

    def find(self, token: str) -> ClaimEntry | None:
        return next((c for c in self.claims if c.record.token == token), None)

    def before(self, comment_id: int) -> IssueLog:
        """The claims and tombstones posted before comment `comment_id`: the story a claim in that
        comment follows."""
        return replace(self, claims=tuple(c for c in self.claims if c.comment_id < comment_id),
                       tombstones=tuple(t for t in self.tombstones if t.comment_id < comment_id))

    def blocking_unreadable(self, below: int | None = None) -> Unreadable | None:
        """The lowest unreadable claim not released by hand (below comment `below`, if given)."""
        released = self.released_tokens()
        return next(
            (
                u
                for u in self.unreadable
                if u.kind == CLAIM_MARK
                and u.token not in released
                and (below is None or u.comment_id < below)
            ),
            None,
        )

    def attempts_used(self) -> int:
        """Attempts spent since the issue last finished: runs released as dead and runs handed
        back (interrupted), each claim once. Claims that never ran, and runs stopped by GitHub's
        own failures, spend nothing (the tombstone or record says so).

        The holder's own account beats a reconciler's presumption (ADR 0019): a pass that could
        not hear from a holder during an outage releases it as dead and counts the attempt, and
        the holder says afterwards, once GitHub answers again, that it was interrupted without
        spending one. Its record (interrupted, `counts_attempt` false) or its end marker then
        excuses the claim, whichever came first."""
        finished = [c.comment_id for c in self.claims if c.record.state is State.FINISHED]
        since = max(finished, default=0)
        excused = {
            c.record.token
            for c in self.claims
            if c.record.state is State.INTERRUPTED and not c.record.counts_attempt
        } | {
            t.tombstone.token
            for t in self.tombstones
            if t.tombstone.by == HOLDER_END and not t.tombstone.counts_attempt
        }
        # Distinct claims, not tombstones: a reconciler killed before it took back its duplicate
        # tombstone leaves two for one death.
        spent = {
            t.tombstone.token for t in self.tombstones if t.tombstone.counts_attempt and t.comment_id > since
        }
        spent |= {
            c.record.token
            for c in self.claims
            if c.comment_id > since and c.record.state is State.INTERRUPTED and c.record.counts_attempt
        }
        return len(spent - excused)


def read_log(comments: Iterable[Comment], trusted: frozenset[str]) -> IssueLog:
    """Parse every comment; blocks by untrusted authors are set aside, never believed."""
    claims: list[ClaimEntry] = []
    tombstones: list[TombstoneEntry] = []
    untrusted: list[int] = []
    unreadable: list[Unreadable] = []
    untrusted_releases: list[UntrustedRelease] = []
    for c in sorted(comments, key=lambda c: c.id):
        if not mentions_orion(c.body):
            continue
        try:
            block = parse_block(c.body)  # linear and capped: safe on any author's text
        except RecordError as exc:
            if c.author.lower() in trusted:
                unreadable.append(Unreadable(c.id, block_kind(c.body) or CLAIM_MARK, str(exc)))
            else:
                untrusted.append(c.id)
            continue
        if c.author.lower() not in trusted:
            untrusted.append(c.id)
            if isinstance(block, Tombstone):
                untrusted_releases.append(UntrustedRelease(c.id, c.author, block.token))
            continue
        if isinstance(block, ClaimRecord):
            claims.append(ClaimEntry(c.id, block, c.created_at, c.updated_at))
        elif isinstance(block, Tombstone):
            tombstones.append(TombstoneEntry(c.id, block, c.created_at))
    # One token in several claim comments: a claim POST whose answer was lost, retried while the
    # listing still lagged the first copy. The claimer got the last copy back and edits only it;
    # the earlier ones are orphans that would stay "claiming" for ever (ADR 0049).
    last_copy = {c.record.token: c.comment_id for c in claims}
    claims = [c for c in claims if last_copy[c.record.token] == c.comment_id]
    return IssueLog(
        tuple(claims), tuple(tombstones), tuple(untrusted), tuple(unreadable), tuple(untrusted_releases)
    )


class Logins(frozenset[str]):
    """Lower-cased GitHub logins: orion's trusted authors. GitHub logins are case-insensitive,
    so `has` lowers the login it is asked about."""

    def has(self, login: str) -> bool:
        """Whether `login` is one of these: a label event's actor is orion's when this holds,
        and the rules that set orion's own removals aside ask it (ADR 0061)."""
        return login.lower() in self


def trusted_set(own_login: str | None, configured: Iterable[str]) -> Logins:
    """The token's own login plus the configured ones."""
    names = {n.lower() for n in configured}
    if own_login:
        names.add(own_login.lower())
    return Logins(names)
