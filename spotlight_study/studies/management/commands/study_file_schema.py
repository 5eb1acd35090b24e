"""``manage.py study_file_schema [--out FILE | --check FILE]``: the study file's JSON Schema,
generated from the import's validation (:mod:`spotlight_study.studies.json_schema`).

The committed copy is ``docs/study-file.schema.json``; refresh it with
``manage.py study_file_schema --out docs/study-file.schema.json`` after changing
``studies/schema.py``. ``--check`` exits with status 1 when FILE differs from the schema of
the code (nothing is written).
"""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

COMMITTED = "docs/study-file.schema.json"


class Command(BaseCommand):
    help = (
        "Print the study file's JSON Schema (draft 2020-12), generated from the import's "
        f"validation; --out FILE writes it (the committed copy is {COMMITTED}), --check FILE "
        "fails when FILE is stale."
    )

    def add_arguments(self, parser):
        where = parser.add_mutually_exclusive_group()
        where.add_argument("--out", metavar="FILE", help="Write the schema to FILE.")
        where.add_argument("--check", metavar="FILE", help="Exit 1 if FILE differs from the schema.")

    def handle(self, *args, **options):
        from spotlight_study.studies.json_schema import study_file_json_schema_text

        text = study_file_json_schema_text()
        if options["check"]:
            path = Path(options["check"])
            try:
                current = path.read_text(encoding="utf-8")
            except OSError as exc:
                raise CommandError(f"Cannot read {path}: {exc.strerror}.") from None
            if current != text:
                raise CommandError(
                    f"{path} is stale: regenerate it with `manage.py study_file_schema --out {path}`.",
                    returncode=1,
                )
            self.stdout.write(f"{path} is up to date.")
        elif options["out"]:
            path = Path(options["out"])
            try:
                path.write_text(text, encoding="utf-8")
            except OSError as exc:
                raise CommandError(f"Cannot write {path}: {exc.strerror}.") from None
            self.stdout.write(f"Wrote {path}.")
        else:
            self.stdout.write(text, ending="")
