"""A throwaway PostgreSQL cluster in a temporary directory, for tests that stop the database.

The machine's shared PostgreSQL (port 5432) is never stopped: tests that need a database to
go away start their own cluster with initdb and pg_ctl on a port of their own, owned by the
``postgres`` user when the tests run as root (initdb refuses root).
"""
from __future__ import annotations

import glob
import os
import shutil
import tempfile
from pathlib import Path

from .processes import NotReady, run_command, wait_until_ready


def postgres_bindir() -> Path | None:
    """The directory of Debian's (or any) initdb and pg_ctl, or None when PostgreSQL is absent."""
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), reverse=True)
    if candidates:
        return Path(candidates[0]).parent
    found = shutil.which("pg_ctl")
    return Path(found).parent if found else None


class Cluster:
    """A PostgreSQL cluster on 127.0.0.1:``port`` with a trusted ``postgres`` superuser.

    ``start()`` and ``stop()`` may be called repeatedly; ``destroy()`` stops it and removes its
    directory. Raises RuntimeError when initdb or pg_ctl fails (the message has their output).
    """

    def __init__(self, port: int):
        bindir = postgres_bindir()
        if bindir is None:
            raise RuntimeError("PostgreSQL's initdb/pg_ctl are not installed")
        self.bindir = bindir
        self.port = port
        self.root = Path(tempfile.mkdtemp(prefix=f"spotlight-pg-{port}-"))
        self.data = self.root / "data"
        self.url = f"postgres://postgres@127.0.0.1:{port}/postgres"
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            shutil.chown(self.root, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8")

    def _run(self, tool: str, *args: str) -> None:
        command = [str(self.bindir / tool), *args]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        result = run_command(command, cwd=None, timeout=120)
        if result.returncode != 0:
            raise RuntimeError(f"{tool} failed: {result.stdout}{result.stderr}")

    def start(self) -> None:
        """Start the server and wait until it accepts connections (at most 60 s)."""
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} -c fsync=off"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "log"), "-o", options,
                  "-w", "-t", "60", "start")
        probe = [str(self.bindir / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port)]
        try:
            wait_until_ready(lambda: run_command(probe, cwd=None, timeout=None).returncode == 0,
                             timeout_s=60, interval_s=0.2, what="the throwaway PostgreSQL")
        except NotReady:
            raise RuntimeError("the throwaway PostgreSQL did not accept connections within 60 s") from None

    def stop(self) -> None:
        """Stop the server (fast mode: open connections are cut, as in an outage)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def destroy(self) -> None:
        """Stop the server if it runs and remove the cluster's directory."""
        try:
            self.stop()
        except RuntimeError:
            pass
        shutil.rmtree(self.root, ignore_errors=True)
