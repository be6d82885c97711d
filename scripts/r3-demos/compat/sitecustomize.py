"""Compatibility for the round-3 review demos (/work/shared/reviews/r3/demos-*), loaded at the
start-up of each demo's own Python process (scripts/r3-demos/run.sh puts this folder on
PYTHONPATH; product processes get their own PYTHONPATH from ``rig.orion_env``, or from the demo,
as demo_bad_inputs.py sets it). model_experiments.py's explorer subprocess inherits it: there the
hooks below only fill ``sight`` where a caller leaves it out, which the model never does.

The demos were written against the test rig of commit 0a77c48. Two things of the rig changed
in ways that would make a demo test something else than it did then; both are adapted here,
when the rig's modules are first imported (before any demo binds their names):

* ``rig.orion_env``: since ADR 0040 it puts tests/rig/site on the product's PYTHONPATH with
  ORION_TEST_LIST_SETTLE_S=0, which shortens the claim's 1 s list settle to 0 (fine for the
  suite, whose emulator never lags). At 0a77c48 the product ran with its real settle, and
  demo_lag_blind_fence.py (among others) reasons about LIST_SETTLE_S. The adapted orion_env
  gives the product its real settle back: PYTHONPATH = the clone only, no settle override.
* ``rig.proxy.Proxy``: see _r3_proxy_compat.py (``_forward`` gained a ``helper`` argument and
  GraphQL reads arrived; the demos' LaggingProxy overrides the old shapes).

One call shape of the product changed for the demos that drive services in-process
(demo_fence_after_deletions.py): ``Claimer`` and ``Holding`` take a required ``sight`` (how a
process of this machine is seen, ADR 0051's ports), which the CLI fills with
``adapters.machine.sight``. When a demo leaves it out, it gets that same production value.
And ``Claim.comments_seen`` (the issue's comment count the fence had read up to) became
``Claim.listed`` (the ids it listed, ADR 0023: only what was listed counts as seen); the demo
prints ``comments_seen``, so it reads as ``len(listed)``, for display only.

Nothing else is changed, and nothing here runs in the product.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable, Sequence
from types import ModuleType


class _After(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports the named modules as usual, then calls a patch on each once it has run."""

    def __init__(self, patches: dict[str, Callable[[ModuleType], None]]) -> None:
        self.patches = patches
        self.inner: dict[str, importlib.abc.Loader] = {}

    def find_spec(self, name: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if name not in self.patches:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        self.inner[name], spec.loader = spec.loader, self
        return spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.inner[spec.name].create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.inner[module.__name__].exec_module(module)
        self.patches[module.__name__](module)


def _patch_rig(rig: ModuleType) -> None:
    site = str(rig.SITE)
    original = rig.orion_env

    def orion_env(full_name: str, api_url: str, token: str = "bot_token",
                  base: dict[str, str] | None = None) -> dict[str, str]:
        """rig.orion_env as it was at 0a77c48: the product with its real list settle."""
        env = original(full_name, api_url, token, base)
        env.pop("ORION_TEST_LIST_SETTLE_S", None)
        env["PYTHONPATH"] = ":".join(p for p in env["PYTHONPATH"].split(":") if p != site)
        return env

    orion_env.__wrapped__ = original  # type: ignore[attr-defined]
    rig.orion_env = orion_env


def _patch_proxy(proxy: ModuleType) -> None:
    import _r3_proxy_compat

    _r3_proxy_compat.install(proxy)


def _default_sight(module: ModuleType, name: str) -> None:
    cls = getattr(module, name)
    original = cls.__init__

    def __init__(self: object, *args: object, **kw: object) -> None:
        if "sight" not in kw and len(args) < _POSITIONAL[name]:
            from orion_action.adapters import machine

            kw["sight"] = machine.sight
        original(self, *args, **kw)

    cls.__init__ = __init__


def _comments_seen(module: ModuleType) -> None:
    if not hasattr(module.Claim, "comments_seen"):
        module.Claim.comments_seen = property(lambda self: len(self.listed))


# How many positional arguments (after self) a call passes when it gives ``sight`` positionally.
_POSITIONAL = {"Claimer": 9, "Holding": 7}

sys.meta_path.insert(0, _After({
    "rig": _patch_rig,
    "rig.proxy": _patch_proxy,
    "orion_action.services.claiming": lambda m: (_default_sight(m, "Claimer"), _comments_seen(m)),
    "orion_action.services.holding": lambda m: _default_sight(m, "Holding"),
}))
