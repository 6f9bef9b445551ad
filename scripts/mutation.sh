#!/usr/bin/env bash
# Mutation testing of the modules that decide things (scripts/mutation.py; issue 19). Uses the
# test environment of scripts/test.sh, with mutmut added. Not run by .ci/run: the seven
# modules take several minutes on two cores. Arguments go to scripts/mutation.py
# (module names, --show-survivors, --json FILE, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=.venv-test
if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
fi
"$VENV"/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]' \
    -r requirements-test.txt -r requirements-mutation.txt
exec "$VENV"/bin/python scripts/mutation.py "$@"
