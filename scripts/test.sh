#!/usr/bin/env bash
# Install what the tests need into .venv and run the whole suite (lint, format, types, tests).
# This is the README's test command; .ci/run calls it too.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]' -r requirements-test.txt
export QT_QPA_PLATFORM=offscreen
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy rocmpanel
.venv/bin/python -m pytest "$@"
