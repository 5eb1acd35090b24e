"""deploy/: install.sh in a scratch root (what it writes, idempotence, --dry-run changes nothing),
the systemd units (systemd-analyze verify), the Caddyfile (caddy validate), upgrade.sh --dry-run,
and scripts/deploy_check.sh run on request (DEPLOY_CHECK=1; CI runs the script itself)."""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from .processes import VENV_BIN, run_command, run_python, run_script, start_server, wait_until_ready

# pytest-timeout's 300 s (pyproject.toml) would cut the longer limits these tests give their
# installs, loads and backups on a busy machine; they keep their own.
pytestmark = pytest.mark.timeout(900)

DOMAIN = "study.example.org"
UNITS = ("spotlight-web.service", "spotlight-worker.service", "spotlight-beat.service",
         "spotlight-backup.service", "spotlight-backup.timer")


def _install(*args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE")}
    return run_script("deploy/install.sh", "--domain", DOMAIN, *args, env=env, timeout=timeout)


def _tree(root: Path) -> dict[str, str]:
    """Every file under root (except the code and the database) with its SHA-256."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_file() and not rel.startswith("opt/spotlight/app") and not rel.endswith((".sqlite3", "-wal", "-shm")):
            found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


@pytest.fixture(scope="module")
def scratch_root(tmp_path_factory) -> Path:
    """deploy/install.sh run once into a scratch root, reusing the test run's virtualenv."""
    root = tmp_path_factory.mktemp("scratch-root")
    result = _install("--root", str(root), "--venv", str(VENV_BIN.parent))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    root.joinpath("first-run.log").write_text(result.stdout)
    return root


def test_dry_run_prints_every_step_and_changes_nothing(tmp_path):
    """--dry-run --root DIR: the nine steps and their commands are printed; DIR stays empty."""
    root = tmp_path / "root"
    result = _install("--root", str(root), "--dry-run")
    assert result.returncode == 0, result.stderr
    steps = re.findall(r"^==> (\d)/9 ", result.stdout, flags=re.MULTILINE)
    assert steps == [str(i) for i in range(1, 10)], result.stdout
    assert "manage.py migrate" in result.stdout and "write " in result.stdout
    assert not root.exists() or not any(root.iterdir())


def test_the_system_dry_run_names_the_packages_user_database_and_services():
    """--dry-run for the real system: prints the useradd/createuser, systemctl and Caddy steps
    and leaves /etc/spotlight alone."""
    before = Path("/etc/spotlight").exists()
    result = _install("--dry-run")
    assert result.returncode == 0, result.stderr
    for expected in ("systemctl enable spotlight-web spotlight-worker spotlight-beat",
                     "createdb -O spotlight spotlight", "/etc/caddy/Caddyfile", "/etc/spotlight/env"):
        assert expected in result.stdout, expected
    assert Path("/etc/spotlight").exists() == before


def test_install_writes_the_env_file_with_new_secrets_readable_by_its_owner_only(scratch_root):
    """The env file: mode 600, DEBUG off, HTTPS and one trusted proxy, the domain, and a new
    SECRET_KEY and webhook secret (not .env.example's placeholders)."""
    env_file = scratch_root / "etc/spotlight/env"
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    values = dict(line.split("=", 1) for line in env_file.read_text().splitlines() if "=" in line and not line.startswith("#"))
    assert values["DEBUG"] == "false" and values["HTTPS"] == "true" and values["TRUSTED_PROXY_COUNT"] == "1"
    assert values["ALLOWED_HOSTS"] == DOMAIN and values["CSRF_TRUSTED_ORIGINS"] == f"https://{DOMAIN}"
    assert len(values["SECRET_KEY"]) >= 50 and "change-me" not in values["SECRET_KEY"]
    assert len(values["PROLIFIC_WEBHOOK_SECRET"]) >= 32
    assert values["DATABASE_URL"].startswith("sqlite:///") and str(scratch_root) in values["DATABASE_URL"]
    assert values["SECRET_KEY"] not in (scratch_root / "first-run.log").read_text()


def test_install_migrates_and_collects_the_static_files(scratch_root):
    """The scratch database has every migration; collectstatic wrote the hashed manifest."""
    app = scratch_root / "opt/spotlight/app"
    assert (app / "staticfiles/staticfiles.json").is_file()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "spotlight_study.settings"}
    for line in (scratch_root / "etc/spotlight/env").read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            env[key] = value
    result = run_python("manage.py", "migrate", "--check", cwd=app, env=env, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_units_name_uwsgi_ini_and_pass_systemd_analyze_verify(scratch_root):
    """web runs uWSGI with uwsgi.ini on the loopback (graceful reload on HUP), worker and beat
    run Celery, all as the service user with the env file; systemd-analyze verify accepts them."""
    units = scratch_root / "etc/systemd/system"
    web = (units / "spotlight-web.service").read_text()
    assert "uwsgi --ini uwsgi.ini --http-socket 127.0.0.1:8000" in web and "ExecReload=/bin/kill -HUP $MAINPID" in web
    assert f"--binary-path {VENV_BIN}/python" in web  # the reload re-execs the venv's Python
    assert "celery -A spotlight_study worker" in (units / "spotlight-worker.service").read_text()
    assert "celery -A spotlight_study beat" in (units / "spotlight-beat.service").read_text()
    for name in UNITS:
        text = (units / name).read_text()
        assert "@" not in re.sub(r"#.*", "", text), f"{name} has a placeholder left"
        if name.endswith(".service"):
            assert "User=spotlight" in text, name
            assert f"{scratch_root}/etc/spotlight/env" in text, name  # EnvironmentFile= or --env-file
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed")
    verify = run_command(["systemd-analyze", "verify", *(f"./{n}" for n in UNITS)], cwd=units, timeout=120)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_systemd_analyze_verify_rejects_a_broken_unit(tmp_path):
    """The check above can fail: a unit whose ExecStart is a relative path is rejected."""
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed")
    broken = tmp_path / "broken.service"
    broken.write_text("[Service]\nExecStart=uwsgi --ini uwsgi.ini\nType=sometimes\n")
    verify = run_command(["systemd-analyze", "verify", "./broken.service"], cwd=tmp_path, timeout=120)
    assert verify.returncode != 0


def test_the_caddyfile_proxies_to_uwsgi_and_validates(scratch_root):
    """The Caddyfile: the domain, the static root, the proxy to uWSGI; caddy validate accepts it."""
    caddyfile = scratch_root / "etc/caddy/Caddyfile"
    text = caddyfile.read_text()
    assert f"\n{DOMAIN} {{" in text and "reverse_proxy 127.0.0.1:8000" in text
    assert f"root * {scratch_root}/opt/spotlight/app/staticfiles" in text and "@SITE@" not in text
    if shutil.which("caddy") is None:
        pytest.skip("caddy is not installed")
    result = run_command(["caddy", "validate", "--adapter", "caddyfile", "--config", str(caddyfile)],
                         cwd=None, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_second_run_changes_nothing_and_keeps_the_secrets(scratch_root):
    """Idempotent: run again, every file (env file, units, Caddyfile) is byte for byte the same."""
    before = _tree(scratch_root)
    result = _install("--root", str(scratch_root), "--venv", str(VENV_BIN.parent))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "present: kept as it is" in result.stdout and "No migrations to apply" in result.stdout
    assert result.stdout.count("unchanged ") == len(UNITS) + 1
    after = _tree(scratch_root)
    assert {k: v for k, v in after.items() if not k.endswith("first-run.log")} == \
        {k: v for k, v in before.items() if not k.endswith("first-run.log")}


def test_bad_arguments_are_refused_with_a_message():
    """No --domain, or a domain with a slash: exit 1 naming the problem, nothing done."""
    missing = run_script("deploy/install.sh", "--dry-run", timeout=None)
    assert missing.returncode == 1 and "--domain is required" in missing.stderr
    bad = _install("--dry-run", "--domain", "evil.org/x")
    assert bad.returncode == 1 and "is not a host name" in bad.stderr


def test_upgrade_dry_run_backs_up_before_it_migrates_and_reloads_gracefully():
    """upgrade.sh --dry-run: the backup comes before the checkout and migrate; the web server is
    reloaded (graceful), not restarted."""
    result = run_script("deploy/upgrade.sh", "v9.9.9", "--dry-run", timeout=60)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.index("scripts/backup.sh") < out.index("git checkout") < out.index("manage.py migrate")
    assert "systemctl reload spotlight-web" in out and "systemctl restart spotlight-web" not in out


@pytest.mark.skipif(os.environ.get("DEPLOY_CHECK") != "1", reason="set DEPLOY_CHECK=1 (CI runs scripts/deploy_check.sh itself)")
def test_deploy_check_passes():
    """scripts/deploy_check.sh: every check passes and it stops what it started."""
    result = run_script("scripts/deploy_check.sh", timeout=600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert "all 9 deployment checks passed" in result.stdout


def test_the_web_units_graceful_reload_answers_every_request(scratch_root, tmp_path):
    """uWSGI started as spotlight-web.service starts it (its ExecStart, on a test port): SIGHUP,
    as `systemctl reload` and upgrade.sh send, reloads it while every probe sent meanwhile gets
    200 (none refused), and the server is still up afterwards."""
    import signal
    import socket
    import threading
    import time

    import httpx

    port = 8664
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", port)) == 0:
            pytest.skip(f"port {port} is taken")
    unit = (scratch_root / "etc/systemd/system/spotlight-web.service").read_text()
    command = re.search(r"^ExecStart=(.+)$", unit, flags=re.MULTILINE).group(1).replace(":8000", f":{port}").split()
    env = {**os.environ, "DEBUG": "false", "SECRET_KEY": os.environ["SECRET_KEY"], "WEB_CONCURRENCY": "1",
           "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", "ALLOWED_HOSTS": "127.0.0.1"}
    server = start_server(command, port=port, env=env, log_path=tmp_path / "uwsgi.log", ready_path="/healthz",
                          timeout_s=180)
    url = f"{server.url}/healthz"
    try:
        codes: list[int] = []
        stop = threading.Event()

        def probe_loop():
            while not stop.is_set():
                try:
                    # A hang guard: under a CPU hog one answer during the reload took over 60 s.
                    codes.append(httpx.get(url, timeout=180).status_code)
                except httpx.TransportError as exc:
                    codes.append(-1)
                    print("probe failed:", exc)
                time.sleep(0.1)

        prober = threading.Thread(target=probe_loop)
        prober.start()

        def probes(at_least: int) -> bool:
            return len(codes) >= at_least

        # States, not seconds: some answers before the reload, then the reload in the log, then
        # enough probes after it to span the new binary's start (each waits for its answer).
        wait_until_ready(lambda: probes(3), timeout_s=90, interval_s=0.1, what="the first probes")
        server.process.send_signal(signal.SIGHUP)
        wait_until_ready(lambda: "binary reloading uWSGI" in server.log(), timeout_s=90, what="the reload")
        reloaded_at = len(codes)
        wait_until_ready(lambda: probes(reloaded_at + 20), timeout_s=120, interval_s=0.1,
                         what="probes across the reload")
        after = httpx.get(url, timeout=60)
        stop.set()
        prober.join()
        text = server.log()
        assert "binary reloading uWSGI" in text and "ModuleNotFoundError" not in text, text[-2000:]
        assert after.status_code == 200 and server.process.poll() is None
        assert codes and set(codes) == {200}, codes
    finally:
        server.stop(timeout_s=40)
