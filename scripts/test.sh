#!/usr/bin/env bash
# README command 2: install everything and run the whole test suite.
# Uses DATABASE_URL if set (e.g. postgres://postgres@127.0.0.1:5432/spotlight), else SQLite.
# PYTHON_VERSION=3.13 VENV=.venv313 ./scripts/test.sh runs it on another Python (3.11 to 3.13).
# Runs one more worker than there are CPUs (TEST_WORKERS=N for N workers);
# ./scripts/test.sh -m "not slow" skips the slow tests (browsers, servers, subprocesses), which
# CI always runs.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/bootstrap.sh --tests
VENV=${VENV:-.venv}
# The browser tests run Debian's Chromium headless shell, and its full Chromium where a page must
# lose the focus to another tab (tests/e2e/conftest.py).
if { [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromium-headless-shell ]; } \
    && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "Installing Debian's Chromium and its headless shell for the browser tests..."
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-headless-shell >/dev/null) \
    || echo "Could not install chromium; browser tests will be skipped outside CI."
fi
# Bytecode caching on whatever the caller's shell says: with PYTHONDONTWRITEBYTECODE set, every
# worker rewrites and compiles all test modules again (pytest keeps its assertion rewrites next to
# the .pyc files) and every process the tests start compiles the project again.
unset PYTHONDONTWRITEBYTECODE
# In parallel (pytest-xdist), one test database per worker; whole files per worker, so a module's
# fixtures (a browser, a server) start once. One worker more than CPUs: a third of a test's time
# is spent waiting on a browser, a server or a subprocess, and the spare worker fills it (2 CPUs,
# SQLite: 3 workers 268-278 s, 2 workers 299-303 s, 4 workers 280 s; docs/testing.md).
# TEST_WORKERS=0 runs in this one process. The 20 slowest tests are listed at the end.
workers=${TEST_WORKERS:-$(( $(nproc) + 1 ))}
exec "$VENV/bin/python" -m pytest -n "$workers" --dist loadfile --durations=20 "$@"
