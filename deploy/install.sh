#!/usr/bin/env bash
# Set up a study server on a fresh Debian 12 or Ubuntu 22.04/24.04 VM, as root:
#
#   git clone <repository> /opt/spotlight/app
#   /opt/spotlight/app/deploy/install.sh --domain study.example.org [--email you@example.org]
#
# It installs Debian's PostgreSQL, Redis and Caddy; a virtualenv from requirements.lock (the
# runtime lock: no test tools);
# /etc/spotlight/env from .env.example with a new SECRET_KEY and webhook secret (readable by the
# service user only); migrates and collects the static files; writes and starts the systemd units
# spotlight-web (uWSGI with uwsgi.ini), spotlight-worker, spotlight-beat and a daily
# spotlight-backup timer; and a Caddyfile for automatic HTTPS on the domain. docs/deploy.md.
#
# Idempotent: run it again (after an edit, or to repair) and it changes only what is missing or
# different. The env file, once written, is kept as it is (its secrets stay); the units and the
# Caddyfile are rewritten from deploy/.
#
# Options:
#   --domain NAME      the public host name (DNS must point to this VM for the certificate)
#   --email ADDRESS    the ACME account e-mail for certificate expiry notices (optional)
#   --dry-run          print the steps and commands, change nothing
#   --root DIR         install into the scratch root DIR instead of /: paths below DIR, no
#                      packages, users, PostgreSQL roles or services touched (SQLite instead);
#                      for trying the script on a development machine
#   --app-dir DIR      where the code lives (default: the checkout holding this script; with
#                      --root, a clone of its committed HEAD in DIR/opt/spotlight/app)
#   --web-port PORT    uWSGI's port on 127.0.0.1 (default 8000)
#   --venv DIR         the virtualenv (default /opt/spotlight/venv, below DIR with --root); an
#                      existing one with the same requirements.lock is reused as it is
set -euo pipefail
SOURCE=$(cd "$(dirname "$0")/.." && pwd)

domain="" email="" dry_run=0 root="" app_dir="" web_port=8000 venv=""
while [ $# -gt 0 ]; do
  case "$1" in
    --domain) domain=${2:?--domain needs a host name}; shift 2 ;;
    --email) email=${2:?--email needs an address}; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    --root) root=${2:?--root needs a directory}; shift 2 ;;
    --app-dir) app_dir=${2:?--app-dir needs a directory}; shift 2 ;;
    --web-port) web_port=${2:?--web-port needs a port}; shift 2 ;;
    --venv) venv=${2:?--venv needs a directory}; shift 2 ;;
    -h|--help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown argument '$1' (try --help)" >&2; exit 1 ;;
  esac
done
[ -n "$domain" ] || { echo "install.sh: --domain is required (the host name participants will open)" >&2; exit 1; }
case "$domain" in *[!A-Za-z0-9.-]*|.*|*.) echo "install.sh: '$domain' is not a host name" >&2; exit 1 ;; esac
case "$web_port" in ''|*[!0-9]*) echo "install.sh: --web-port must be a number" >&2; exit 1 ;; esac
if [ -n "$root" ]; then
  [ "$dry_run" = 1 ] || mkdir -p "$root"
  root=$(cd "$root" 2>/dev/null && pwd || echo "$root")
fi
if [ -z "$root" ] && [ "$(id -u)" != 0 ] && [ "$dry_run" = 0 ]; then
  echo "install.sh: run as root (or try it with --dry-run, or --root DIR)" >&2; exit 1
fi

R=$root
USER_NAME=spotlight
APP_DIR=${app_dir:-$([ -n "$R" ] && echo "$R/opt/spotlight/app" || echo "$SOURCE")}
VENV=${venv:-$R/opt/spotlight/venv}
ENV_FILE=$R/etc/spotlight/env
STATE_DIR=$R/var/lib/spotlight
UNIT_DIR=$R/etc/systemd/system
CADDYFILE=$R/etc/caddy/Caddyfile
started=$(date +%s)

