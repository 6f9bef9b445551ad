#!/usr/bin/env bash
# Install what the tests need into .venv-test (not the panel's .venv: a running panel must not
# see its package reinstalled under it, nor CPU torch appear in its interpreter) and run the
# whole suite (lint, format, types, tests). This is the README's test command; .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=.venv-test
if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV"
fi
"$VENV"/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]' -r requirements-test.txt
export QT_QPA_PLATFORM=offscreen
"$VENV"/bin/ruff check .
"$VENV"/bin/ruff format --check .
"$VENV"/bin/mypy rocmpanel
"$VENV"/bin/python -m pytest "$@"
