#!/usr/bin/env bash
# The whole deployment, brought up and checked on this machine (127.0.0.1 only), then stopped:
#
#   ./scripts/deploy_check.sh
#
# Starts, each its own instance on its own port, in a temporary directory:
#   PostgreSQL (initdb + pg_ctl; 8653), Redis (8654), uWSGI with uwsgi.ini (8655), a Celery
#   worker, and Caddy from Debian's package with deploy/Caddyfile.in and `tls internal`
#   (https://127.0.0.1:8650, and http://127.0.0.1:8651 redirecting to it).
# Then scripts/deploy_check.py drives it over HTTPS, trusting Caddy's local CA: participant flows,
# a signed webhook, an annotator login, a stimulus job through the worker, HSTS, secure cookies,
# the CSP, the redirect from plain HTTP, and the arrival rate limit and the login lockout counting
# the client's address (127.0.0.2, 127.0.0.3) rather than the proxy's. Everything it started is
# stopped at the end, also on failure or Ctrl-C. Missing Debian packages (caddy, redis-server,
# postgresql) are installed when run as root.
#
# Environment: DEPLOY_CHECK_PORT_BASE (default 8650) moves all the ports; KEEP=1 keeps the
# temporary directory (logs) for a look afterwards.
# Exit status 0 when every check passes; 1 otherwise, with the failed check and the logs' tails.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
started=$(date +%s)
base=${DEPLOY_CHECK_PORT_BASE:-8650}
HTTPS_PORT=$base HTTP_PORT=$((base + 1)) PG_PORT=$((base + 3)) REDIS_PORT=$((base + 4)) WEB_PORT=$((base + 5))

# shellcheck source=scripts/dburl.sh
. scripts/dburl.sh
need_command caddy caddy
need_command redis-server redis-server
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$pg_bin" ] || [ ! -x "$pg_bin/initdb" ]; then
  need_command /usr/lib/postgresql/15/bin/initdb postgresql
  pg_bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
