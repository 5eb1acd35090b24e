#!/usr/bin/env bash
# Refresh requirements.lock from pyproject.toml: one universal file (markers per Python) with
# exact pins and hashes for Python 3.11 to 3.13, the dev extra included. Needs network access to
# PyPI. uv is installed into a throw-away virtualenv if it is not on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
UV=$(command -v uv || true)
if [ -z "$UV" ]; then
  tools=$(mktemp -d)
  python3 -m venv "$tools" && "$tools/bin/python" -m pip install --quiet uv
  UV="$tools/bin/uv"
fi
# Start from the current pins (uv keeps a pin that still satisfies pyproject.toml), so adding one
# dependency does not move every other one; ./scripts/lock.sh --upgrade moves them all.
grep -v '^# ' requirements.lock > requirements.lock.tmp || true
"$UV" pip compile pyproject.toml --extra dev --universal --generate-hashes \
  --python-version 3.11 --no-header -o requirements.lock.tmp --quiet "$@" >/dev/null
{
  echo "# Exact pins with hashes for every supported Python (3.11 to 3.13), resolved from pyproject.toml."
  echo "# Refresh: ./scripts/lock.sh   (do not edit by hand)"
  cat requirements.lock.tmp
} > requirements.lock
rm -f requirements.lock.tmp
# The installer scripts/bootstrap.sh uses, pinned to the uv that wrote the lock, with the hashes
# of its wheels for every platform.
echo "uv==$("$UV" --version | awk '{print $2}')" > requirements-uv.in.tmp
"$UV" pip compile requirements-uv.in.tmp --universal --generate-hashes --python-version 3.11 \
  --no-header --quiet -o requirements-uv.lock.tmp >/dev/null
{
  echo "# The installer of scripts/bootstrap.sh, pinned with hashes. Refresh: ./scripts/lock.sh"
  cat requirements-uv.lock.tmp
} > requirements-uv.lock
rm -f requirements-uv.in.tmp requirements-uv.lock.tmp
echo "requirements.lock and requirements-uv.lock refreshed; run ./scripts/bootstrap.sh to install them."
