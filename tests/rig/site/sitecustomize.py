"""Test seam, loaded only by product subprocesses that the test rig starts (``rig.orion_env``
puts this folder on PYTHONPATH): it shortens the claim's list settle, nothing else.

Why: every claim waits ``LIST_SETTLE_S`` (1 s) before it reads the comment list, because
GitHub's lists can lag a just-posted comment. The emulator's lists never lag, so in the
subprocess tests that wait proves nothing and costs about a quarter of `make test`. The settle
itself is proven where a list does lag: the model checker and the unit tests drive the real
``Claimer`` with the real constant on the in-memory GitHub (``list_lag``), and the composite
action's tests run the product without this folder. The product has no knob for it: nothing a
workflow or a command can set changes it (docs/adr/0040-fast-tests.md).

``ORION_TEST_LIST_SETTLE_S`` (seconds) is read here, by the tests' own start-up code; without
it this file does nothing.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
from collections.abc import Sequence
from types import ModuleType

_MODULE = "orion_action.services.claiming"
_SETTLE = os.environ.get("ORION_TEST_LIST_SETTLE_S")


class _Settle(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the claiming module as usual, and sets its settle once it has run."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.inner: importlib.abc.Loader | None = None

    def find_spec(self, name: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if name != _MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        self.inner, spec.loader = spec.loader, self
        return spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        assert self.inner is not None
        return self.inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        assert self.inner is not None
        self.inner.exec_module(module)
        # Loud, in every product process, if the constant moves: never a silent no-op.
        assert isinstance(getattr(module, "LIST_SETTLE_S", None), float), "the claim's settle moved"
        vars(module)["LIST_SETTLE_S"] = self.seconds


if _SETTLE is not None:
    sys.meta_path.insert(0, _Settle(float(_SETTLE)))
