#!/usr/bin/env bash
# Run the round-3 review demos (/work/shared/reviews/r3/demos-protocol and demos-security)
# against this checkout, one at a time, without touching the demos' folders.
#
#   bash scripts/r3-demos/run.sh                 # every demo, then the follow-ups
#   bash scripts/r3-demos/run.sh demo_guardian_escapes model_lag_scenario   # some (name or name.py)
#
# Env: R3_DEMOS (default /work/shared/reviews/r3), R3_TIMEOUT (seconds per demo, default 900),
# R3_LOGS (where the per-demo logs go; default a new temporary directory), EPISODES (passed
# through to model_experiments.py, whose own default is 600).
# Each demo runs as the review's README says (PROJECT_CLONE=<repo> <repo>/.venv/bin/python
# demos-*/NAME.py), with scripts/r3-demos/compat on PYTHONPATH (the test-rig names the demos
# import, as they are now: see compat/*.py) and PYTHONDONTWRITEBYTECODE=1.
# A summary line per demo: exit code, seconds, and its RESULT/verdict lines; the log has all.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
demos="${R3_DEMOS:-/work/shared/reviews/r3}"
timeout_s="${R3_TIMEOUT:-900}"
logs="${R3_LOGS:-$(mktemp -d /tmp/r3-demos.XXXXXX)}"
mkdir -p "$logs"
py="$repo/.venv/bin/python"
[ -x "$py" ] || { echo "no $py: run make deps" >&2; exit 2; }

export PROJECT_CLONE="$repo"
export PYTHONPATH="$here/compat"
export PYTHONDONTWRITEBYTECODE=1
export R3_DEMOS="$demos"

all=()
# The review's demos, then this folder's follow-ups (followups/*.py: what a demo's interleaving
# leads to past the point where the demo stops; see docs/review-r3-demos.md).
for f in "$demos"/demos-protocol/*.py "$demos"/demos-security/*.py "$here"/followups/*.py; do
  case "$(basename "$f")" in r3rig.py|_rig.py) continue ;; esac
  all+=("$f")
done
chosen=()
if [ "$#" -eq 0 ]; then
  chosen=("${all[@]}")
else
  for want in "$@"; do
    for f in "${all[@]}"; do
      [ "$(basename "$f" .py)" = "${want%.py}" ] && chosen+=("$f")
    done
  done
fi
[ "${#chosen[@]}" -gt 0 ] || { echo "no demo matches: $*" >&2; exit 2; }

echo "repo $repo at $(git -C "$repo" rev-parse --short HEAD); logs in $logs"
for f in "${chosen[@]}"; do
  name="$(basename "$(dirname "$f")")/$(basename "$f" .py)"
  log="$logs/${name//\//__}.log"
  start=$(date +%s.%N)
  # timeout makes its own process group: whatever the demo started and left running when it
  # ended (a demo that stops on an exception leaves its wrappers behind) is still in it.
  (cd "$(dirname "$f")" && exec timeout -k 10 "$timeout_s" "$py" "$f") >"$log" 2>&1 &
  group=$!
  wait "$group"
  rc=$?
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
  left="$(pgrep -g "$group" | wc -l)"
  if [ "$left" -gt 0 ]; then
    { echo "--- left running when the demo ended (killed by run.sh):"; ps -o pid,etimes,args -p "$(pgrep -d, -g "$group")"; } >>"$log"
    kill -KILL -- "-$group" 2>/dev/null
  fi
  verdict="$(grep -E '^(RESULT|CAUGHT|missed|ERROR)|: (FIXED|STILL)$' "$log" | tr '\n' ' ' | cut -c1-300)"
  [ "$rc" -eq 124 ] && verdict="TIMEOUT after ${timeout_s}s $verdict"
  [ "$left" -gt 0 ] && verdict="[left $left process(es), killed] $verdict"
  printf '%-48s exit=%-3s %5ss  %s\n' "$name" "$rc" "$secs" "$verdict"
done
