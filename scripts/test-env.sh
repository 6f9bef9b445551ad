# Sourced by scripts/test.sh and scripts/mutation.sh (from the repository root): make the test
# environment .venv-test (not the panel's .venv: a running panel must not see its package
# reinstalled under it, nor CPU torch appear in its interpreter) and install what the tests
# need into it, plus the pip arguments given to test_env.
VENV=.venv-test
test_env() {
    if [ ! -x "$VENV/bin/python" ]; then
        "${PYTHON:-python3}" -m venv "$VENV"
    fi
    "$VENV"/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]' \
        -r requirements-test.txt "$@"
}
