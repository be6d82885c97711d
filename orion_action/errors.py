"""The project's own small error hierarchy and the documented exit codes.

Adapters turn library errors (PyGithub, OS) into these at the edge, so services and the
CLI never need to know what raised them.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Exit codes of every command (docs/design.md section 9)."""

    OK = 0
    USAGE = 64  # bad arguments, bad configuration, bad token, an issue that does not exist
    UNAVAILABLE = 69  # GitHub unreachable after retries
    INTERNAL = 70  # an unexpected internal error (EX_SOFTWARE): one line, the traceback with --verbose
    NOT_CLAIMED = 75  # not queued, held by a live claim, lost the race, empty queue, refused
    LOST = 76  # the claim was lost while running and the child was stopped


class OrionError(Exception):
    """Base of every error this project raises on purpose."""

    exit_code: ExitCode = ExitCode.USAGE


class UsageError(OrionError):
    """Bad command-line arguments or environment."""


class ConfigError(UsageError):
    """An invalid configuration file: the message names the file and the key."""


class GitHubError(OrionError):
    """Any failure talking to GitHub."""

    exit_code = ExitCode.UNAVAILABLE

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class AuthError(GitHubError):
    """The token is missing, malformed or rejected (401)."""

    exit_code = ExitCode.USAGE


class NotFound(GitHubError):
    """The repository, issue or comment does not exist (404)."""

    exit_code = ExitCode.USAGE


class Forbidden(GitHubError):
    """The token may not do this (403 that is not a rate limit)."""

    exit_code = ExitCode.USAGE


class Unavailable(GitHubError):
    """Transient failures (5xx, rate limits, timeouts) outlasted the retry budget."""

    exit_code = ExitCode.UNAVAILABLE


class NotClaimed(OrionError):
    """Nothing was claimed: not queued, held by a live run, lost the race, or refused."""

    exit_code = ExitCode.NOT_CLAIMED


CANNOT_START_STATUS = 127  # what a shell reports for a command it cannot run


class CannotStart(OSError):
    """The command could not be executed (not found, not executable): `strerror` says why.
    The wrapper reports `status` for it, as a shell would."""

    status = CANNOT_START_STATUS


class LeaseExpired(OrionError):
    """The lease had passed before the command could be executed: it never ran."""
