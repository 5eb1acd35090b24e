# Sourced by scripts/backup.sh and scripts/restore.sh: what DATABASE_URL names.
#
# dburl_parse URL sets DB_ENGINE (postgresql or sqlite), DB_URL (a libpq URI for pg_dump, psql
# and pg_restore) and DB_PATH (the SQLite file). An empty URL is the embedded default,
# var/db.sqlite3, as in settings.py. Other engines stop with a message.
# need_command CMD PACKAGE installs Debian's PACKAGE when CMD is missing (as root), else stops.

dburl_parse() {
  local url=$1
  DB_ENGINE="" DB_URL="" DB_PATH=""
  case "$url" in
    "") DB_ENGINE=sqlite; DB_PATH=var/db.sqlite3 ;;
    sqlite://*)
      DB_ENGINE=sqlite
      # django-environ's reading: sqlite:////abs/path is /abs/path, sqlite:///rel is rel.
      local rest=${url#sqlite://}
      rest=${rest%%\?*}
      DB_PATH=${rest#/}
      [ -n "$DB_PATH" ] && [ "$DB_PATH" != ":memory:" ] || { echo "DATABASE_URL names an in-memory SQLite database: nothing to back up or restore" >&2; exit 1; }
      ;;
    postgres://*|postgresql://*|pgsql://*|psql://*)
      DB_ENGINE=postgresql
      DB_URL="postgresql://${url#*://}"
      ;;
    *) echo "DATABASE_URL: only PostgreSQL and SQLite are supported (got '${url%%://*}://...')" >&2; exit 1 ;;
  esac
}

need_command() {
  local cmd=$1 package=$2
  command -v "$cmd" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing Debian's $package (for $cmd)..." >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null) || {
      echo "could not install $package" >&2; exit 1; }
  else
    echo "$cmd is missing: install $package (apt-get install $package)" >&2; exit 1
  fi
}
