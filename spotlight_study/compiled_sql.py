"""SQL compiled once per process for the statements every participant request runs.

Building and compiling a queryset costs Django's ORM about 1.5 ms of CPU for a read with one
join and over 4 ms for the POST's locked read with its subquery, and ``save(update_fields=...)``
or ``QuerySet.update()`` build a query object on every call: more than the database takes to
answer, and paid again on every request although only the values change.

- :class:`PreparedQuery` builds its queryset once per database with sentinel values, keeps the
  compiled SQL and what Django's ``ModelIterable`` works out per query (columns, converters),
  and afterwards runs the SQL on a cursor with the real values in the sentinels' places. The
  SQL is Django's own, so backend differences (``FOR UPDATE OF`` on PostgreSQL, nothing on
  SQLite, quoting) stay Django's business.
- :func:`fields_save`, :class:`PreparedUpdate`, :func:`rows_insert` and :class:`PreparedUpsert`
  write one table with statements built once from the model's metadata, the values prepared by
  each field as the ORM prepares them.

Figures in docs/performance.md; behaviour against the ORM's in tests/participation/test_prepared.py.
"""
from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from datetime import timezone as dt_timezone
from typing import Any

from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.models import Model, QuerySet
from django.db.models.query import ModelIterable, ValuesListIterable

#: Sentinel values, one per type: never a real primary key, slug or time.
SENTINEL_INT = -7_316_284_419_553
SENTINEL_STR = "\uffff-sentinel-\uffff"
SENTINEL_DATETIME = datetime(1901, 2, 3, 4, 5, 6, 789_012, tzinfo=dt_timezone.utc)


def _slots(connection, params, sentinels: dict[str, Any]) -> list[tuple | None]:
    """For each SQL parameter, ``(sentinel name, adapter or None)`` if it is a sentinel's place.

    A datetime reaches the SQL parameters adapted by the backend (a string on SQLite), so its
    sentinel is looked for in that form, and the real value is adapted the same way.
    """
    wanted = []
    for name, sentinel in sentinels.items():
        if isinstance(sentinel, datetime):
            adapt = connection.ops.adapt_datetimefield_value
            wanted.append((name, adapt(sentinel), adapt))
        else:
            wanted.append((name, sentinel, None))
    slots: list[tuple | None] = []
    for param in params:
        slot = None
        for name, candidate, adapt in wanted:
            if type(param) is type(candidate) and param == candidate:
                slot = (name, adapt)
        slots.append(slot)
    missing = set(sentinels) - {slot[0] for slot in slots if slot}
    if missing:
        raise ValueError(f"The prepared query does not use {', '.join(sorted(missing))}.")
    return slots


# --- the cursor --------------------------------------------------------------------------------
_ROWS, _ONE, _ROWCOUNT = "rows", "one", "rowcount"


