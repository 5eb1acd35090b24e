"""gunicorn.conf.py's lean access logger writes the same line as gunicorn's own for our format,
never the query string, and falls back to gunicorn's atoms for header or environ atoms."""
from __future__ import annotations

import datetime
import runpy
from pathlib import Path
from types import SimpleNamespace

from gunicorn.config import Config
from gunicorn.glogging import Logger, SafeAtoms

CONF = runpy.run_path(str(Path(__file__).resolve().parents[2] / "gunicorn.conf.py"))


def _request():
    environ = {
        "REMOTE_ADDR": "127.0.0.1", "REQUEST_METHOD": "GET", "PATH_INFO": "/s/demo/",
        "QUERY_STRING": "PROLIFIC_PID=5f0c1e2d3b4a59687a6b5c4d", "RAW_URI": "/s/demo/?PROLIFIC_PID=5f0c1e2d3b4a59687a6b5c4d",
        "SERVER_PROTOCOL": "HTTP/1.1", "HTTP_USER_AGENT": "Mozilla/5.0", "HTTP_REFERER": "https://app.prolific.com/",
    }
    resp = SimpleNamespace(status="302 Found", sent=0, headers=[("Location", "/s/demo/step/")])
    req = SimpleNamespace(headers=[("HOST", "127.0.0.1")])
    return resp, req, environ, datetime.timedelta(seconds=1, microseconds=2345)


def _line(logger_class, access_log_format: str) -> str:
    cfg = Config()
    cfg.set("access_log_format", access_log_format)
    logger = logger_class.__new__(logger_class)
    logger.cfg = cfg
    logger.now = lambda: "[01/Dec/2026:12:00:00 +0000]"
    resp, req, environ, took = _request()
    return access_log_format % SafeAtoms(logger.atoms(resp, req, environ, took))


def test_the_lean_logger_writes_gunicorns_line_for_our_format():
    fmt = CONF["access_log_format"]
    lean = _line(CONF["LeanAccessLogger"], fmt)
    assert lean == _line(Logger, fmt)
    assert lean == '127.0.0.1 [01/Dec/2026:12:00:00 +0000] "GET /s/demo/ HTTP/1.1" 302 0 1002ms "Mozilla/5.0"'
    assert CONF["logger_class"] is CONF["LeanAccessLogger"]


def test_the_plain_atoms_agree_and_the_query_string_atoms_are_never_given():
    fmt = " ".join(f"%({k})s" for k in "h t m U H s b B f a T D M L".split())
    assert _line(CONF["LeanAccessLogger"], fmt) == _line(Logger, fmt)
    line = _line(CONF["LeanAccessLogger"], "%(r)s|%(q)s")
    assert line == "-|-" and "PROLIFIC_PID" not in line


def test_header_atoms_fall_back_to_gunicorns_full_set():
    fmt = '%(h)s "%({location}o)s" %({host}i)s'
    assert _line(CONF["LeanAccessLogger"], fmt) == _line(Logger, fmt) == '127.0.0.1 "/s/demo/step/" 127.0.0.1'
