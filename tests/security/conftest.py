"""Fixtures of the security tests: a clean throttle cache and the Procfile's web server."""
from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from ..conftest import REPO
from ..processes import (NotReady, Server, free_port, path_with_venv_first, start_process, start_server,
                         wait_until_ready)
from ..stimuli.conftest import database_url_for_subprocess


@pytest.fixture(autouse=True)
def _clean_cache():
    """Throttle counters (Django's default cache) start empty and are not left to other tests."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def _configured_logging():
    """settings.LOGGING as Django configured it at start: the log tests read its handlers and
    must not depend on what an earlier test (an import-linter run, say) did to logging."""
    from django.conf import settings
    from django.utils.log import configure_logging

    configure_logging(settings.LOGGING_CONFIG, settings.LOGGING)
    yield


def procfile_web_command() -> str:
    """The ``web:`` command of the Procfile, exactly as written (a shell command line)."""
    for line in (REPO / "Procfile").read_text().splitlines():
        if line.startswith("web:"):
            return line.removeprefix("web:").strip()
    raise AssertionError("The Procfile has no web: process.")


def serve_sh_server_command() -> str:
    """The command ``scripts/serve.sh`` ends with (``exec uwsgi …``), without ``exec``."""
    lines = [l for l in (REPO / "scripts" / "serve.sh").read_text().splitlines() if l.startswith("exec ")]
    assert len(lines) == 1 and "uwsgi --ini uwsgi.ini" in lines[0], lines
    return lines[0].removeprefix("exec ").strip()


def _start_server(command: str, tmp_path: Path, *, web_concurrency: int = 1) -> Server:
    """Run the shell ``command`` with ``PORT`` set to a free port, production settings (DEBUG
    off), ``web_concurrency`` uWSGI worker processes (``WEB_CONCURRENCY``) and the test
    database; wait until it answers."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env.update(
        {
            "PORT": str(port),
            "WEB_CONCURRENCY": str(web_concurrency),
            "DEBUG": "false",
            "ALLOWED_HOSTS": "127.0.0.1",
            "DATABASE_URL": database_url_for_subprocess(),
            "DJANGO_SETTINGS_MODULE": "spotlight_study.settings",
            "PYTHONUNBUFFERED": "1",
            "LOG_LEVEL": "INFO",
            # The project's virtualenv first, as a platform's PATH would have it.
            "PATH": path_with_venv_first(),
        }
    )
    return start_server(["bash", "-c", f"exec {command}"], port=port, env=env,
                        log_path=tmp_path / f"server-{port}.log")


@pytest.fixture
def procfile_server(transactional_db, tmp_path):
    """The Procfile's web command (uWSGI) on a free port of 127.0.0.1, on the test database.

    The command runs as written, in a shell (so ``${PORT:-8000}`` expands), with one change: its
    ``--http-socket 0.0.0.0:`` becomes ``127.0.0.1:``, because tests listen on the loopback only.
    One worker (``WEB_CONCURRENCY=1``).
    """
    command = procfile_web_command()
    assert "--http-socket 0.0.0.0:${PORT:-8000}" in command, command
    server = _start_server(command.replace("--http-socket 0.0.0.0:", "--http-socket 127.0.0.1:"), tmp_path)
    yield server
    server.stop()


@pytest.fixture
def serve_sh_server(transactional_db, tmp_path):
    """The server command of ``scripts/serve.sh`` (uWSGI with ``uwsgi.ini``), as written."""
    server = _start_server(serve_sh_server_command(), tmp_path)
    yield server
    server.stop()


def csrf_token(html: str) -> str:
    """The ``csrfmiddlewaretoken`` of a rendered form."""
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)



@dataclass
class OwnRedis:
    """A redis-server of the test's own (never the shared one on 6379): ``stop()`` is an outage,
    ``start()`` brings it back on the same port."""

    port: int
    dir: Path
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start the server (no persistence) and wait until it answers PING."""
        import redis

        self.process = start_process(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.dir)],
            cwd=None, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )

        def answers_ping() -> bool:
            try:
                redis.Redis(port=self.port, socket_connect_timeout=0.5).ping()
                return True
            except redis.exceptions.ConnectionError:
                return False

        try:
            wait_until_ready(answers_ping, timeout_s=60, interval_s=0.05, process=self.process,
                             what=f"redis-server on port {self.port}")
        except NotReady as exc:
            pytest.fail(f"redis-server on port {self.port} did not start ({exc})")

    def stop(self) -> None:
        """Stop the server (SIGTERM to this fixture's own process) and wait for it to exit."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
        self.process = None


@pytest.fixture
def own_redis(tmp_path):
    """A fresh redis-server on ``TEST_OWN_REDIS_PORT`` (default: a free port, so that parallel
    workers each get their own), stopped at the end.

    Skips if ``redis-server`` is not installed (fails in CI)."""
    import shutil

    if shutil.which("redis-server") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("redis-server is not installed")
        pytest.skip("redis-server is not installed")
    server = OwnRedis(port=int(os.environ.get("TEST_OWN_REDIS_PORT") or free_port()), dir=tmp_path)
    server.start()
    yield server
    server.stop()