def _run(connection, sql: str, args: list, result: str) -> Any:
    """Execute ``sql`` with ``args`` on a new Django cursor (closed after it, as the ORM does);
    return all rows, the first row or the row count."""
    with connection.cursor() as cursor:
        cursor.execute(sql, args)
        if result == _ROWS:
            return cursor.fetchall()
        if result == _ONE:
            return cursor.fetchone()
        return cursor.rowcount


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
        compiler = qs.query.get_compiler(using=alias)
        sql, params = compiler.as_sql()
        # What Django's ModelIterable works out per query, worked out once: which columns make
        # the model instance, which are annotations, and the converters of every column (on
        # SQLite a datetime arrives as text, a JSON field as a string).
        connection = connections[alias]
        select, klass_info = compiler.select, compiler.klass_info
        if qs._iterable_class is ValuesListIterable:  # the converted rows are the result
            start = end = init_list = None
            annotations = []
        elif qs._iterable_class is not ModelIterable:
            raise ValueError("A prepared query returns model instances or values_list() rows.")
        else:
            if klass_info.get("related_klass_infos"):
                raise ValueError("A prepared query cannot use select_related().")
            fields = klass_info["select_fields"]
            start, end = fields[0], fields[-1] + 1
            init_list = [column[0].target.attname for column in select[start:end]]
            annotations = list(compiler.annotation_col_map.items())
        converters = [
            (position, functions, expression)
            for position, (functions, expression) in compiler.get_converters(
                [column[0] for column in select]
            ).items()
        ]
        slots = _slots(connection, params, self._sentinels)
        return qs.model, sql, list(params), slots, (start, end, init_list, annotations, converters)

    def fetch(self, *, using: str = DEFAULT_DB_ALIAS, **values: Any) -> list:
        """The rows for ``values`` (one value for each sentinel name given at construction):
        model instances, or tuples for a ``values_list()`` queryset."""
        compiled = self._compiled.get(using)
        if compiled is None:
            compiled = self._compiled[using] = self._compile(using)
        model, sql, params, slots, (start, end, init_list, annotations, converters) = compiled
        args = [
            param if slot is None else (slot[1](values[slot[0]]) if slot[1] else values[slot[0]])
            for param, slot in zip(params, slots)
        ]
        connection = connections[using]
        rows = _run(connection, sql, args, _ROWS)
        instances = []
        for row in rows:
            if converters:
                row = list(row)
                for position, functions, expression in converters:
                    value = row[position]
                    for function in functions:
                        value = function(value, expression, connection)
                    row[position] = value
            if init_list is None:
                instances.append(tuple(row))
                continue
            instance = model.from_db(using, init_list, row[start:end])
            for name, position in annotations:
                setattr(instance, name, row[position])
            instances.append(instance)
        return instances


# --- writes ---------------------------------------------------------------------------------
# ``Model.save(update_fields=...)``, ``QuerySet.update()`` and ``save(force_insert=True)`` build
# and compile a query object on every call: on the flow's writes that cost several times the
# database's own time. The functions below write the same SQL (one table, ``%s`` placeholders,
# values prepared by each field's ``pre_save`` and ``get_db_prep_save`` exactly as the ORM does)
# from statements built once per process and database. Participation models have no save
# signals; a model that needs them must keep using the ORM.

_STATEMENTS: dict[tuple, tuple] = {}


def _fields(model: type[Model], names) -> list:
    fields = [model._meta.get_field(name) for name in names]
    for f in fields:
        if not f.concrete or hasattr(f, "get_placeholder"):
            raise ValueError(f"{model.__name__}.{f.name} cannot be written by a compiled statement.")
    return fields


def fields_save(instance: Model, fields: list[str] | tuple[str, ...], *, using: str = DEFAULT_DB_ALIAS) -> None:
    """``instance.save(update_fields=fields)`` without building a query: one ``UPDATE`` by pk.

    Each field's ``pre_save`` runs first (so ``auto_now`` fields get the time, as with
    ``save()``). Raises ``DatabaseError`` if no row has the instance's pk (as ``save`` with
    ``update_fields`` does), and ``ValueError`` for a field that was deferred when the instance
    was read and has not been assigned since; no signals are sent.
    """
    model = type(instance)
    key = ("update", using, model, tuple(fields))
    statement = _STATEMENTS.get(key)
    connection = connections[using]
    if statement is None:
        qn = connection.ops.quote_name
        targets = _fields(model, fields)
        pk = model._meta.pk
        sql = (
            f"UPDATE {qn(model._meta.db_table)} SET "
            + ", ".join(f"{qn(f.column)} = %s" for f in targets)
            + f" WHERE {qn(pk.column)} = %s"
        )
        statement = _STATEMENTS[key] = (sql, targets, pk)
    sql, targets, pk = statement
    loaded = instance.__dict__
    for f in targets:
        # A deferred field that is saved without a new value would be read first (a query of
        # its own, on a path that promises one read): refuse rather than hide it.
        if f.attname not in loaded and not getattr(f, "auto_now", False):
            raise ValueError(f"{model.__name__}.{f.name} is deferred and has no new value to save.")
    args = [f.get_db_prep_save(f.pre_save(instance, False), connection) for f in targets]
    args.append(pk.get_db_prep_value(instance.pk, connection))
    if _run(connection, sql, args, _ROWCOUNT) == 0:
        raise DatabaseError("Save with update_fields did not affect any rows.")


