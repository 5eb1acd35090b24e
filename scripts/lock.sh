#!/usr/bin/env bash
# Refresh the two lock files from pyproject.toml, each one universal file (markers per Python)
# with exact pins and hashes for Python 3.11 to 3.13:
#
#   requirements.lock       the runtime: the dependencies and the "sentry" and "s3" extras. The only lock
#                           deploy/install.sh, deploy/upgrade.sh and scripts/serve.sh install.
#   requirements-test.lock  the test tools (the "dev" extra) and whatever they need beyond the
#                           runtime lock, resolved with the runtime lock as constraints, so a
#                           package in both has one version; installed on top of the runtime
#                           lock by scripts/test.sh and CI (scripts/bootstrap.sh --tests).
#
# Needs network access to PyPI. uv is installed into a throw-away virtualenv if it is not on
# PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
UV=$(command -v uv || true)
if [ -z "$UV" ]; then
  tools=$(mktemp -d)
  python3 -m venv "$tools" && "$tools/bin/python" -m pip install --quiet uv
  UV="$tools/bin/uv"
fi
compile() {  # compile OUT [uv pip compile options...]: OUT rewritten, starting from its own pins
  local out=$1; shift
  # Start from the current pins (uv keeps a pin that still satisfies pyproject.toml), so adding
  # one dependency does not move every other one; ./scripts/lock.sh --upgrade moves them all.
  grep -v '^# ' "$out" > "$out.tmp" 2>/dev/null || true
  "$UV" pip compile pyproject.toml --universal --generate-hashes --python-version 3.11 \
    --no-header -o "$out.tmp" --quiet "$@" >/dev/null
}
compile requirements.lock --extra sentry --extra s3 "${@}"
{
  echo "# The runtime: exact pins with hashes for every supported Python (3.11 to 3.13), resolved"
  echo "# from pyproject.toml's dependencies and its sentry and s3 extras. No test tool belongs here."
  echo "# Refresh: ./scripts/lock.sh   (do not edit by hand)"
  cat requirements.lock.tmp
} > requirements.lock
rm -f requirements.lock.tmp

# The test lock leaves out every package of the runtime lock (--no-emit-package): installing
# both files together gives each package once, at the runtime lock's version (-c).
runtime_packages=()
while read -r name; do runtime_packages+=(--no-emit-package "$name"); done \
  < <(grep -oE '^[A-Za-z0-9][A-Za-z0-9._-]*==' requirements.lock | sed 's/==$//')
compile requirements-test.lock --extra sentry --extra s3 --extra dev -c requirements.lock \
  "${runtime_packages[@]}" "${@}"
{
  echo "# The test tools, on top of requirements.lock (install both; scripts/bootstrap.sh --tests)."
  echo "# Exact pins with hashes for Python 3.11 to 3.13. Refresh: ./scripts/lock.sh (not by hand)"
  cat requirements-test.lock.tmp
} > requirements-test.lock
rm -f requirements-test.lock.tmp

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
echo "requirements.lock, requirements-test.lock and requirements-uv.lock refreshed;"
echo "run ./scripts/bootstrap.sh (runtime) or ./scripts/bootstrap.sh --tests to install them."
