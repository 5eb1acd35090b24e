"""bench/load.py --sizes: the sizes are parsed with a clear message, and the growth table names
each size's figures and says whether CPU per flow stayed within 15%."""
import pytest

from bench.growth import growth_rows, parse_sizes


def test_sizes_parse_and_refuse_with_a_message():
    """Whole numbers separated by commas; anything else is refused naming the bad entry."""
    assert parse_sizes("400, 2400,10_000") == [400, 2400, 10000]
    for bad in ("400,x", "0", "400,,2400", "-5"):
        with pytest.raises(ValueError, match="whole numbers"):
            parse_sizes(bad)


def _fig(cpu, web, db, rate, p99):
    return {"server_cpu_ms_per_flow": cpu, "web_cpu_ms_per_flow": web, "db_cpu_ms_per_flow": db,
            "flows_per_s": rate, "p99_ms": p99}


def test_growth_table_rows_and_verdict():
    """One Markdown row per size; the last line compares the largest size with the smallest."""
    flat = growth_rows([(400, _fig(40.0, 32.0, 8.0, 30.0, 150)), (10000, _fig(45.9, 36.0, 9.9, 29.0, 160))])
    assert flat[2] == "| 400 | 40.0 ms | 32.0 ms | 8.0 ms | 30.0 | 150 ms |"
    assert flat[3].startswith("| 10,000 | 45.9 ms")
    assert flat[-1].endswith("PASS") and "+14.7%" in flat[-1]
    steep = growth_rows([(400, _fig(52.3, 43.2, 9.0, 28.1, 150)), (8000, _fig(85.3, 59.1, 26.1, 18.6, 363))])
    assert steep[-1].endswith("FAIL") and "+63.1%" in steep[-1]


def test_alternating_table_compares_the_largest_size_with_its_reference():
    """bench/load.py --sizes ... --alternate: one row per size with the reference measured in the
    same minutes; the verdict is the ratio at the largest size, not the unpaired growth."""
    from bench.growth_alternating import alternating_rows

    lines = alternating_rows([(400, 51.0, 39.9, 11.1, 61.0, 51.0 / 61.0),
                              (10000, 54.9, 42.7, 12.2, 57.6, 54.9 / 57.6)], 400)
    assert lines[2] == "| 400 | 51.0 ms | 39.9 ms | 11.1 ms | 61.0 ms | 0.84 |"
    assert lines[3] == "| 10,000 | 54.9 ms | 42.7 ms | 12.2 ms | 57.6 ms | 0.95 |"
    assert "against the reference: -4.7% (target <= 15%): PASS" in lines[-1]
    assert "unpaired, 10,000 against 400: +7.6%" in lines[-1]
    # A flow that costs a fifth more than the reference's, in the same minutes, fails.
    grown = alternating_rows([(400, 40.0, 30.0, 10.0, 40.0, 1.0), (10000, 48.0, 36.0, 12.0, 40.0, 1.2)], 400)
    assert grown[-1].split(";")[0].endswith("+20.0% (target <= 15%): FAIL")


def test_reference_database_is_the_runs_own_with_a_suffix():
    """The reference study's PostgreSQL database is named after the run's, so that two sessions
    with their own --database-url never drop each other's reference."""
    from bench.growth_alternating import _reference_url

    assert (_reference_url("postgres", "postgres://postgres@127.0.0.1:5432/spotlight_bench_x")
            == "postgres://postgres@127.0.0.1:5432/spotlight_bench_x_ref")
    assert _reference_url("sqlite", "postgres://ignored/x") == "postgres://ignored/x"