class PreparedUpdate:
    """``UPDATE <model> SET <fields> [, <counter> = <counter> + 1] WHERE <key fields> = ...
    [AND <field> IS NULL ...]``, built once per database.

    ``execute(values=..., where=...)`` takes ``{field name: value}`` for the set and the key fields
    (values prepared by each field, as ``QuerySet.update()`` and ``filter()`` prepare them) and
    returns the number of rows changed. ``vendor_conditions`` maps a database vendor
    (``connection.vendor``, e.g. ``"postgresql"``) to one more SQL condition, without
    parameters, added on that database only.
    """

    def __init__(self, model: type[Model], *, set_fields, where_fields, where_null=(), increments=(),
                 vendor_conditions=None):
        self.model = model
        self.set_fields = tuple(set_fields)
        self.where_fields = tuple(where_fields)
        self.where_null = tuple(where_null)
        self.increments = tuple(increments)
        self.vendor_conditions = dict(vendor_conditions or {})
        self._compiled: dict[str, tuple] = {}

    def _compile(self, connection) -> tuple:
        qn = connection.ops.quote_name
        targets = _fields(self.model, self.set_fields)
        keys = _fields(self.model, self.where_fields)
        assignments = [f"{qn(f.column)} = %s" for f in targets]
        assignments += [f"{qn(c)} = {qn(c)} + 1" for c in (f.column for f in _fields(self.model, self.increments))]
        conditions = [f"{qn(f.column)} = %s" for f in keys]
        conditions += [f"{qn(f.column)} IS NULL" for f in _fields(self.model, self.where_null)]
        if connection.vendor in self.vendor_conditions:
            conditions.append(self.vendor_conditions[connection.vendor])
        sql = (f"UPDATE {qn(self.model._meta.db_table)} SET {', '.join(assignments)} "
               f"WHERE {' AND '.join(conditions)}")
        return sql, targets, keys

    def execute(self, *, values: dict[str, Any], where: dict[str, Any], using: str = DEFAULT_DB_ALIAS) -> int:
        """Run the update with these values; the number of rows it changed."""
        connection = connections[using]
        compiled = self._compiled.get(using)
        if compiled is None:
            compiled = self._compiled[using] = self._compile(connection)
        sql, targets, keys = compiled
        args = [f.get_db_prep_save(values[f.name], connection) for f in targets]
        args += [f.get_db_prep_value(where[f.name], connection) for f in keys]
        return _run(connection, sql, args, _ROWCOUNT)


def _insert_statement(connection, model: type[Model], n_rows: int, returning: bool) -> tuple:
    key = ("insert", connection.alias, model, n_rows, returning)
    statement = _STATEMENTS.get(key)
    if statement is None:
        qn = connection.ops.quote_name
        meta = model._meta
        targets = [f for f in meta.local_concrete_fields if f is not meta.auto_field and not f.generated]
        _fields(model, [f.name for f in targets])
        row = "(" + ", ".join(["%s"] * len(targets)) + ")"
        sql = (f"INSERT INTO {qn(meta.db_table)} ({', '.join(qn(f.column) for f in targets)}) "
               f"VALUES {', '.join([row] * n_rows)}")
        if returning:
            sql += f" RETURNING {qn(meta.pk.column)}"
        statement = _STATEMENTS[key] = (sql, targets)
    return statement


