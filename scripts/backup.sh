#!/usr/bin/env bash
# Back up the study database: scripts/backup.sh [--out DIR] [--keep N] [--env-file FILE]
#
# The database is the one DATABASE_URL names (as the server reads it), or the embedded default's
# SQLite file var/db.sqlite3 when DATABASE_URL is unset. One file per run goes into DIR (default
# var/backups), named spotlight-<UTC time>.pgdump (PostgreSQL: pg_dump -Fc, one consistent
# snapshot taken when it starts) or spotlight-<UTC time>.sqlite3 (SQLite's online backup API, the
# one sqlite3's .backup uses: a consistent copy while the server goes on writing). Beside each, a
# .sha256 file; scripts/restore.sh checks it. The newest N backups are kept (default 14); older
# ones and their checksums are deleted. Safe to run while participants take part.
#
#   --env-file FILE  read DATABASE_URL from FILE first (e.g. /etc/spotlight/env on a VM)
#
# Exit status: 0 with the backup's path on stdout; 1 with a message on stderr otherwise (the
# partial file is removed, nothing older is deleted).
set -euo pipefail
cd "$(dirname "$0")/.."

out=var/backups
keep=14
env_file=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --keep) keep=${2:?--keep needs a number}; shift 2 ;;
    --env-file) env_file=${2:?--env-file needs a file}; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "backup.sh: unknown argument '$1' (try --help)" >&2; exit 1 ;;
  esac
done
case "$keep" in ''|*[!0-9]*|0) echo "backup.sh: --keep must be a whole number of at least 1, not '$keep'" >&2; exit 1 ;; esac
if [ -n "$env_file" ]; then
  [ -r "$env_file" ] || { echo "backup.sh: cannot read $env_file" >&2; exit 1; }
  url_line=$(grep -E '^DATABASE_URL=' "$env_file" | tail -n 1 || true)
  [ -n "$url_line" ] && DATABASE_URL=${url_line#DATABASE_URL=}
fi

# shellcheck source=scripts/dburl.sh
. scripts/dburl.sh
dburl_parse "${DATABASE_URL:-}"

mkdir -p "$out"
stamp=$(date -u +%Y%m%dT%H%M%S.%3NZ)
if [ "$DB_ENGINE" = postgresql ]; then
  need_command pg_dump postgresql-client
  file="$out/spotlight-$stamp.pgdump"
  # -Fc: compressed, restorable table by table; a snapshot, so rows committed after it began
  # are left out and every row committed before it is in.
  pg_dump -Fc --no-owner --no-privileges -d "$DB_URL" -f "$file.partial" || {
    rm -f "$file.partial"; echo "backup.sh: pg_dump failed" >&2; exit 1; }
else
  [ -f "$DB_PATH" ] || { echo "backup.sh: no SQLite database at $DB_PATH" >&2; exit 1; }
  file="$out/spotlight-$stamp.sqlite3"
  python3 - "$DB_PATH" "$file.partial" <<'PY' || { rm -f "$file.partial"; echo "backup.sh: SQLite backup failed" >&2; exit 1; }
import sqlite3, sys
source = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, timeout=60)
target = sqlite3.connect(sys.argv[2])
# pages=-1: the whole database in one step, under one read transaction (a consistent snapshot;
# in WAL mode the server's writers are not blocked).
source.backup(target, pages=-1)
target.close()
source.close()
PY
fi
mv "$file.partial" "$file"
(cd "$(dirname "$file")" && sha256sum "$(basename "$file")" > "$(basename "$file").sha256")

# Keep the newest $keep backups (names sort by time).
mapfile -t backups < <(find "$out" -maxdepth 1 -type f \( -name 'spotlight-*.pgdump' -o -name 'spotlight-*.sqlite3' \) | sort)
excess=$(( ${#backups[@]} - keep ))
for (( i = 0; i < excess; i++ )); do
  rm -f "${backups[$i]}" "${backups[$i]}.sha256"
done
echo "$file"
