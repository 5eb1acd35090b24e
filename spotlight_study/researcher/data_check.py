"""``manage.py check_data``: is a database (a restored backup, say) whole?

Three checks, plain data for the command and its tests:

- the rows of every table of every installed app;
- answers per participant: how many participants have 0, 1, 2, ... saved answers (training and
  main tasks), and the completed participants that lack a main-task answer their cell plan has
  (a completed participant answered every task, so any such one is damage);
- orphans: rows whose foreign key names a row that does not exist (possible when a SQLite file
  was copied without its WAL, or rows were deleted with constraints off).

Reads only; takes one query per table and per foreign key (well under a second for a study of
a few thousand participants).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from django.apps import apps
from django.db.models import Count, Exists, OuterRef, Q

from spotlight_study.participation.models import Participant, TaskResponse


@dataclass
class DataCheck:
    """What :func:`data_check` found. ``problems`` is empty for a whole database."""

    table_rows: dict[str, int] = field(default_factory=dict)
    answers_per_participant: dict[int, int] = field(default_factory=dict)
    participants: int = 0
    answers: int = 0
    completed_missing_answers: list[int] = field(default_factory=list)
    orphans: dict[str, int] = field(default_factory=dict)

    @property
    def problems(self) -> list[str]:
        """One sentence per problem found; empty when the data are whole."""
        found = [f"{table}: {n} row(s) point to a missing row" for table, n in sorted(self.orphans.items())]
        if self.completed_missing_answers:
            ids = ", ".join(str(i) for i in self.completed_missing_answers[:10])
            found.append(f"{len(self.completed_missing_answers)} completed participant(s) lack a "
                         f"main-task answer (ids {ids}{', ...' if len(self.completed_missing_answers) > 10 else ''})")
        return found

    def as_dict(self) -> dict:
        """JSON-ready: the fields above plus ``problems``."""
        return {
            "table_rows": self.table_rows,
            "participants": self.participants,
            "answers": self.answers,
            "answers_per_participant": {str(k): v for k, v in sorted(self.answers_per_participant.items())},
            "completed_missing_answers": self.completed_missing_answers,
            "orphans": self.orphans,
            "problems": self.problems,
        }


def _orphans() -> dict[str, int]:
    found: dict[str, int] = {}
    for model in apps.get_models():
        if model._meta.proxy or not model._meta.managed:
            continue
        for fk in model._meta.concrete_fields:
            if not fk.is_relation or not fk.many_to_one and not fk.one_to_one:
                continue
            target = fk.related_model
            missing = (
                model._base_manager.filter(**{f"{fk.attname}__isnull": False})
                .exclude(Exists(target._base_manager.filter(**{fk.target_field.attname: OuterRef(fk.attname)})))
                .count()
            )
            if missing:
                found[f"{model._meta.db_table}.{fk.column}"] = missing
    return found


def data_check() -> DataCheck:
    """Run the three checks on the default database. Raises only database errors."""
    result = DataCheck()
    for model in apps.get_models():
        if model._meta.proxy or not model._meta.managed:
            continue
        result.table_rows[model._meta.db_table] = model._base_manager.count()
    answered = Q(responses__answered_at__isnull=False)
    rows = Participant.objects.annotate(
        n_answers=Count("responses", filter=answered),
        n_main=Count("responses", filter=answered & Q(responses__position__gte=1)),
    ).values_list("pk", "status", "cell_plan", "n_answers", "n_main")
    histogram: Counter[int] = Counter()
    for pk, status, cell_plan, n_answers, n_main in rows.iterator():
        histogram[n_answers] += 1
        if status == Participant.Status.COMPLETED and n_main < len(cell_plan or []):
            result.completed_missing_answers.append(pk)
    result.answers_per_participant = dict(histogram)
    result.participants = sum(histogram.values())
    result.answers = TaskResponse.objects.filter(answered_at__isnull=False).count()
    result.completed_missing_answers.sort()
    result.orphans = _orphans()
    return result
