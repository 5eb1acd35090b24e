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
