"""The SQLite engine (spotlight_study/sqlite_backend): Django's, with each statement's
placeholder conversion kept per process. A kept statement is what Django would have run."""
import pytest
from django.db import connection
from django.db.backends.sqlite3.base import SQLiteCursorWrapper as DjangoCursor

from spotlight_study.sqlite_backend.base import SQLiteCursorWrapper, qmark_statement

pytestmark = pytest.mark.django_db

STATEMENTS = [
    "SELECT %s",
    "SELECT 'a%%b', %s, %s",
    "SELECT * FROM t WHERE name LIKE '%%s' AND id = %s",
    "SELECT '%%%s'",
    "UPDATE t SET a = %s WHERE b IN (%s, %s, %s)",
    "SELECT 1",
]


@pytest.mark.parametrize("sql", STATEMENTS)
def test_a_statement_is_converted_as_django_converts_it_the_first_time_and_after(sql):
    django = DjangoCursor.convert_query(None, sql)
    assert qmark_statement(sql) == django
    assert qmark_statement(sql) == django  # from the cache


@pytest.mark.skipif(connection.vendor != "sqlite", reason="the SQLite engine")
def test_the_engine_runs_positional_named_and_literal_percent_statements():
    with connection.cursor() as cursor:
        assert isinstance(cursor.cursor, SQLiteCursorWrapper)
        for _ in range(2):  # the second run uses the kept conversion
            cursor.execute("SELECT %s || '%%', %s", ["50", 7])
            assert cursor.fetchone() == ("50%", 7)
        cursor.execute("SELECT %(a)s + %(b)s", {"a": 2, "b": 3})
        assert cursor.fetchone() == (5,)
        cursor.execute("SELECT '100%'")
        assert cursor.fetchone() == ("100%",)
