#!/usr/bin/env bash
# Set up (if needed) and run the urban scenario headless, bounded, with a summary at the end.
#   scripts/run.sh                      # 60 s of simulated time, real time
#   scripts/run.sh --duration 0         # until Ctrl-C
#   scripts/run.sh --mode fast --duration 300
# Any option of vehicle_sim_run (--help) or `name:=value` launch argument is passed through.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/setup.sh"
cd "$ROOT"
exec "$VSIM_VENV/bin/vehicle_sim_run" --scenario urban --headless true --duration 60 "$@"
