"""Starting the processes a test needs: this Python on a script or ``-c`` code, a program or a
shell script, a Celery worker, a server that must answer before the test goes on, and a free
port for it; and stopping them again.

One module for what many test files used to spell out for themselves (the interpreter, the
repository as working directory, captured text output, a timeout, a readiness wait, SIGTERM
then SIGKILL), so that a change to how the suite starts processes is made once.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parent.parent
#: The ``bin/`` directory of the virtualenv running the tests (its ``python``, ``uwsgi``,
#: ``celery``); its parent is the virtualenv itself.
VENV_BIN = Path(sys.executable).parent

Cwd = Path | str | None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listened on a moment ago (the kernel's choice).

    Once this returns, nothing listens there: a client that connects is refused, and a server
    started right away can bind it.
    """
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def accepts_connections(port: int, timeout_s: float = 1) -> bool:
    """Whether something on 127.0.0.1:``port`` accepts a TCP connection within ``timeout_s``
    seconds (the connection is closed at once). Never raises for a refused or timed-out
    connection: returns False."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout_s):
            return True
    except OSError:
        return False


def path_with_venv_first() -> str:
    """This environment's ``PATH`` with :data:`VENV_BIN` in front, as a platform's ``PATH``
    would have it, so that a command named without a path (``uwsgi``) is the project's."""
    return f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"


