#!/usr/bin/env bash
# Restore a backup of scripts/backup.sh: scripts/restore.sh FILE [--force] [--env-file FILE]
#
# Restores FILE (a .pgdump or .sqlite3 backup) into the database DATABASE_URL names, or the
# embedded default var/db.sqlite3 when it is unset. A PostgreSQL database must exist (createdb
# it first); a SQLite file is created. The checksum beside FILE (FILE.sha256) must match.
#
# It refuses a database that already has tables, unless --force is given: then the tables of
# the backup replace theirs. Stop the web server, worker and beat before a forced restore.
# Afterwards, run `manage.py migrate` (a backup from an older version) and `manage.py check_data`.
#
# Exit status: 0 when restored; 1 with a message on stderr, the database unchanged (a refused,
# unreadable or mismatched backup) or, if pg_restore failed halfway, as pg_restore left it.
set -euo pipefail
cd "$(dirname "$0")/.."

file="" force=0 env_file=""
while [ $# -gt 0 ]; do
  case "$1" in
    --force) force=1; shift ;;
    --env-file) env_file=${2:?--env-file needs a file}; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "restore.sh: unknown option '$1' (try --help)" >&2; exit 1 ;;
    *) [ -z "$file" ] || { echo "restore.sh: one backup file only" >&2; exit 1; }; file=$1; shift ;;
  esac
done
[ -n "$file" ] || { echo "usage: scripts/restore.sh FILE [--force] [--env-file FILE]" >&2; exit 1; }
[ -f "$file" ] || { echo "restore.sh: no such file: $file" >&2; exit 1; }
if [ -n "$env_file" ]; then
  [ -r "$env_file" ] || { echo "restore.sh: cannot read $env_file" >&2; exit 1; }
  url_line=$(grep -E '^DATABASE_URL=' "$env_file" | tail -n 1 || true)
  [ -n "$url_line" ] && DATABASE_URL=${url_line#DATABASE_URL=}
fi

# shellcheck source=scripts/dburl.sh
. scripts/dburl.sh
dburl_parse "${DATABASE_URL:-}"

if [ -f "$file.sha256" ]; then
  (cd "$(dirname "$file")" && sha256sum --check --status "$(basename "$file").sha256") || {
    echo "restore.sh: $file does not match its checksum ($file.sha256): refusing a damaged backup" >&2; exit 1; }
else
  echo "restore.sh: warning: no $file.sha256 beside the backup; restoring it unchecked" >&2
fi
magic=$(head -c 16 "$file" | tr -d '\0')
case "$magic" in
  PGDMP*) kind=postgresql ;;
  "SQLite format 3"*) kind=sqlite ;;
  *) echo "restore.sh: $file is neither a pg_dump -Fc nor a SQLite backup" >&2; exit 1 ;;
esac
if [ "$kind" != "$DB_ENGINE" ]; then
  echo "restore.sh: $file is a $kind backup but DATABASE_URL names a $DB_ENGINE database" >&2; exit 1
fi

if [ "$DB_ENGINE" = postgresql ]; then
  need_command pg_restore postgresql-client
  tables=$(psql "$DB_URL" -XtAc "SELECT count(*) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')") || {
    echo "restore.sh: cannot connect to the database DATABASE_URL names (does it exist? createdb it first)" >&2; exit 1; }
  if [ "$tables" != 0 ] && [ "$force" = 0 ]; then
    echo "restore.sh: the database is not empty ($tables tables): refusing to restore over it. Restore into a new database, or give --force to replace its tables." >&2
    exit 1
  fi
  clean=()
  [ "$tables" != 0 ] && clean=(--clean --if-exists)
  pg_restore --no-owner --no-privileges --exit-on-error --single-transaction "${clean[@]}" -d "$DB_URL" "$file" || {
    echo "restore.sh: pg_restore failed (in one transaction: the database is as before)" >&2; exit 1; }
else
  python3 - "$file" "$DB_PATH" "$force" <<'PY'
import os, sqlite3, sys
source_path, target_path, force = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
if os.path.exists(target_path):
    probe = sqlite3.connect(target_path, timeout=60)
    tables = probe.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0]
    probe.close()
    if tables and not force:
        sys.exit(f"restore.sh: the database is not empty ({tables} tables): refusing to restore over "
                 "it. Restore into a new file, or give --force to replace it.")
os.makedirs(os.path.dirname(os.path.abspath(target_path)), exist_ok=True)
source = sqlite3.connect(f"file:{source_path}?mode=ro", uri=True)
check = source.execute("PRAGMA integrity_check").fetchone()[0]
if check != "ok":
    sys.exit(f"restore.sh: the backup fails SQLite's integrity check: {check}")
target = sqlite3.connect(target_path, timeout=60)
# The backup API replaces every page of the target (its WAL included) in one step.
source.backup(target, pages=-1)
target.execute("PRAGMA journal_mode=WAL")
target.close()
source.close()
PY
fi
echo "Restored $file. Next: manage.py migrate --noinput, then manage.py check_data." >&2
