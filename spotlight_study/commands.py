"""Helpers shared by the apps' management commands."""
from __future__ import annotations

from django.core.management.base import CommandError

from spotlight_study.studies.models import Study
from spotlight_study.studies.selectors import study_get


def study_for_command(slug: str, *, with_settings: bool = False) -> Study:
    """The study named on a command line; the one "study by slug, else ``CommandError``".

    ``with_settings`` prefetches the settings and patterns (:func:`study_get`). Raises
    ``CommandError("No study with slug '<slug>'.")`` (exit status 1, message on stderr) when
    there is none.
    """
    study = study_get(slug=slug, with_settings=with_settings)
    if study is None:
        raise CommandError(f"No study with slug '{slug}'.")
    return study
