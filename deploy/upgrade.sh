#!/usr/bin/env bash
# Upgrade a server set up by deploy/install.sh to a release tag, as root:
#
#   /opt/spotlight/app/deploy/upgrade.sh v1.4.0 [--dry-run]
#
# Steps: fetch the tags; back up the database (scripts/backup.sh, kept in
# /var/lib/spotlight/backups); check out TAG; make the virtualenv exactly requirements.lock
# (bootstrap.sh --exact: packages in no lock, e.g. an older release's test tools, removed);
# migrate; collect the static files; reload uWSGI gracefully (SIGHUP: each worker finishes its
# request, the listening socket stays open, so arrivals wait instead of failing) and restart the
# worker and beat (Celery's warm shutdown); wait until /readyz answers 200.
#
# The commit it upgraded from is written to /var/lib/spotlight/previous-release. To roll back:
#   deploy/upgrade.sh "$(cat /var/lib/spotlight/previous-release)"
# and, if the new release's migrations must be undone too, restore the backup this run took
# (docs/deploy.md, "Rollback").
set -euo pipefail
APP_DIR=$(cd "$(dirname "$0")/.." && pwd)

tag="" dry_run=0 web_port=8000
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) dry_run=1; shift ;;
    --web-port) web_port=${2:?--web-port needs a port}; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "upgrade.sh: unknown option '$1' (try --help)" >&2; exit 1 ;;
    *) tag=$1; shift ;;
  esac
done
[ -n "$tag" ] || { echo "usage: deploy/upgrade.sh TAG [--dry-run]" >&2; exit 1; }
[ "$(id -u)" = 0 ] || [ "$dry_run" = 1 ] || { echo "upgrade.sh: run as root (or with --dry-run)" >&2; exit 1; }

USER_NAME=spotlight
VENV=/opt/spotlight/venv
ENV_FILE=/etc/spotlight/env
STATE_DIR=/var/lib/spotlight
run() { if [ "$dry_run" = 1 ]; then echo "    \$ $*"; else "$@"; fi; }
as_service_user() {
  run runuser -u "$USER_NAME" -- bash -c "set -a; . '$ENV_FILE'; set +a; cd '$APP_DIR'; $*"
}
cd "$APP_DIR"

echo "==> 1/6 Fetch the tags; check that $tag exists"
run git fetch --tags --quiet origin
if [ "$dry_run" = 0 ]; then
  git rev-parse --verify --quiet "$tag^{commit}" >/dev/null || { echo "upgrade.sh: no tag or commit '$tag'" >&2; exit 1; }
  previous=$(git rev-parse HEAD)
  echo "    from $(git describe --tags --always "$previous") to $tag"
fi

echo "==> 2/6 Back up the database first"
run runuser -u "$USER_NAME" -- "$APP_DIR/scripts/backup.sh" --env-file "$ENV_FILE" --out "$STATE_DIR/backups" --keep 14

echo "==> 3/6 Check out $tag and install its requirements.lock"
[ "$dry_run" = 0 ] && echo "$previous" > "$STATE_DIR/previous-release"
run git checkout --quiet --detach "$tag"
run env VENV="$VENV" "$APP_DIR/scripts/bootstrap.sh" --exact

echo "==> 4/6 Migrate and collect the static files"
as_service_user "'$VENV/bin/python' manage.py migrate --noinput"
as_service_user "'$VENV/bin/python' manage.py collectstatic --noinput --verbosity 0"

echo "==> 5/6 Reload uWSGI gracefully; restart the worker and beat"
# New units from the release (deploy/systemd) are installed by re-running deploy/install.sh.
run systemctl reload spotlight-web
run systemctl restart spotlight-worker spotlight-beat

echo "==> 6/6 Wait for /readyz"
if [ "$dry_run" = 0 ]; then
  for _ in $(seq 1 60); do
    curl -fsS "http://127.0.0.1:$web_port/readyz" >/dev/null 2>&1 && { echo "    ready: $tag is live"; exit 0; }
    sleep 1
  done
  echo "upgrade.sh: /readyz did not answer 200 within 60 s (journalctl -u spotlight-web); roll back with deploy/upgrade.sh $previous" >&2
  exit 1
fi