fi
./scripts/bootstrap.sh >/dev/null
VENV=${VENV:-.venv}
case "$VENV" in /*) ;; *) VENV="$REPO/$VENV" ;; esac
export PATH="$VENV/bin:$PATH"

for port in $HTTPS_PORT $HTTP_PORT $PG_PORT $REDIS_PORT $WEB_PORT; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "deploy_check: port $port is taken; set DEPLOY_CHECK_PORT_BASE to another free range" >&2; exit 1
  fi
done

work=$(mktemp -d /tmp/spotlight-deploy-check.XXXXXX)
results=$(mktemp /tmp/spotlight-deploy-check-results.XXXXXX)
chmod 755 "$work"
pids=()
as_postgres=()
[ "$(id -u)" = 0 ] && as_postgres=(runuser -u postgres --)
cleanup() {
  local status=$?
  set +e
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -KILL "$pid" 2>/dev/null
  done
  [ -f "$work/pg/data/postmaster.pid" ] && "${as_postgres[@]}" "$pg_bin/pg_ctl" -D "$work/pg/data" -m fast -w stop >/dev/null 2>&1
  if [ "$status" != 0 ]; then
    for log in "$work"/*.log; do [ -f "$log" ] && { echo "--- last lines of $(basename "$log")"; tail -n 25 "$log"; }; done >&2
  fi
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
  echo "deploy_check: stopped everything it started ($(( $(date +%s) - started )) s in all)"
  # Last, in the plain form CI reads: the checks that passed and failed.
  passed=$(grep -c '^ok  ' "$results" 2>/dev/null || true)
  failed=$(grep -c '^FAILED  ' "$results" 2>/dev/null || true)
  [ "$status" != 0 ] && [ "${failed:-0}" = 0 ] && failed=1
  echo "deploy_check: ${passed:-0} passed, ${failed:-0} failed"
  rm -f "$results"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

wait_for() { # wait_for SECONDS DESCRIPTION COMMAND...
  local limit=$1 what=$2; shift 2
  for _ in $(seq 1 $((limit * 4))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.25; done
  echo "deploy_check: $what did not come up within $limit s" >&2; return 1
}

echo "==> PostgreSQL on 127.0.0.1:$PG_PORT"
mkdir -p "$work/pg"
[ "$(id -u)" = 0 ] && chown postgres:postgres "$work/pg"
"${as_postgres[@]}" "$pg_bin/initdb" -D "$work/pg/data" -U postgres --auth=trust -E UTF8 >"$work/initdb.log" 2>&1
"${as_postgres[@]}" "$pg_bin/pg_ctl" -D "$work/pg/data" -l "$work/pg/postgres.log" -w -t 60 \
  -o "-p $PG_PORT -c listen_addresses=127.0.0.1 -k $work/pg -c fsync=off" start >/dev/null
"$pg_bin/createdb" -h 127.0.0.1 -p "$PG_PORT" -U postgres spotlight

echo "==> Redis on 127.0.0.1:$REDIS_PORT"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --daemonize no \
  >"$work/redis.log" 2>&1 &
pids+=($!)
wait_for 20 Redis redis-cli -p "$REDIS_PORT" ping

# What deploy/install.sh writes to /etc/spotlight/env, for this machine's ports.
export DJANGO_SETTINGS_MODULE=spotlight_study.settings
export DEBUG=false HTTPS=true TRUSTED_PROXY_COUNT=1
export SECRET_KEY
SECRET_KEY=$(python -c 'import secrets; print(secrets.token_urlsafe(50))')
export PROLIFIC_WEBHOOK_SECRET
PROLIFIC_WEBHOOK_SECRET=$(python -c 'import secrets; print(secrets.token_urlsafe(32))')
export ALLOWED_HOSTS=127.0.0.1 CSRF_TRUSTED_ORIGINS="https://127.0.0.1:$HTTPS_PORT"
export PROLIFIC_STUDY_BASE_URL="https://127.0.0.1:$HTTPS_PORT"
export DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/spotlight"
export CELERY_BROKER_URL="redis://127.0.0.1:$REDIS_PORT/0" CACHE_URL="redis://127.0.0.1:$REDIS_PORT/1"
export STIMULI_JOB_RUNNER=celery
export STATICFILES_BACKEND=whitenoise.storage.CompressedManifestStaticFilesStorage WHITENOISE_USE_FINDERS=false
export ANALYSIS_ROOT="$work/analysis"
# Small limits, so that the checks reach them in a few requests.
export ENTRY_RATE_LIMIT=5/h AXES_FAILURE_LIMIT=3
export WEB_CONCURRENCY=2 PYTHONUNBUFFERED=1

echo "==> Migrate, collect static files, the demo study and two logins"
python manage.py migrate --noinput >"$work/migrate.log" 2>&1
python manage.py collectstatic --noinput --verbosity 0 >>"$work/migrate.log" 2>&1
python manage.py import_study fixtures/spotlight-replication.yaml --if-missing >>"$work/migrate.log" 2>&1
export CHECK_RESEARCHER_PASSWORD CHECK_ANNOTATOR_PASSWORD
CHECK_RESEARCHER_PASSWORD=$(python -c 'import secrets; print(secrets.token_urlsafe(16))')
CHECK_ANNOTATOR_PASSWORD=$(python -c 'import secrets; print(secrets.token_urlsafe(16))')
python manage.py shell -c "
import os
from django.contrib.auth.models import Group, User
from spotlight_study.studies.members import member_add
from spotlight_study.studies.models import Study
r = User.objects.create_user('check-researcher', password=os.environ['CHECK_RESEARCHER_PASSWORD'], is_staff=True, is_superuser=True)
r.groups.add(Group.objects.get_or_create(name='researchers')[0])
a = User.objects.create_user('check-annotator', password=os.environ['CHECK_ANNOTATOR_PASSWORD'])
a.groups.add(Group.objects.get_or_create(name='annotators')[0])
# Roles are per study: the annotator annotates the demo study.
member_add(study=Study.objects.get(slug='spotlight-replication'), username='check-annotator', role='annotator')
" >>"$work/migrate.log" 2>&1

echo "==> uWSGI on 127.0.0.1:$WEB_PORT, a Celery worker"
uwsgi --ini uwsgi.ini --http-socket "127.0.0.1:$WEB_PORT" >"$work/uwsgi.log" 2>&1 &
pids+=($!)
celery -A spotlight_study worker --loglevel INFO --concurrency 1 --without-heartbeat --without-gossip --without-mingle \
  >"$work/worker.log" 2>&1 &
pids+=($!)
wait_for 60 uWSGI bash -c "exec 3<>/dev/tcp/127.0.0.1/$WEB_PORT"

echo "==> Caddy (tls internal) on https://127.0.0.1:$HTTPS_PORT, http://127.0.0.1:$HTTP_PORT"
global="	admin off
	http_port $HTTP_PORT
	https_port $HTTPS_PORT
	default_bind 127.0.0.1
	default_sni 127.0.0.1
	skip_install_trust
	storage file_system $work/caddy
	log {
		output file $work/caddy-errors.log
	}"
text=$(cat deploy/Caddyfile.in)
text=${text//@GLOBAL@/$global}
text=${text//@SITE@/127.0.0.1:$HTTPS_PORT}
text=${text//@TLS@/	tls internal}
text=${text//@UPSTREAM@/127.0.0.1:$WEB_PORT}
text=${text//@STATIC_ROOT@/$REPO/staticfiles}
printf '%s\n' "$text" > "$work/Caddyfile"
caddy validate --adapter caddyfile --config "$work/Caddyfile" >"$work/caddy-validate.log" 2>&1
HOME=$work XDG_DATA_HOME=$work/xdg-data XDG_CONFIG_HOME=$work/xdg-config \
  caddy run --adapter caddyfile --config "$work/Caddyfile" >"$work/caddy.log" 2>&1 &
pids+=($!)
ca="$work/caddy/pki/authorities/local/root.crt"
wait_for 60 "Caddy's local CA" test -s "$ca"
wait_for 60 "HTTPS through Caddy" curl -fsS --cacert "$ca" "https://127.0.0.1:$HTTPS_PORT/healthz"
wait_for 60 "the Celery worker" grep -q "ready" "$work/worker.log"

echo "==> The checks (scripts/deploy_check.py)"
python scripts/deploy_check.py --https "https://127.0.0.1:$HTTPS_PORT" --http "http://127.0.0.1:$HTTP_PORT" \
  --ca "$ca" --slug spotlight-replication 2>&1 | tee "$results"
[ "${PIPESTATUS[0]}" = 0 ]
