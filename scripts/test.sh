#!/usr/bin/env bash
# Set up (if needed) and run the whole test suite against the INSTALLED package.
#   scripts/test.sh            # everything
#   scripts/test.sh -k runner  # pytest arguments pass through
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/setup.sh"
cd "$ROOT"
echo "[test] ROS_DOMAIN_ID=$ROS_DOMAIN_ID ROS_AUTOMATIC_DISCOVERY_RANGE=$ROS_AUTOMATIC_DISCOVERY_RANGE"
# the whole suite unless a test path is named
for a in "$@"; do [ -e "${a%%::*}" ] && exec "$VSIM_VENV/bin/pytest" "$@"; done
exec "$VSIM_VENV/bin/pytest" test "$@"
