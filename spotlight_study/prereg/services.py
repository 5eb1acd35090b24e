"""Registering a plan version: frozen once the study is live, a new version needs a reason."""
from __future__ import annotations

from dataclasses import dataclass

from django.db import IntegrityError, transaction

from spotlight_study.studies.freeze import study_freeze_reason
from spotlight_study.studies.models import Study

from .errors import PreregError
from .models import PlanVersion
from .selectors import plan_latest

REASON_MAX_CHARS = 2000


@dataclass(frozen=True)
class Registration:
    """The outcome of :func:`plan_register`: the version in force and whether it was just created."""

    version: PlanVersion
    created: bool


def study_is_live(study: Study) -> str | None:
    """Why ``study`` counts as live for preregistration, or ``None`` while it is a draft.

    Live means launched (status live, paused or closed) or frozen because real participants have
    seen it (:func:`spotlight_study.studies.freeze.study_freeze_reason`); pilots do neither.
    """
    if study.status != Study.Status.DRAFT:
        return f"its status is {study.status}."
    return study_freeze_reason(study=study)


def plan_register(*, study: Study, plan: dict, reason: str = "") -> Registration:
    """Store ``plan`` as the study's next plan version, unless it is the version already in force.

    Parameters: ``plan`` from :func:`spotlight_study.prereg.plan.plan_build`; ``reason`` says why
    it replaces the previous version.

    Returns the :class:`Registration`. The same plan as the latest version, without a reason, is
    not stored again (``created`` False): re-running ``preregister`` is harmless and the hash stays.
    A new version records ``amendment`` (its reason and the hash it supersedes) inside the plan, so
    it gets its own hash even when nothing else changed.

    Raises :class:`PreregError` if the study is live, has a plan, and no reason is given; if the
    reason is longer than :data:`REASON_MAX_CHARS`; or if the same amended plan was registered
    before. Nothing is stored then.
    """
    from analysis.plan_hash import canonical_json, plan_sha256

    reason = (reason or "").strip()
    if len(reason) > REASON_MAX_CHARS:
        raise PreregError(f"The reason is too long ({len(reason)} characters; at most {REASON_MAX_CHARS}).")
    with transaction.atomic():
        # Lock the study row so two concurrent registrations cannot take the same version number.
        study = Study.objects.select_for_update().get(pk=study.pk)
        latest = plan_latest(study=study)
        if latest is not None and not reason:
            previous = {k: v for k, v in latest.plan.items() if k != "amendment"}
            if previous == plan:
                return Registration(latest, False)
            live = study_is_live(study)
            if live:
                raise PreregError(
                    f"Study '{study.slug}' is live ({live}) and already has a preregistered plan "
                    f"(version {latest.version}, SHA-256 {latest.plan_sha256}). A plan cannot be "
                    "edited once the study is live: register a new version with --reason TEXT."
                )
        if latest is not None or reason:
            plan = {**plan, "amendment": {
                "reason": reason, "supersedes": latest.plan_sha256 if latest else None,
                "version": (latest.version + 1) if latest else 1,
            }}
        sha = plan_sha256(plan)
        try:
            with transaction.atomic():
                version = PlanVersion.objects.create(
                    study=study,
                    version=(latest.version + 1) if latest else 1,
                    canonical_json=canonical_json(plan).decode("utf-8"),
                    plan_sha256=sha,
                    definition_sha256=plan["study"]["definition_sha256"],
                    planned_n=plan["sample_size"]["planned_n"],
                    reason=reason,
                    study_status=study.status,
                )
        except IntegrityError:
            raise PreregError(
                f"This plan (SHA-256 {sha}) is already registered for '{study.slug}'."
            ) from None
    return Registration(version, True)
