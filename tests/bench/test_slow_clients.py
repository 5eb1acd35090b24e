"""Slow clients (issue 38, §3): the bounded driver, the deployment keeping participants served
behind Caddy, and serve.sh saying plainly what it is not for.

The figures (p99 and flows under 200 slow connections for 60 s) are a benchmark, recorded in
docs/security.md; here a short run checks the outcome only: every participant's flow completes
through Caddy while more slow clients than uWSGI has workers hang on to their requests.
"""
from __future__ import annotations

import json
import os
import shutil

import pytest

from bench.slow_clients import check_bounds
from tests.conftest import REPO
from tests.processes import run_python

pytestmark = pytest.mark.timeout(900)


@pytest.mark.parametrize("kwargs, message", [
    (dict(host="10.0.0.1", connections=10, seconds=10, kind="headers"), "loopback only"),
    (dict(host="127.0.0.1", connections=201, seconds=10, kind="headers"), "at most 200"),
    (dict(host="127.0.0.1", connections=10, seconds=61, kind="headers"), "at most 60"),
    (dict(host="127.0.0.1", connections=10, seconds=10, kind="flood"), "kind must be"),
])
def test_the_slow_client_driver_keeps_to_its_bounds(kwargs, message):
    """At most 200 connections, 60 s, to the loopback only: anything else is refused."""
    with pytest.raises(ValueError, match=message):
        check_bounds(**kwargs)


def test_serve_sh_says_it_is_not_for_participants_on_the_open_internet():
    """serve.sh prints, before it starts uWSGI, that it is not for participants on the open
    internet, and points to the deploy kit."""
    text = (REPO / "scripts" / "serve.sh").read_text()
    note = text[text.index("cat <<'NOTE'"):text.index("\nNOTE\n")]
    assert text.index("cat <<'NOTE'") < text.index("\nexec uwsgi")
    assert "NOT for\nparticipants on the open internet" in note and "deploy kit\n(deploy/, docs/deploy.md)" in note


def test_the_deploy_kit_buffers_every_request_body_and_times_out_slow_heads():
    """Every reverse_proxy of the Caddyfile buffers the request body, with a bound; the server
    times out request heads and bodies."""
    text = (REPO / "deploy" / "Caddyfile.in").read_text()
    lines = [line.strip() for line in text.splitlines() if not line.strip().startswith("#")]
    proxies = sum(line.startswith("reverse_proxy @UPSTREAM@") for line in lines)
    assert proxies == lines.count("buffer_requests") == 2
    assert sum(line.startswith("max_buffer_size ") for line in lines) == 2
    assert "read_header 10s" in lines and "read_body 2m" in lines


@pytest.mark.skipif(shutil.which("caddy") is None, reason="caddy is not installed (Debian: apt-get install caddy)")
def test_behind_caddy_participants_finish_while_slow_bodies_hang(tmp_path):
    """bench/slowloris.py --setup deploy: 20 slow request bodies (ten times uWSGI's 2 workers)
    for 30 s; the 4 participants' flows all complete and every request is answered. Without
    Caddy's buffering, the slow bodies held both workers and the flows failed."""
    out = tmp_path / "figures.json"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE")}
    result = run_python("bench/slowloris.py", "--setup", "deploy", "--connections", "20", "--seconds", "30",
                        "--kind", "body", "--participants", "4", "--concurrency", "2", "--json", str(out),
                        env=env, timeout=900)
    assert out.exists(), result.stdout[-4000:] + result.stderr[-4000:]
    (run,) = json.loads(out.read_text())
    print(result.stdout[-2000:])
    assert (run["flows_completed"], run["flows_failed"], run["unanswered"]) == (4, 0, 0), run
    assert run["slow"]["max_open"] == 20, run
