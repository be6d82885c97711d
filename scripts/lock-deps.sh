#!/usr/bin/env bash
# Refresh requirements.lock: the exact, hash-pinned runtime dependencies the action installs
# (`pip install --require-hashes -r requirements.lock` in action.yml).
#
#   bash scripts/lock-deps.sh          # re-resolve requirements.txt's ranges to the newest
#                                      # versions, then check that the lock installs everywhere
#   bash scripts/lock-deps.sh --check  # only the check, for the lock as it is
#
# The resolution is for the oldest supported Python, 3.10, because a newer interpreter would
# pick releases that dropped 3.10 (pip resolves for a target Python with --python-version;
# pip-compile cannot): pip resolves requirements.txt for CPython 3.10 on Linux, those
# versions become constraints, and pip-compile (pip-tools, a maintainer's tool, not a
# dependency of the project) writes them with the hashes of every file PyPI has for each
# pinned version (all wheels and the sdist), so the lock installs on every platform. Both run
# in a throwaway virtual environment against PyPI alone: no pip configuration of this machine
# (mirrors, find-links, constraints) leaks into the lock. The check then downloads the lock,
# hash-checked, wheels only, with its dependencies (so a dependency missing from the lock
# fails), for every supported target: Linux x86_64 and aarch64, CPython 3.10 to 3.13.
# Review the diff and commit requirements.lock with a CHANGELOG line; the unit tests check
# that every pin lies inside requirements.txt's ranges.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
check_only=false
case "${1:-}" in
  --check) check_only=true ;;
  '') ;;
  *) echo "usage: $0 [--check]" >&2; exit 64 ;;
esac

# PyPI only: ignore the machine's and the user's pip configuration.
export PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1
unset PIP_FIND_LINKS PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_CONSTRAINT PIP_NO_INDEX

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$PYTHON" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --upgrade pip 'pip-tools>=7.4,<8'

target() {  # target PYTHON_VERSION PLATFORM: pip's options to act for that interpreter
  local arch="${2#manylinux2014_}"
  echo --only-binary=:all: --python-version "$1" --implementation cp \
    --abi "cp${1/./}" --abi abi3 --abi none --platform "$2" \
    --platform "manylinux_2_17_$arch" --platform "manylinux_2_28_$arch" --platform any
}

if [ "$check_only" = false ]; then
  # shellcheck disable=SC2046  # target's words are separate options on purpose
  "$work/venv/bin/python" -m pip install --quiet --dry-run --ignore-installed \
    --report "$work/resolved.json" $(target 3.10 manylinux2014_x86_64) -r requirements.txt
  "$work/venv/bin/python" -c '
import json, sys
for item in json.load(open(sys.argv[1]))["install"]:
    print(item["metadata"]["name"] + "==" + item["metadata"]["version"])
' "$work/resolved.json" > "$work/constraints.txt"
  # The header pip-compile writes names this script as the command to re-run.
  (cd "$work" && cp "$OLDPWD/requirements.txt" . &&
    CUSTOM_COMPILE_COMMAND="bash scripts/lock-deps.sh" \
    "$work/venv/bin/pip-compile" --quiet --generate-hashes --allow-unsafe --strip-extras \
      --no-emit-index-url --no-emit-find-links --constraint constraints.txt \
      --output-file requirements.lock requirements.txt)
  # pip-compile cites the throwaway constraints file in its "via" comments: say what it was.
  sed 's|-c constraints.txt|(the resolution for CPython 3.10)|' "$work/requirements.lock" > requirements.lock
  echo "wrote requirements.lock"
fi

for py in 3.10 3.11 3.12 3.13; do
  for platform in manylinux2014_x86_64 manylinux2014_aarch64; do
    echo "checking the lock for CPython $py on $platform"
    # shellcheck disable=SC2046
    "$work/venv/bin/python" -m pip download --quiet --require-hashes $(target "$py" "$platform") \
      --dest "$work/wheels-$py-$platform" -r requirements.lock
  done
done
echo "requirements.lock installs (wheels, hash-checked) on Linux x86_64/aarch64, CPython 3.10-3.13"
