#!/usr/bin/env bash
# Create the virtualenv and install the project from the lock file (requirements.lock: exact
# pins with hashes, refreshed by ./scripts/lock.sh) with uv, itself pinned and hash-checked
# (requirements-uv.lock). Idempotent and quick when nothing changed: the install is skipped
# while pyproject.toml, requirements.lock and requirements-uv.lock are unchanged.
#
# Environment:
#   PYTHON_VERSION  the Python to use, 3.11 (default), 3.12 or 3.13; found on PATH as
#                   pythonX.Y or under pyenv's versions.
#   PYTHON          an explicit interpreter (overrides PYTHON_VERSION).
#   VENV            the virtualenv directory (default .venv).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
want=${PYTHON_VERSION:-3.11}

find_python() {
  if [ -n "${PYTHON:-}" ]; then echo "$PYTHON"; return; fi
  if command -v "python$want" >/dev/null 2>&1 && "python$want" -c 'import sys' >/dev/null 2>&1; then
    echo "python$want"; return
  fi
  # pyenv installs several Pythons but puts only the global one on PATH.
  local root
  root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
  for candidate in "$root"/versions/"$want"*/bin/python"$want"; do
    [ -x "$candidate" ] && { echo "$candidate"; return; }
  done
  echo "python3"
}

if [ ! -x "$VENV/bin/python" ]; then
  PY=$(find_python)
  echo "Creating $VENV with $("$PY" --version 2>&1)"
  "$PY" -m venv "$VENV"
fi
stamp="$VENV/.installed-$(cat pyproject.toml requirements.lock requirements-uv.lock | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  # The installer first: uv, pinned and hash-checked (requirements-uv.lock). It installs the lock
  # in about 6 s where pip took about 40 s, and every CI run creates two virtualenvs.
  "$VENV/bin/python" -m pip install --quiet --require-hashes -r requirements-uv.lock
  # Every third-party package comes from the lock, hash-checked; the project itself is then
  # installed without resolving anything again.
  # --compile-bytecode as pip does: without .pyc files (and with PYTHONDONTWRITEBYTECODE set,
  # which some shells do) every process compiles Django and the rest again, about 1.4 s a start.
  "$VENV/bin/python" -m uv pip install --quiet --python "$VENV/bin/python" --require-hashes \
    --compile-bytecode -r requirements.lock
  "$VENV/bin/python" -m uv pip install --quiet --python "$VENV/bin/python" --no-deps -e .
  rm -f "$VENV"/.installed-*
  touch "$stamp"
fi