def run_command(argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: Cwd = REPO,
                timeout: float | None = 120,
                merge_stderr: bool = False) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` and wait; stdout and stderr captured as text (both in ``stdout`` when
    ``merge_stderr``, in the order written, and ``stderr`` is then None).

    ``env``: the whole environment (None: this process's). ``cwd``: the working directory,
    the repository by default (None: this process's). ``timeout``: seconds, None for no limit.
    A non-zero exit is returned, not raised; after ``timeout`` seconds the process is killed
    and ``subprocess.TimeoutExpired`` raised. ``FileNotFoundError`` if the program is absent.
    """
    stderr = subprocess.STDOUT if merge_stderr else subprocess.PIPE
    return subprocess.run(list(argv), cwd=cwd, env=None if env is None else dict(env),
                          stdout=subprocess.PIPE, stderr=stderr, text=True, timeout=timeout,
                          check=False)


def run_python(*args: str, env: Mapping[str, str] | None = None, cwd: Cwd = REPO,
               timeout: float | None = 120,
               merge_stderr: bool = False) -> subprocess.CompletedProcess[str]:
    """Run this interpreter with ``args`` (``"-c", code`` or ``"-m", module`` or a script) in the
    repository (or ``cwd``) and wait: :func:`run_command` with ``sys.executable`` first, same
    arguments, return value and exceptions."""
    return run_command([sys.executable, *args], env=env, cwd=cwd, timeout=timeout,
                       merge_stderr=merge_stderr)


def run_script(script: str, *args: str, env: Mapping[str, str] | None = None,
               timeout: float | None = 120) -> subprocess.CompletedProcess[str]:
    """Run the shell script ``script`` (a path relative to the repository, such as
    ``"scripts/backup.sh"``) with bash and ``args``, in the repository, and wait:
    :func:`run_command` with the same ``env`` and ``timeout`` (seconds, None for no limit),
    return value and exceptions."""
    return run_command(["bash", script, *args], env=env, timeout=timeout)


def start_process(argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: Cwd = REPO,
                  log_path: Path | None = None, **popen_kwargs) -> subprocess.Popen:
    """Start ``argv`` and return at once, without waiting for anything.

    ``env`` and ``cwd`` as in :func:`run_command`. With ``log_path``, stdout and stderr go to
    that file (created or emptied); ``popen_kwargs`` go to ``subprocess.Popen`` (``stdout``,
    ``text``, ``start_new_session``, ...). ``FileNotFoundError`` if the program is absent.
    """
    if log_path is None:
        return subprocess.Popen(list(argv), cwd=cwd, env=None if env is None else dict(env), **popen_kwargs)
    # The child keeps its own copy of the descriptor; the parent's is closed at once.
    with log_path.open("w") as log_file:
        return subprocess.Popen(list(argv), cwd=cwd, env=None if env is None else dict(env),
                                **{"stdout": log_file, "stderr": subprocess.STDOUT, **popen_kwargs})


def start_python(*args: str, env: Mapping[str, str], log_path: Path | None = None,
                 **popen_kwargs) -> subprocess.Popen:
    """Start this interpreter with ``args`` in the repository and return at once; stdout and
    stderr go to one text pipe, or to the file ``log_path`` when given, unless ``popen_kwargs``
    say otherwise. The returned process is not waited for: stop it with :func:`stop_process`."""
    if log_path is None:
        popen_kwargs = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT, "text": True, **popen_kwargs}
    return start_process([sys.executable, *args], env=env, log_path=log_path, **popen_kwargs)


def start_celery_worker(name_prefix: str, *, env: Mapping[str, str], log_path: Path | None = None,
                        **popen_kwargs) -> subprocess.Popen:
    """Start ``celery -A spotlight_study worker`` with one process, named
    ``<name_prefix>-<8 random hex digits>@%h``, logging at INFO, as :func:`start_python` does
    (same ``env``, ``log_path``, ``popen_kwargs`` and return value).

    Gossip, mingle and heartbeat are off: a test's worker talks to no other worker, and mingle
    would wait for replies on start.
    """
    name = f"{name_prefix}-{uuid.uuid4().hex[:8]}@%h"
    return start_python("-m", "celery", "-A", "spotlight_study", "worker", "--loglevel", "INFO",
                        "--concurrency", "1", "-n", name,
                        "--without-gossip", "--without-mingle", "--without-heartbeat",
                        env=env, log_path=log_path, **popen_kwargs)


def stop_process(process: subprocess.Popen, *, timeout_s: float = 20,
                 process_group: bool = False) -> str | bytes | None:
    """Stop ``process``: SIGTERM (to its whole process group when ``process_group``, for a
    process started with ``start_new_session=True``) if it still runs, then SIGKILL if it has not
    exited within ``timeout_s`` seconds; wait for it either way.

    Returns what it wrote to its stdout pipe and was not read yet (None when stdout is not a
    pipe). A process that has already exited is only waited for; nothing is raised for it.
    """
    def send(sig: int) -> None:
        if not process_group:
            process.send_signal(sig)  # nothing, once the process has been reaped
            return
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:  # the whole group is gone already
            pass

    if process.poll() is None:
        send(signal.SIGTERM)
    try:
        out, _ = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        # Unconditionally: the leader may exit at the last moment and leave its children.
        send(signal.SIGKILL)
        out, _ = process.communicate()
    return out


class NotReady(RuntimeError):
    """A process did not become ready: it exited first, or the time allowed ran out."""


def wait_until_ready(ready: Callable[[], bool], *, timeout_s: float, interval_s: float = 0.2,
                     process: subprocess.Popen | None = None, what: str = "the process") -> None:
    """Call ``ready()`` every ``interval_s`` seconds until it returns true, then return None.

    ``ready`` must return False, not raise, while the process is not ready yet (a refused
    connection, say). Raises :class:`NotReady` (naming ``what``) if ``process`` has exited
    before a call, or ``timeout_s`` seconds have passed after a call that returned false.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        # Checked before each probe: something else on the port must not pass for the process.
        if process is not None and process.poll() is not None:
            raise NotReady(f"{what} exited ({process.returncode})")
        if ready():
            return
        if time.monotonic() > deadline:
            raise NotReady(f"{what} did not answer within {timeout_s:g} s")
        time.sleep(interval_s)


@dataclass
class Server:
    """A running server: its base ``url`` and the file its stdout and stderr go to."""

    url: str
    log_path: Path
    process: subprocess.Popen

    def log(self) -> str:
        """Everything the server has written so far (access log and error log)."""
        return self.log_path.read_text(errors="replace")

    def stop(self, timeout_s: float = 20) -> str:
        """Stop the server (SIGTERM, as a platform does; SIGKILL after ``timeout_s`` seconds)
        and return its log."""
        stop_process(self.process, timeout_s=timeout_s)
        return self.log()


def start_server(argv: Sequence[str], *, port: int, env: Mapping[str, str], log_path: Path,
                 ready_path: str | None = "/accounts/login/", timeout_s: float = 180,
                 answered: Callable[[httpx.Response], bool] = lambda response: True) -> Server:
    """Start ``argv`` in the repository, its output to ``log_path``, and wait until
    ``http://127.0.0.1:<port><ready_path>`` answers (any status, unless ``answered`` says no;
    each request may take 10 s), or with ``ready_path=None`` until the port accepts a TCP
    connection. Returns the running :class:`Server`. Both limits only stop a hang: under a CPU
    hog on a shared 2-CPU machine a uWSGI start took over 60 s (docs/testing.md, "Under load").

    Fails the test, with the server's log, if the process exits first or it is not ready within
    ``timeout_s`` seconds (the process is then stopped).
    """
    process = start_process(argv, env=env, log_path=log_path)
    server = Server(url=f"http://127.0.0.1:{port}", log_path=log_path, process=process)

    def ready() -> bool:
        if ready_path is None:
            return accepts_connections(port)
        try:
            return answered(httpx.get(f"{server.url}{ready_path}", timeout=10))
        except httpx.TransportError:
            return False

    try:
        wait_until_ready(ready, timeout_s=timeout_s, process=process, what=repr(" ".join(argv)))
    except NotReady as exc:
        server.stop()
        pytest.fail(f"{exc}:\n{server.log()}")
    return server
