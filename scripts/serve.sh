#!/usr/bin/env bash
# README command 1: install, migrate, load the demo study and start the study server on the
# embedded default (SQLite in var/, no other service). Prints the participant link and logins.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/bootstrap.sh
PORT=${PORT:-8000}
export DJANGO_SETTINGS_MODULE=spotlight_study.settings
mkdir -p var
if [ -z "${SECRET_KEY:-}" ]; then
  [ -f var/secret_key ] || .venv/bin/python -c "import secrets; print(secrets.token_urlsafe(50))" > var/secret_key
  SECRET_KEY=$(cat var/secret_key)
  export SECRET_KEY
fi
.venv/bin/python manage.py migrate --noinput
.venv/bin/python manage.py import_study fixtures/spotlight-replication.yaml --if-missing
.venv/bin/python manage.py demo_setup --base-url "http://127.0.0.1:${PORT}"
# runserver's request log goes through the django.server logger, whose handler drops query
# strings and scrubs Prolific IDs (settings LOGGING, docs/security.md), like the Procfile's format.
exec .venv/bin/python manage.py runserver "127.0.0.1:${PORT}" --noreload
