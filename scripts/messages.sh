#!/usr/bin/env bash
# Refresh the translation catalogs of the participant pages (locale/<lang>/LC_MESSAGES/django.po)
# from the code and templates, then compile them (django.mo, committed). Needs GNU gettext
# (xgettext, msgmerge, msgfmt: apt-get install gettext). After editing a .po file by hand, run
# it again (or with --compile-only) and commit both files: tests/participation/test_i18n.py
# fails on a .mo file older than its .po and on any message left untranslated.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
[ -x "$PY" ] || PY=python
export DEBUG=${DEBUG:-true}
if [ "${1:-}" != "--compile-only" ]; then
  "$PY" manage.py makemessages --no-obsolete --add-location=file -l de -l es -l fr \
    --ignore '.venv/*' --ignore 'staticfiles/*' --ignore 'tests/*' --ignore 'bench/*' \
    --ignore 'analysis/*' --ignore 'deploy/*' --ignore 'var/*' >/dev/null
fi
"$PY" manage.py compilemessages --locale de --locale es --locale fr >/dev/null
echo "locale/ refreshed and compiled."
