"""Smoke runs of bench/load.py: a few participants through the production server, checked in the
database. Speed targets are not asserted here (they are benchmarks, run on a quiet machine);
correctness is: no errors, no duplicate answers, cells within 1, nothing lost."""
from __future__ import annotations

import json
import os
import socket

import pytest

from ..parallel import redis_test_url
from ..processes import run_python

# pytest-timeout's 300 s (pyproject.toml) would cut the longer limits these tests give their
# installs, loads and backups on a busy machine; they keep their own.
pytestmark = pytest.mark.timeout(900)


def _reachable(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except OSError:
        return False


def _run_load(tmp_path, *args: str) -> dict:
    out = tmp_path / "figures.json"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE")}
    # This worker's own Redis database: the benchmark's default (13) is another parallel
    # worker's, and its flush once emptied that worker's Celery queue mid-test.
    env["BENCH_REDIS_URL"] = redis_test_url()
    result = run_python("bench/load.py", "--processes", "1", "--workers", "2", "--warmup", "2",
                        "--json", str(out), *args, env=env, timeout=900)
    assert out.exists(), result.stdout[-4000:] + result.stderr[-4000:]
    figures = json.loads(out.read_text())
    figures["stdout"] = result.stdout
    return figures


def _assert_correct(figures: dict, n: int) -> None:
    assert figures["completed"] == n and figures["errors"] == 0, figures["stdout"][-3000:]
    assert figures["duplicates"] == 0 and figures["cell_spread"] <= 1, figures
    assert "database disagrees with the client" not in figures["missed"], figures["missed"]
    assert figures["server_cpu_ms_per_flow"] > 0 and figures["driver_cpu_ms_per_request"] > 0
    assert "driver: 1 processes" in figures["stdout"] and "per request" in figures["stdout"]


def test_load_bench_on_sqlite_completes_every_flow_and_checks_the_database(tmp_path):
    """bench/load.py --database sqlite: 6 participants complete through uWSGI; the checks hold."""
    figures = _run_load(tmp_path, "--n", "6", "--concurrency", "3", "--database", "sqlite")
    _assert_correct(figures, 6)
    assert figures["database"].startswith("sqlite")


def test_alternating_growth_run_measures_each_size_against_a_fresh_reference(tmp_path):
    """bench/load.py --sizes 10,14 --alternate --window 4 on SQLite: the growing study reaches each
    size, each size has a reference measured in the same rounds, and the growing study's
    database holds every flow once (no duplicates, cells within 1)."""
    out = tmp_path / "growth.json"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE")}
    env["BENCH_REDIS_URL"] = redis_test_url()
    result = run_python("bench/load.py", "--processes", "1", "--workers", "2", "--concurrency", "2",
                        "--sizes", "10,14", "--window", "4", "--alternate", "--database", "sqlite",
                        "--json", str(out), env=env, timeout=900)
    assert out.exists(), result.stdout[-4000:] + result.stderr[-4000:]
    figures = json.loads(out.read_text())
    assert figures["failed"] == 0 and figures["problems"] == [], result.stdout[-3000:]
    assert [row["participants"] for row in figures["rows"]] == [10, 14]
    for row in figures["rows"]:
        assert row["cpu_ms_per_flow"] > 0 and row["reference_ms_per_flow"] > 0
        assert row["ratio"] == pytest.approx(row["cpu_ms_per_flow"] / row["reference_ms_per_flow"])
    assert result.stdout.count("round R (reference)") == 4 and result.stdout.count("round G (growing study)") == 4
    assert "database of the growing study: 14 participants" in result.stdout, result.stdout[-3000:]


@pytest.mark.skipif(not (_reachable(5432) and _reachable(6379)), reason="needs PostgreSQL and Redis on 127.0.0.1")
def test_two_app_servers_on_one_postgres_and_redis_lose_nothing(tmp_path):
    """bench/load.py --servers 2: requests alternate between two uWSGI instances sharing one
    PostgreSQL and Redis; every flow completes, no duplicates, cells within 1."""
    import psycopg

    name = f"spotlight_bench_test_{os.getpid()}"
    try:
        figures = _run_load(tmp_path, "--n", "8", "--concurrency", "4", "--servers", "2",
                            "--database-url", f"postgres://postgres@127.0.0.1:5432/{name}")
    finally:
        with psycopg.connect("postgres://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    _assert_correct(figures, 8)
    assert figures["servers"] == 2 and "requests per server" in figures["stdout"]
