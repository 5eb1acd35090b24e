"""Querysets compiled to SQL once per process, for the few reads every participant request makes.

Building and compiling a queryset costs Django's ORM about 1.5 ms of CPU for a read with one
join and over 4 ms for the POST's locked read with its subquery: more than the database takes to
answer, and paid again on every request although only the values change. A
:class:`PreparedQuery` builds its queryset once per database with sentinel values, keeps the
compiled SQL, and afterwards only substitutes the real values into the parameter list before
``Model.objects.raw()``. The SQL is Django's own, so backend differences (``FOR UPDATE OF`` on
PostgreSQL, nothing on SQLite, quoting) stay Django's business; figures in docs/performance.md.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Model, QuerySet

#: Sentinel values, one per type: never a real primary key or slug.
SENTINEL_INT = -7_316_284_419_553
SENTINEL_STR = "\uffff-sentinel-\uffff"


class PreparedQuery:
    """A read whose SQL is compiled on first use and reused with new values.

    ``build(**sentinels)`` returns the queryset with each variable value replaced by its
    sentinel (:data:`SENTINEL_INT`, :data:`SENTINEL_STR`); ``fetch(**values)`` runs the compiled
    SQL with the values in their places and returns the model instances (annotations become
    attributes, as with the queryset). Raises ``ValueError`` at the first use if a sentinel
    does not appear among the SQL parameters (the build ignored it).

    A queryset with ``select_for_update`` compiles only inside a transaction, so its first
    ``fetch`` must run in one (which its every use does anyway).
    """

    def __init__(self, build: Callable[..., QuerySet], **sentinels: Any):
        self._build = build
        self._sentinels = sentinels
        self._compiled: dict[str, tuple] = {}

    def _compile(self, alias: str) -> tuple:
        qs = self._build(**self._sentinels)
        sql, params = qs.query.get_compiler(using=alias).as_sql()
        # raw() converts model fields only; annotations get their converters here (on SQLite a
        # datetime arrives as text).
        connection = connections[alias]
        converters = []
        for name, expression in qs.query.annotation_select.items():
            functions = connection.ops.get_db_converters(expression) + expression.get_db_converters(
                connection
            )
            if functions:
                converters.append((name, expression, functions))
        slots: list[str | None] = []
        for param in params:
            slot = None
            for name, sentinel in self._sentinels.items():
                if type(param) is type(sentinel) and param == sentinel:
                    slot = name
            slots.append(slot)
        missing = set(self._sentinels) - set(slots)
        if missing:
            raise ValueError(f"The prepared query does not use {', '.join(sorted(missing))}.")
        return qs.model, sql, list(params), slots, converters

    def fetch(self, *, using: str = DEFAULT_DB_ALIAS, **values: Any) -> list[Model]:
        """The rows for ``values`` (one value for each sentinel name given at construction)."""
        compiled = self._compiled.get(using)
        if compiled is None:
            compiled = self._compiled[using] = self._compile(using)
        model, sql, params, slots, converters = compiled
        args = [values[slot] if slot else param for param, slot in zip(params, slots)]
        rows = list(model._default_manager.db_manager(using).raw(sql, args))
        if converters:
            connection = connections[using]
            for row in rows:
                for name, expression, functions in converters:
                    value = getattr(row, name)
                    for function in functions:
                        value = function(value, expression, connection)
                    setattr(row, name, value)
        return rows
