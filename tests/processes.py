"""Starting the processes a test needs: this Python on a script or ``-c`` code, a server that
must answer before the test goes on, and a free port for it.

One module for what many test files used to spell out for themselves (the interpreter, the
repository as working directory, captured text output, a timeout, a readiness wait), so that a
change to how the suite starts processes is made once.
"""
from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listened on a moment ago (the kernel's choice).

    Once this returns, nothing listens there: a client that connects is refused, and a server
    started right away can bind it.
    """
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_python(*args: str, env: Mapping[str, str] | None = None,
               timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run this interpreter with ``args`` (``"-c", code`` or ``"-m", module`` or a script) in the
    repository and wait; stdout and stderr captured as text. A non-zero exit is returned, not
    raised; ``subprocess.TimeoutExpired`` after ``timeout`` seconds."""
    return subprocess.run([sys.executable, *args], cwd=REPO, env=None if env is None else dict(env),
                          capture_output=True, text=True, timeout=timeout, check=False)


def start_python(*args: str, env: Mapping[str, str], **popen_kwargs) -> subprocess.Popen:
    """Start this interpreter with ``args`` in the repository and return at once; stdout and
    stderr go to one text pipe unless ``popen_kwargs`` say otherwise."""
    options = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT, "text": True, **popen_kwargs}
    return subprocess.Popen([sys.executable, *args], cwd=REPO, env=dict(env), **options)


@dataclass
class Server:
    """A running server: its base ``url`` and the file its stdout and stderr go to."""

    url: str
    log_path: Path
    process: subprocess.Popen

    def log(self) -> str:
        """Everything the server has written so far (access log and error log)."""
        return self.log_path.read_text(errors="replace")

    def stop(self) -> str:
        """Stop the server (SIGTERM, as a platform does; SIGKILL after 20 s) and return its log."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.log()


def start_server(argv: Sequence[str], *, port: int, env: Mapping[str, str], log_path: Path,
                 ready_path: str = "/accounts/login/", timeout_s: float = 60,
                 answered: Callable[[httpx.Response], bool] = lambda response: True) -> Server:
    """Start ``argv`` in the repository, its output to ``log_path``, and wait until
    ``http://127.0.0.1:<port><ready_path>`` answers (any status, unless ``answered`` says no).

    Fails the test, with the server's log, if the process exits first or nothing answers within
    ``timeout_s`` seconds (the process is then stopped).
    """
    with log_path.open("w") as log_file:
        process = subprocess.Popen(list(argv), cwd=REPO, env=dict(env), stdout=log_file,
                                   stderr=subprocess.STDOUT)
    server = Server(url=f"http://127.0.0.1:{port}", log_path=log_path, process=process)
    deadline = time.monotonic() + timeout_s
    while True:
        if process.poll() is not None:
            pytest.fail(f"{' '.join(argv)!r} exited ({process.returncode}):\n{server.log()}")
        try:
            if answered(httpx.get(f"{server.url}{ready_path}", timeout=2)):
                return server
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            server.stop()
            pytest.fail(f"{' '.join(argv)!r} did not answer within {timeout_s:g} s:\n{server.log()}")
        time.sleep(0.2)
