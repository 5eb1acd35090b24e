"""Reading preregistered plan versions."""
from __future__ import annotations

from django.db.models import QuerySet

from spotlight_study.studies.models import Study

from .errors import PlanTamperedError
from .models import PlanVersion


def plan_versions(*, study: Study) -> QuerySet[PlanVersion]:
    """Every plan version of ``study``, oldest first."""
    return PlanVersion.objects.filter(study=study).order_by("version")


def plan_latest(*, study: Study) -> PlanVersion | None:
    """The newest plan version of ``study``, or ``None`` if it was never preregistered."""
    return PlanVersion.objects.filter(study=study).order_by("-version").first()


def plan_checked(version: PlanVersion) -> dict:
    """The plan of ``version``, checked against the SHA-256 recorded when it was registered.

    Returns the parsed plan (whose canonical SHA-256 is ``version.plan_sha256``).

    Raises
    ------
    PlanTamperedError
        If the stored ``canonical_json`` was changed after registration (an edit in the
        database, a restore from another copy): the message names the version and both hashes
        (:func:`analysis.plan_hash.plan_verified`).
    """
    from analysis.errors import PlanIntegrityError
    from analysis.plan_hash import plan_verified

    try:
        return plan_verified(
            version.canonical_json,
            version.plan_sha256,
            source=f"Plan v{version.version} of {version.study.slug}",
        )
    except PlanIntegrityError as exc:
        raise PlanTamperedError(str(exc)) from None
