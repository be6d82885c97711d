#!/usr/bin/env bash
# Placeholder worker for .github/workflows/orion-worker.yml: replace it with your agent.
# It gets the issue through the environment, never through its text.
set -euo pipefail
echo "working on ${ORION_REPO}#${ORION_ISSUE} (attempt ${ORION_ATTEMPT}, stage ${ORION_STAGE:-none})"
