#!/usr/bin/env bash
# README command 2: install everything and run the whole test suite.
# Uses DATABASE_URL if set (e.g. postgres://postgres@127.0.0.1:5432/spotlight), else SQLite.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/bootstrap.sh
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "Installing Debian's Chromium for the browser tests..."
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "Could not install chromium; browser tests will be skipped outside CI."
fi
exec .venv/bin/python -m pytest "$@"
