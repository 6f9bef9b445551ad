#!/usr/bin/env bash
# Mutation testing of the modules that decide things (scripts/mutation.py; issue 19), in the
# test environment of scripts/test.sh with mutmut added. Not run by .ci/run: the seven modules
# take about 30 minutes on two cores. Arguments go to scripts/mutation.py (module names,
# --show-survivors, --json FILE, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/test-env.sh
test_env -r requirements-mutation.txt
exec "$VENV"/bin/python scripts/mutation.py "$@"
