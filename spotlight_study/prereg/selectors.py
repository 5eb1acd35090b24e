"""Reading preregistered plan versions."""
from __future__ import annotations

from django.db.models import QuerySet

from spotlight_study.studies.models import Study

from .models import PlanVersion


def plan_versions(*, study: Study) -> QuerySet[PlanVersion]:
    """Every plan version of ``study``, oldest first."""
    return PlanVersion.objects.filter(study=study).order_by("version")


def plan_latest(*, study: Study) -> PlanVersion | None:
    """The newest plan version of ``study``, or ``None`` if it was never preregistered."""
    return PlanVersion.objects.filter(study=study).order_by("-version").first()
