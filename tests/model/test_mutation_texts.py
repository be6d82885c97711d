"""Every mutation of bench/model_mutations.py still finds the text it replaces: a protocol
change that rewrites a mutated line must move its mutation too, or the bench reports an
ERROR row where a kill or a miss belongs (two ADR 0044 rows did, after ADR 0065)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("model_mutations", ROOT / "bench" / "model_mutations.py")
assert _spec is not None and _spec.loader is not None
model_mutations = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(model_mutations)


@pytest.mark.parametrize("name", sorted(model_mutations.MUTATIONS))
def test_the_mutation_finds_its_text(name: str) -> None:
    for file, find, _replace in model_mutations.MUTATIONS[name]:
        text = (ROOT / "orion_action" / file).read_text()
        assert find in text, f"{name}: its text is no longer in orion_action/{file}"
