"""``manage.py export_study SLUG [--out FILE]``: write a study's study file (YAML, or JSON for a
``.json`` FILE; standard output without ``--out``), which ``import_study`` reads back into the
same study, settings built on the Stimuli pages included."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError


def _write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder, so an existing
    file is replaced whole or not at all. Raises ``OSError``."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class Command(BaseCommand):
    help = (
        "Write the study file of a study (YAML; JSON when --out ends in .json). import_study "
        "reads it back into the same study, including settings built on the Stimuli pages."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument(
            "--out",
            metavar="FILE",
            help="Write to FILE (.yaml, .yml or .json) instead of standard output.",
        )

    def handle(self, *args, **options):
        from spotlight_study.studies.export import (
            study_file_data,
            study_file_problems,
            study_file_text,
        )
        from spotlight_study.studies.models import Study
        from spotlight_study.studies.selectors import study_get

        slug = options["slug"]
        study = study_get(slug=slug)
        if study is None:
            known = ", ".join(Study.objects.order_by("slug").values_list("slug", flat=True)[:20])
            raise CommandError(f"No study with slug '{slug}'. Studies: {known or 'none'}.")
        out = Path(options["out"]) if options["out"] else None
        if out is not None and out.suffix.lower() not in (".yaml", ".yml", ".json"):
            raise CommandError(f"--out must end in .yaml, .yml or .json, not '{out.name}'.")
        try:
            data = study_file_data(study)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        text = study_file_text(data, fmt="json" if out is not None and out.suffix.lower() == ".json" else "yaml")
        if out is None:
            self.stdout.write(text, ending="")
        else:
            if not out.parent.is_dir():
                raise CommandError(f"Cannot write {out}: the folder {out.parent} does not exist.")
            try:
                _write_atomically(out, text)
            except OSError as exc:
                raise CommandError(f"Cannot write {out}: {exc.strerror or exc}.") from None
        n_browser = sum(1 for s in data["settings"] if "provenance" in s)
        # Messages go to standard error so that standard output stays a clean study file.
        err = self.stderr
        if out is not None:
            err.write(
                f"Wrote the study file of '{slug}' to {out}: 1 training setting, "
                f"{len(data['settings'])} main settings ({n_browser} built on the Stimuli pages)."
            )
        problems = study_file_problems(data)
        if problems:
            err.write(
                self.style.WARNING(
                    "import_study would refuse this file as it is; fix these in the file (or the "
                    "study) first:"
                )
            )
            for path, messages in sorted(problems.items()):
                err.write(self.style.WARNING(f"  {path}: {' '.join(messages)}"))