def rows_insert(instances: list[Model], *, using: str = DEFAULT_DB_ALIAS, returning_pk: bool = False) -> None:
    """Insert new instances of one model in one ``INSERT`` (as ``bulk_create`` does, or
    ``save(force_insert=True)`` for one), without building a query.

    ``auto_now_add`` and ``auto_now`` fields get the time from their ``pre_save``. With
    ``returning_pk`` (one instance only) the new primary key is read back with ``RETURNING``
    (PostgreSQL; SQLite 3.35 and later) and set on the instance. Raises ``IntegrityError`` as
    the database does (a unique constraint); nothing else is written then.
    """
    if not instances:
        return
    connection = connections[using]
    model = type(instances[0])
    if returning_pk and (len(instances) != 1 or not connection.features.can_return_columns_from_insert):
        raise ValueError("returning_pk needs one instance and a database with INSERT ... RETURNING.")
    sql, targets = _insert_statement(connection, model, len(instances), returning_pk)
    args = [f.get_db_prep_save(f.pre_save(obj, True), connection) for obj in instances for f in targets]
    row = _run(connection, sql, args, _ONE if returning_pk else _ROWCOUNT)
    if returning_pk:
        instances[0].pk = row[0]
    for obj in instances:
        obj._state.adding = False
        obj._state.db = using


class PreparedUpsert:
    """``INSERT <row> ON CONFLICT (<key fields>) DO UPDATE SET <fields> = EXCLUDED.<fields>
    [, <counter> = <counter> + 1] [WHERE <field> IS NULL ...] RETURNING <column>``, built once
    per database: a row that is new is inserted, one that exists is touched, in one statement
    instead of an UPDATE followed by an INSERT.

    ``conflict_fields`` must be the fields of one unique constraint (the conflict target both
    databases require). ``execute(instance)`` inserts ``instance`` (all its concrete fields but
    the primary key, prepared as :func:`rows_insert` prepares them) and returns the
    ``returning`` field's value of the inserted or updated row, or ``None`` when the row exists
    and the ``where_null`` condition kept it unchanged. A conflict on another unique constraint
    raises ``IntegrityError`` and writes nothing. Needs ``ON CONFLICT ... DO UPDATE`` and
    ``RETURNING``: PostgreSQL 9.5 and SQLite 3.35 or later.
    """

    def __init__(self, model: type[Model], *, conflict_fields, set_fields, returning,
                 increments=(), where_null=()):
        self.model = model
        self.conflict_fields = tuple(conflict_fields)
        self.set_fields = tuple(set_fields)
        self.increments = tuple(increments)
        self.where_null = tuple(where_null)
        self.returning = returning
        self._compiled: dict[str, tuple] = {}

    def _compile(self, connection) -> tuple:
        qn = connection.ops.quote_name
        meta = self.model._meta
        table = qn(meta.db_table)
        targets = [f for f in meta.local_concrete_fields if f is not meta.auto_field and not f.generated]
        _fields(self.model, [f.name for f in targets])
        assignments = [f"{qn(f.column)} = EXCLUDED.{qn(f.column)}" for f in _fields(self.model, self.set_fields)]
        assignments += [f"{qn(f.column)} = {table}.{qn(f.column)} + 1"
                        for f in _fields(self.model, self.increments)]
        conditions = [f"{table}.{qn(f.column)} IS NULL" for f in _fields(self.model, self.where_null)]
        (returned,) = _fields(self.model, [self.returning])
        sql = (f"INSERT INTO {table} ({', '.join(qn(f.column) for f in targets)}) "
               f"VALUES ({', '.join(['%s'] * len(targets))}) "
               f"ON CONFLICT ({', '.join(qn(f.column) for f in _fields(self.model, self.conflict_fields))}) "
               f"DO UPDATE SET {', '.join(assignments)}"
               + (f" WHERE {' AND '.join(conditions)}" if conditions else "")
               + f" RETURNING {qn(returned.column)}")
        return sql, targets, returned

    def execute(self, instance: Model, *, using: str = DEFAULT_DB_ALIAS) -> Any:
        """Insert or touch ``instance``'s row; the ``returning`` value, or ``None`` (see above)."""
        connection = connections[using]
        compiled = self._compiled.get(using)
        if compiled is None:
            compiled = self._compiled[using] = self._compile(connection)
        sql, targets, returned = compiled
        args = [f.get_db_prep_save(f.pre_save(instance, True), connection) for f in targets]
        row = _run(connection, sql, args, _ONE)
        if row is None:
            return None
        converters = returned.get_db_converters(connection)
        value = row[0]
        for converter in converters:
            value = converter(value, returned, connection)
        return value
