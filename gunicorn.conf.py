"""gunicorn settings of the web process: the Procfile's ``web``, ``scripts/serve.sh`` and ``bench/``.

One file, so that the benchmark measures exactly what production and the embedded default run.
gunicorn loads it with ``--config gunicorn.conf.py``; the command line (the Procfile's ``--bind``)
overrides it. Every setting can be changed from the environment without editing this file:

- ``WEB_CONCURRENCY``: worker processes (default below);
- ``GUNICORN_THREADS``: threads per worker (1 = gunicorn's ``sync`` worker, more = ``gthread``);
- ``GUNICORN_PRELOAD``: ``true``/``false``, import the app once in the master before forking;
- ``GUNICORN_ACCESS_LOG``: ``off`` to switch the access log off (on by default);
- ``GUNICORN_TIMEOUT``: seconds before a silent worker is killed and replaced.

Chosen by measurement (``bench/load.py``, 2-CPU machine, see bench/README.md "gunicorn
configuration" for the tables): sync workers, one per CPU (at least 2), preloaded. Once the
hot-path work had made a request cost about 1.5 ms, the measurement of 2026-12-01 21:25 UTC
(N=400, C=50, two runs each, alternating, quiet machine) gave 23.6-23.8 ms of server CPU per
flow on PostgreSQL with 2 workers against 25.5-25.6 ms with 3 (CPUs + 1, the earlier choice),
at the same 61-63 flows/s and a p99 of 87-91 against 90-96 ms; on SQLite 18.0-18.1 against
18.8 ms, with 70-71 against 74-75 flows/s. A worker more than the CPUs adds context switches and
cache misses to every request; what it was meant to do, keep the CPUs busy while a worker waits
for PostgreSQL, the database's own processes do. At least 2, so that one slow request never
holds up every participant. A server whose CPUs do nothing else may give more throughput with
``WEB_CONCURRENCY`` = CPUs + 1, at about 7 % more CPU per flow. The app is CPU-bound Python (the
GIL makes threads no faster than processes for it). ``gthread`` adds keep-alive but cost more
CPU per request (its event loop and thread hand-off) and had the worse tail latency.
``--preload`` imports Django once instead of once per worker: faster start and less memory, the
same CPU per request.
"""
import os

from gunicorn.glogging import Logger

_cpus = os.cpu_count() or 1


def _flag(name: str, default: bool) -> bool:
    value = os.environ.get(name, "").strip().lower()
    return default if not value else value in ("1", "true", "yes", "on")


bind = [f"{os.environ.get('HOST', '0.0.0.0')}:{os.environ.get('PORT', '8000')}"]
workers = int(os.environ.get("WEB_CONCURRENCY") or max(2, _cpus))
threads = int(os.environ.get("GUNICORN_THREADS") or 1)
worker_class = "gthread" if threads > 1 else "sync"
preload_app = _flag("GUNICORN_PRELOAD", True)
timeout = int(os.environ.get("GUNICORN_TIMEOUT") or 30)
graceful_timeout = 20
# Keep-alive matters only for gthread (sync workers close after each response); behind a proxy
# it saves a TCP handshake per request.
keepalive = 5
# Room for a burst of arrivals (a Prolific launch) while every worker is busy.
backlog = 2048
# No max_requests: the embedded default runs stimulus jobs in a background thread of the web
# process (STIMULI_JOB_RUNNER=thread), which a planned restart would cut off.
# The heartbeat file in memory, not on a disk that may stall (containers mount /tmp on overlay).
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None

# gunicorn 27's control socket (for gunicornc) is one fixed path per user: several instances on
# one machine (scale-out, tests) would fight over it, and nothing here uses it.
control_socket_disable = True

# Logs on stdout/stderr, as a platform collects them. The access log has the path without the
# query string (%(U)s, never %(r)s or %(q)s): entry URLs carry PROLIFIC_PID, STUDY_ID and
# SESSION_ID, which are personal data (docs/security.md).
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")
accesslog = None if os.environ.get("GUNICORN_ACCESS_LOG", "").strip().lower() == "off" else "-"
access_log_format = '%(h)s %(t)s "%(m)s %(U)s %(H)s" %(s)s %(b)s %(M)sms "%(a)s"'


class LeanAccessLogger(Logger):
    """gunicorn's logger, whose access-log line is built from the few values the format uses.

    gunicorn builds, for every request, a dict of every request header, response header and
    WSGI environ variable as possible log atoms, then a case-insensitive copy of it: about 3 ms
    of a participant flow's 20-25 ms of server CPU (``bench/load.py --no-access-log``, README
    Benchmarks). This logger gives the atoms of ``access_log_format`` above (and the other plain
    ones), the same values gunicorn gives them; a format that asks for header or environ atoms
    (``%({name}i)s`` and the like) gets gunicorn's full set. The atoms that would carry the query
    string (``r``, ``q``) are never given, so they log ``-``.
    """

    def atoms(self, resp, req, environ, request_time):  # noqa: D102 - see the class docstring
        if "{" in self.cfg.access_log_format:
            return super().atoms(resp, req, environ, request_time)
        status = resp.status
        if isinstance(status, str):
            status = status.split(None, 1)[0]
        sent = getattr(resp, "sent", None)
        return {
            "h": environ.get("REMOTE_ADDR", "-"),
            "t": self.now(),
            "m": environ.get("REQUEST_METHOD"),
            "U": environ.get("PATH_INFO"),
            "H": environ.get("SERVER_PROTOCOL"),
            "s": status,
            "b": str(sent) if sent is not None else "-",
            "B": sent,
            "f": environ.get("HTTP_REFERER", "-"),
            "a": environ.get("HTTP_USER_AGENT", "-"),
            "T": request_time.seconds,
            "D": request_time.seconds * 1_000_000 + request_time.microseconds,
            "M": request_time.seconds * 1000 + request_time.microseconds // 1000,
            "L": f"{request_time.seconds}.{request_time.microseconds:06d}",
            "p": f"<{os.getpid()}>",
        }


logger_class = LeanAccessLogger
