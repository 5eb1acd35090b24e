"""Django's SQLite backend, with the conversion of a statement's placeholders cached.

Django writes SQL with ``%s`` placeholders; Python's ``sqlite3`` wants ``?``. Django's SQLite
cursor converts every statement on every execution with a regular expression that looks behind
each character (``(?<!%)%s``), about 17 ns per character on the benchmark machine: 114 µs for
the near-duplicate candidates' read (6.7 kB, 99 placeholders), some 0.7 ms of a participant
flow's 43 kB of SQL (issue 39 §4, docs/performance.md part 11). The SQL of the
hot path is the same text on every request (the ORM's, :mod:`spotlight_study.compiled_sql`'s and
the near-duplicate index's), so the converted text is kept per process in an LRU cache keyed by
the statement; only the parameters change. Statements with named (``%(name)s``) parameters are
converted by Django as before.

The conversion itself is Django's (``FORMAT_QMARK_REGEX``, then ``%%`` to ``%``), so a cached
statement is exactly what Django would have executed.
"""
from __future__ import annotations

from functools import lru_cache

from django.db.backends.sqlite3 import base as sqlite3

#: Distinct statements kept converted per process. The hot path runs a few dozen; statements
#: whose text varies (an ``IN`` list of every length) share the rest, least recently used out.
STATEMENTS_KEPT = 1024


@lru_cache(maxsize=STATEMENTS_KEPT)
def qmark_statement(query: str) -> str:
    """``query`` with Django's ``%s`` placeholders as ``?`` and ``%%`` as ``%``, as Django's
    ``SQLiteCursorWrapper.convert_query`` writes it for positional parameters."""
    return sqlite3.FORMAT_QMARK_REGEX.sub("?", query).replace("%%", "%")


class SQLiteCursorWrapper(sqlite3.SQLiteCursorWrapper):
    """Django's SQLite cursor; positional statements converted through :func:`qmark_statement`."""

    def convert_query(self, query, *, param_names=None):
        if param_names is None:
            return qmark_statement(query)
        return super().convert_query(query, param_names=param_names)


class DatabaseWrapper(sqlite3.DatabaseWrapper):
    """SQLite as Django ships it, except the cached placeholder conversion (module docstring)."""

    def create_cursor(self, name=None):
        return self.connection.cursor(factory=SQLiteCursorWrapper)