step() { echo "==> $*"; }
skip() { echo "    skipped (scratch root): $*"; }
run() {
  if [ "$dry_run" = 1 ]; then echo "    \$ $*"; else "$@"; fi
}
# install_file SRC DEST MODE [OWNER]: copy when different (idempotent), report either way.
install_file() {
  local src=$1 dest=$2 mode=$3 owner=${4:-}
  if [ "$dry_run" = 1 ]; then echo "    write $dest (mode $mode${owner:+, owner $owner})"; return; fi
  mkdir -p "$(dirname "$dest")"
  if [ -f "$dest" ] && cmp -s "$src" "$dest"; then
    echo "    unchanged $dest"
  else
    install -m "$mode" "$src" "$dest"
    echo "    wrote $dest"
  fi
  [ -n "$owner" ] && chown "$owner" "$dest"
  return 0
}
as_service_user() {
  # A command in APP_DIR with the env file loaded, as the service user (or as the caller in a
  # scratch root).
  local cmd="set -a; . '$ENV_FILE'; set +a; cd '$APP_DIR'; $*"
  if [ -n "$R" ]; then run bash -c "$cmd"; else run runuser -u "$USER_NAME" -- bash -c "$cmd"; fi
}
# render TEMPLATE: the template with @NAME@ placeholders filled in, on stdout.
render() {
  local text
  text=$(cat "$1")
  text=${text//@USER@/$USER_NAME}
  text=${text//@APP_DIR@/$APP_DIR}
  text=${text//@VENV@/$VENV}
  text=${text//@ENV_FILE@/$ENV_FILE}
  text=${text//@STATE_DIR@/$STATE_DIR}
  text=${text//@WEB_PORT@/$web_port}
  text=${text//@SITE@/$domain}
  text=${text//@TLS@/}
  text=${text//@UPSTREAM@/127.0.0.1:$web_port}
  text=${text//@STATIC_ROOT@/$APP_DIR/staticfiles}
  text=${text//@GLOBAL@/${email:+	email $email}}
  printf '%s\n' "$text"
}
# The release's own templates; in a dry run before the clone exists, this checkout's.
templates() { if [ -d "$APP_DIR/deploy" ]; then echo "$APP_DIR/deploy"; else echo "$SOURCE/deploy"; fi; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "Installing the Spotlight study server for https://$domain${R:+ into the scratch root $R}${dry_run:+}$([ "$dry_run" = 1 ] && echo ' (dry run: nothing is changed)')"

step "1/9 Debian packages: PostgreSQL, Redis, Caddy, Python's venv, git"
packages=(postgresql redis-server caddy python3-venv git ca-certificates)
if [ -n "$R" ]; then
  skip "apt-get install ${packages[*]}"
else
  missing=()
  for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ]; then
    run apt-get update -qq
    run env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  else
    echo "    all installed"
  fi
fi

step "2/9 The service user '$USER_NAME' and its directories"
if [ -n "$R" ]; then
  skip "useradd --system $USER_NAME"
elif id "$USER_NAME" >/dev/null 2>&1; then
  echo "    user exists"
else
  run useradd --system --home-dir "$STATE_DIR" --shell /usr/sbin/nologin "$USER_NAME"
fi
run mkdir -p "$STATE_DIR/backups" "$(dirname "$ENV_FILE")"

step "3/9 The code in $APP_DIR"
if [ -d "$APP_DIR/.git" ] || [ -f "$APP_DIR/manage.py" ]; then
  echo "    present"
else
  run git clone --quiet "$SOURCE" "$APP_DIR"
fi
run mkdir -p "$APP_DIR/var"
[ -z "$R" ] && run chown -R "$USER_NAME:$USER_NAME" "$APP_DIR/var" "$STATE_DIR"

step "4/9 The virtualenv $VENV from requirements.lock"
run env VENV="$VENV" "$APP_DIR/scripts/bootstrap.sh"

step "5/9 PostgreSQL: role and database '$USER_NAME' (peer authentication over the Unix socket)"
if [ -n "$R" ]; then
  skip "createuser $USER_NAME; createdb -O $USER_NAME $USER_NAME (the scratch root uses SQLite)"
  database_url="sqlite:///$STATE_DIR/db.sqlite3"
else
  database_url="postgres://$USER_NAME@/$USER_NAME?host=/var/run/postgresql"
  run systemctl enable --now postgresql redis-server
  if [ "$dry_run" = 1 ]; then
    echo "    \$ createuser $USER_NAME; createdb -O $USER_NAME $USER_NAME (when missing)"
  else
    if [ "$(runuser -u postgres -- psql -XtAc "SELECT 1 FROM pg_roles WHERE rolname = '$USER_NAME'")" != 1 ]; then
      runuser -u postgres -- createuser "$USER_NAME"
    fi
    if [ "$(runuser -u postgres -- psql -XtAc "SELECT 1 FROM pg_database WHERE datname = '$USER_NAME'")" != 1 ]; then
      runuser -u postgres -- createdb -O "$USER_NAME" "$USER_NAME"
    fi
    echo "    role and database present"
  fi
fi

step "6/9 The environment file $ENV_FILE (kept if present)"
if [ -f "$ENV_FILE" ]; then
  echo "    present: kept as it is (secrets unchanged)"
  for required in "HTTPS=true" "TRUSTED_PROXY_COUNT=1"; do
    grep -qx "$required" "$ENV_FILE" || echo "    warning: $ENV_FILE has no line '$required' (Caddy in front needs it)" >&2
  done
elif [ "$dry_run" = 1 ]; then
  echo "    write $ENV_FILE from .env.example with a new SECRET_KEY, PROLIFIC_WEBHOOK_SECRET and PROLIFIC_CREDENTIALS_KEYS (mode 600, owner $USER_NAME)"
else
  secret_key=$(python3 -c 'import secrets; print(secrets.token_urlsafe(50))')
  webhook_secret=$(python3 -c 'import secrets; print(secrets.token_urlsafe(32))')
  # A Fernet key (32 random bytes, URL-safe base64) for studies' own Prolific credentials.
  credentials_key=$(python3 -c 'import base64, os; print(base64.urlsafe_b64encode(os.urandom(32)).decode())')
  # .env.example's production values, with this server's names and fresh secrets.
  sed -e "s|^SECRET_KEY=.*|SECRET_KEY=$secret_key|" \
      -e "s|^PROLIFIC_WEBHOOK_SECRET=.*|PROLIFIC_WEBHOOK_SECRET=$webhook_secret|" \
      -e "s|^PROLIFIC_CREDENTIALS_KEYS=.*|PROLIFIC_CREDENTIALS_KEYS=$credentials_key|" \
      -e "s|^ALLOWED_HOSTS=.*|ALLOWED_HOSTS=$domain|" \
      -e "s|^CSRF_TRUSTED_ORIGINS=.*|CSRF_TRUSTED_ORIGINS=https://$domain|" \
      -e "s|^PROLIFIC_STUDY_BASE_URL=.*|PROLIFIC_STUDY_BASE_URL=https://$domain|" \
      -e "s|^DATABASE_URL=.*|DATABASE_URL=$database_url|" \
      -e "s|^DEBUG=.*|DEBUG=false|" -e "s|^HTTPS=.*|HTTPS=true|" \
      -e "s|^TRUSTED_PROXY_COUNT=.*|TRUSTED_PROXY_COUNT=1|" \
      "$APP_DIR/.env.example" > "$tmp/env"
  {
    echo "# The analysis reports and the beat schedule live outside the code."
    echo "ANALYSIS_ROOT=$STATE_DIR/analysis"
    # Caddy serves /static/ from STATIC_ROOT; WhiteNoise needs no finders in production.
    echo "WHITENOISE_USE_FINDERS=false"
  } >> "$tmp/env"
  if [ -n "$R" ]; then install_file "$tmp/env" "$ENV_FILE" 600; else install_file "$tmp/env" "$ENV_FILE" 600 "$USER_NAME:$USER_NAME"; fi
  echo "    generated SECRET_KEY, PROLIFIC_WEBHOOK_SECRET and PROLIFIC_CREDENTIALS_KEYS (shown nowhere; register the webhook secret on Prolific from this file)"
fi

step "7/9 Migrate and collect the static files"
as_service_user "'$VENV/bin/python' manage.py migrate --noinput"
as_service_user "'$VENV/bin/python' manage.py collectstatic --noinput --verbosity 0"

step "8/9 systemd units: spotlight-web (uWSGI), spotlight-worker, spotlight-beat, spotlight-backup.timer"
for unit in spotlight-web.service spotlight-worker.service spotlight-beat.service spotlight-backup.service spotlight-backup.timer; do
  render "$(templates)/systemd/$unit.in" > "$tmp/$unit"
  install_file "$tmp/$unit" "$UNIT_DIR/$unit" 644
done
if command -v systemd-analyze >/dev/null 2>&1 && [ "$dry_run" = 0 ]; then
  # Checks each unit's syntax and that its programs exist (the users exist only on a real VM).
  if [ -n "$R" ]; then
    (cd "$UNIT_DIR" && systemd-analyze verify ./spotlight-*.service ./spotlight-backup.timer 2>&1 | grep -v -e "^$" -e "User=\|Group=\|spotlight: " >&2) || true
  else
    systemd-analyze verify "$UNIT_DIR"/spotlight-*.service "$UNIT_DIR"/spotlight-backup.timer
  fi
fi
if [ -n "$R" ]; then
  skip "systemctl daemon-reload; systemctl enable --now spotlight-web spotlight-worker spotlight-beat spotlight-backup.timer"
else
  run systemctl daemon-reload
  run systemctl enable spotlight-web spotlight-worker spotlight-beat spotlight-backup.timer
  # Restarted when running: new units or settings take effect (the web restart is graceful).
  run systemctl restart spotlight-web spotlight-worker spotlight-beat
  run systemctl start spotlight-backup.timer
fi

step "9/9 Caddy: automatic HTTPS for $domain, static files, proxy to uWSGI"
if [ -f "$CADDYFILE" ] && ! grep -q "deploy/install.sh from deploy/Caddyfile.in" "$CADDYFILE" && [ ! -f "$CADDYFILE.before-spotlight" ]; then
  run cp "$CADDYFILE" "$CADDYFILE.before-spotlight"
fi
render "$(templates)/Caddyfile.in" > "$tmp/Caddyfile"
install_file "$tmp/Caddyfile" "$CADDYFILE" 644
if command -v caddy >/dev/null 2>&1 && [ "$dry_run" = 0 ]; then
  caddy validate --adapter caddyfile --config "$CADDYFILE" >/dev/null 2>"$tmp/caddy.err" \
    || { cat "$tmp/caddy.err" >&2; echo "install.sh: the Caddyfile does not validate" >&2; exit 1; }
  echo "    caddy validate: valid"
fi
if [ -n "$R" ]; then
  skip "systemctl reload caddy"
else
  run systemctl enable caddy
  run systemctl reload-or-restart caddy
  if [ "$dry_run" = 0 ]; then
    for _ in $(seq 1 30); do
      curl -fsS "http://127.0.0.1:$web_port/readyz" >/dev/null 2>&1 && break; sleep 1
    done
    curl -fsS "http://127.0.0.1:$web_port/readyz" || { echo "install.sh: /readyz does not answer 200: journalctl -u spotlight-web" >&2; exit 1; }
    echo
  fi
fi

echo "Done in $(( $(date +%s) - started )) s. Next (docs/deploy.md): create your researcher login with"
echo "  runuser -u $USER_NAME -- bash -c 'set -a; . $ENV_FILE; cd $APP_DIR; $VENV/bin/python manage.py createsuperuser'"
echo "then open https://$domain/researcher/ and import your study file."
