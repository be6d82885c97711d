"""core.pause.pause_reason: when a queue label's description means "paused", and the reason it gives."""

from __future__ import annotations

import pytest

from orion_action.core.pause import pause_reason


@pytest.mark.parametrize(
    ("description", "reason"),
    [
        ("paused", ""),
        ("Paused: deploy freeze", "deploy freeze"),
        ("  PAUSED - until Monday ", "until Monday"),
        ("paused\nline two", "line two"),
        ("Issues for orion to run", None),
        ("pausedness", None),  # a word that only begins with "paused" is no switch
        ("not paused", None),
        ("", None),
        (None, None),
    ],
)
def test_pause_reason(description: str | None, reason: str | None) -> None:
    assert pause_reason(description) == reason
