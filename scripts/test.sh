#!/usr/bin/env bash
# Install what the tests need into .venv-test (scripts/test-env.sh) and run the whole suite
# (lint, format, types, tests). This is the README's test command; .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/test-env.sh
test_env
export QT_QPA_PLATFORM=offscreen
"$VENV"/bin/ruff check .
"$VENV"/bin/ruff format --check .
"$VENV"/bin/mypy rocmpanel
"$VENV"/bin/python scripts/translations.py build >/dev/null  # the .qm files the window loads
"$VENV"/bin/python -m pytest "$@"
