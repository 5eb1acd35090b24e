#!/usr/bin/env bash
# Create the virtualenv and install the project from the lock files with uv, itself pinned and
# hash-checked (requirements-uv.lock). Exact pins with hashes, refreshed by ./scripts/lock.sh:
#
#   ./scripts/bootstrap.sh           the runtime lock only (requirements.lock): what a server
#                                    runs; scripts/serve.sh and deploy/install.sh
#   ./scripts/bootstrap.sh --tests   the runtime lock and the test tools (requirements-test.lock):
#                                    pytest, Playwright, schemathesis; scripts/test.sh and CI
#   ./scripts/bootstrap.sh --exact   the runtime lock, and every package that is in no lock
#                                    removed (uv pip sync): deploy/upgrade.sh, so a server set up
#                                    before the locks were split loses its test tools
#
# Idempotent and quick when nothing changed: the install is skipped while pyproject.toml and the
# lock files are unchanged (a stamp per kind of install).
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
kind=runtime
case "${1:-}" in
  "") ;;
  --tests) kind=tests ;;
  --exact) kind=exact ;;
  *) echo "bootstrap.sh: unknown argument '$1' (--tests or --exact)" >&2; exit 1 ;;
esac
locks=(-r requirements.lock)
[ "$kind" = tests ] && locks+=(-r requirements-test.lock)

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
stamp="$VENV/.installed-$kind-$(cat pyproject.toml requirements.lock requirements-test.lock requirements-uv.lock | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  # The installer first: uv, pinned and hash-checked (requirements-uv.lock). It installs the lock
  # in about 6 s where pip took about 40 s, and every CI run creates two virtualenvs.
  "$VENV/bin/python" -m pip install --quiet --require-hashes -r requirements-uv.lock
  # Every third-party package comes from the locks, hash-checked; the project itself is then
  # installed without resolving anything again.
  # --compile-bytecode as pip does: without .pyc files (and with PYTHONDONTWRITEBYTECODE set,
  # which some shells do) every process compiles Django and the rest again, about 1.4 s a start.
  if [ "$kind" = exact ]; then
    # sync removes every package neither lock lists (the test tools of an older release; pip
    # stays, and uv is in requirements-uv.lock); the project is installed again below.
    "$VENV/bin/python" -m uv pip sync --quiet --python "$VENV/bin/python" --require-hashes \
      --compile-bytecode requirements.lock requirements-uv.lock
  else
    "$VENV/bin/python" -m uv pip install --quiet --python "$VENV/bin/python" --require-hashes \
      --compile-bytecode "${locks[@]}"
  fi
  "$VENV/bin/python" -m uv pip install --quiet --python "$VENV/bin/python" --no-deps -e .
  # A test install holds the runtime one, so its stamp stands for both.
  rm -f "$VENV"/.installed-*
  touch "$stamp"
  if [ "$kind" = tests ]; then touch "$VENV/.installed-runtime-${stamp##*-}"; fi
fi
