#!/usr/bin/env bash
# README command 1: install, migrate, load the demo study and start the study server on the
# embedded default (SQLite in var/, no other service), served by uWSGI as in production.
# Prints the participant link and logins.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/bootstrap.sh
# The virtualenv bootstrap.sh made (VENV, default .venv) comes first on PATH, as on a platform.
VENV=${VENV:-.venv}
case "$VENV" in /*) ;; *) VENV="$PWD/$VENV" ;; esac
export PATH="$VENV/bin:$PATH"
PORT=${PORT:-8000}
export DJANGO_SETTINGS_MODULE=spotlight_study.settings
mkdir -p var
if [ -z "${SECRET_KEY:-}" ]; then
  [ -f var/secret_key ] || python -c "import secrets; print(secrets.token_urlsafe(50))" > var/secret_key
  SECRET_KEY=$(cat var/secret_key)
  export SECRET_KEY
fi
# The embedded default's key for per-study Prolific credentials (docs/security.md), made once and
# kept in var/ beside the database it protects, readable by this user only; settings.py reads it
# when PROLIFIC_CREDENTIALS_KEYS is unset (so do manage.py commands). A deployment sets its own.
if [ -z "${PROLIFIC_CREDENTIALS_KEYS:-}" ] && [ ! -f var/credentials_key ]; then
  (umask 077 && python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())" > var/credentials_key)
fi
python manage.py migrate --noinput
# As production's release step does (Procfile); without it WhiteNoise warns that STATIC_ROOT is
# missing at every start (the files are served from static/ either way).
python manage.py collectstatic --noinput --verbosity 0
python manage.py import_study fixtures/spotlight-replication.yaml --if-missing
python manage.py demo_setup --base-url "http://127.0.0.1:${PORT}"
# uWSGI, as in production: the same uwsgi.ini as the Procfile (one worker process per CPU, at
# least 2; an access log without query strings, so no Prolific ID is logged, docs/security.md),
# with DEBUG off and WhiteNoise serving the static files. SQLite copes with several workers:
# settings.py opens it in WAL mode with IMMEDIATE transactions and a 30 s busy timeout, so
# concurrent writes wait for each other instead of failing with "database is locked". The workers
# share the arrival rate limit's counters through a file cache in var/ (no cache service needed).
export CACHE_URL=${CACHE_URL:-filecache://$PWD/var/cache}
# Bare uWSGI answers each connection with a sync worker: 200 slow clients (a slowloris) held
# every worker and no participant got an answer (docs/security.md, "Slow clients"). Said plainly
# at every start, because this command is the README's first.
cat <<'NOTE'
NOTE: this is uWSGI on its own, for trying the platform on this machine. It is NOT for
participants on the open internet: a few hundred slow clients can hold all of its workers
(docs/security.md, "Slow clients"). For a study with real participants use the deploy kit
(deploy/, docs/deploy.md): Caddy in front of uWSGI, which keeps serving participants then.
NOTE
echo "Serving on http://127.0.0.1:${PORT} (uWSGI; stop with Ctrl-C)"
exec uwsgi --ini uwsgi.ini --http-socket "127.0.0.1:${PORT}"
