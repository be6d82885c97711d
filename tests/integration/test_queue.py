"""The pause switch as a person sets it, end to end against the emulator with real processes
(docs/design.md section 12: "Pause"; docs/adr/0022-pause-in-the-queue-label.md): the label's
description edited through the REST API reaches `run` in the issue listing it reads anyway, and
`status`. Queue order, `--require`, `pause`/`resume` and a run in flight while paused are decided
in-process on the in-memory GitHub (unit/test_queue_in_process.py, issue 17); `pause` and
`resume` run end to end through the action in test_action.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from rig import ROOT
from rig.harness import FAST, NOT_CLAIMED, QUEUE, Child, Proc, Run, fast_config, product

P0, P1 = "orion-p0", "orion-p1"
CONFIG = FAST + f"labels: {{priority: [{P0}, {P1}]}}\n"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return fast_config(tmp_path, CONFIG)


def orion(env: dict[str, str], config: Path, *args: str) -> Proc:
    return product([args[0], "--config", str(config), *args[1:]], env=env, workdir=config.parent,
                   cwd=ROOT)


def test_a_person_pauses_from_the_web_interface_with_the_label(repo, orion_env, tmp_path, config, proxy):
    """Issues -> Labels -> edit the queue label, description "Paused - ..." (any case, the rest
    is the reason), as a person does it: straight through the API, not through orion-action.
    The claim sees it in the read it makes anyway: no request is spent on the switch."""
    n = repo.create_issue("waits", [QUEUE])
    repo.api("PATCH", f"/labels/{QUEUE}", json={"description": "Paused - release week"})
    before = proxy.count()
    c = Child(tmp_path, name="refused", hold=False)
    r = Run(orion_env, tmp_path, "--next", cmd=c.cmd, config=config, name="refused")
    assert r.wait() == NOT_CLAIMED, r.stderr
    assert "the queue is paused" in r.stderr and "release week" in r.stderr, r.stderr
    assert proxy.count() - before == 1  # the queue listing, nothing else
    assert not c.started
    text = orion(orion_env, config, "status")
    assert "paused: yes" in text.stdout and f"queue (1, in pick order): #{n}" in text.stdout
