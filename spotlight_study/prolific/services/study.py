"""Writes of the study on Prolific: its settings, the link, the draft and its transitions.

Also the two helpers every Prolific service uses: :func:`client_or_default` (the given client, or
one from settings) and :func:`linked_prolific_study` (the study's Prolific settings, which must
have a Prolific id). Network calls go through :class:`~..client.ProlificClient` outside database
transactions; the outcome is then recorded in one transaction.
"""
from __future__ import annotations

import contextlib
from typing import Iterator

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from spotlight_study.identifiers import is_prolific_id
from spotlight_study.studies.models import Study

from .. import selectors
from ..client import ProlificClient
from ..credentials import study_api_token
from ..errors import AlreadyCreated, NotLinked, ProlificValidationError, StudyNotLive
from ..models import ProlificStudy
from ..payloads import STUDY_ACTIONS

NOT_LINKED_MESSAGE = "Create the study on Prolific (or link it) first."


@contextlib.contextmanager
def client_or_default(client: ProlificClient | None, *, study_id: int | None) -> Iterator[ProlificClient]:
    """The given client, or one from settings with the API token in force for study ``study_id``
    (its own, else ``PROLIFIC_API_TOKEN``: :func:`~..credentials.study_api_token`), closed
    afterwards. Raises :class:`~..errors.ProlificNotConfigured` without a token, and
    :class:`~..credentials.CredentialsUnreadable` if the study's own token cannot be decrypted."""
    if client is not None:
        yield client
        return
    own = ProlificClient.from_settings(token=study_api_token(study_id))
    try:
        yield own
    finally:
        own.close()


def linked_prolific_study(prolific_study_id: int) -> ProlificStudy:
    """The Prolific settings ``prolific_study_id`` (with its study), which must have a Prolific id.

    Raises :class:`~..errors.NotLinked` if the study is not created on or linked to Prolific yet,
    and ``ProlificStudy.DoesNotExist`` for an unknown id.
    """
    ps = ProlificStudy.objects.select_related("study").get(pk=prolific_study_id)
    if not ps.prolific_id:
        raise NotLinked(NOT_LINKED_MESSAGE)
    return ps


def prolific_study_configure(
    *,
    study: Study,
    description: str,
    reward_minor_units: int,
    total_available_places: int = 0,
    device_compatibility: list[str] | None = None,
    filters: list[dict] | None = None,
    participant_group_id: str = "",
    completed_action: str = ProlificStudy.CompletedAction.MANUALLY_REVIEW,
    failed_check_review: str = ProlificStudy.FailedCheckReview.REQUEST_RETURN,
    rejection_category: str = "",
    rejection_message: str = "",
    screen_out_reward_minor_units: int = 0,
) -> ProlificStudy:
    """Create or update the study's Prolific settings (nothing is sent to Prolific).

    Parameters
    ----------
    reward_minor_units : int
        Reward per participant in minor currency units (pence, cents).
    total_available_places : int
        0 means the study's ``target_sample_size``.
    filters : list of dict
        Prolific filters (``{"filter_id": ..., "selected_values": [...]}``).
    participant_group_id : str
        A participant group on Prolific; see :func:`selectors.completion_codes`.
    screen_out_reward_minor_units : int
        The paid screen-out of failed instruction checks under the ``end`` policy, in minor
        units; 0 (default) for none (docs/prolific.md, "Screen-outs").

    Raises ``django.core.exceptions.ValidationError`` naming the bad field.
    """
    with transaction.atomic():
        ps = ProlificStudy.objects.select_for_update().filter(study=study).first() or ProlificStudy(
            study=study
        )
        ps.description = description
        ps.reward_minor_units = reward_minor_units
        ps.total_available_places = total_available_places
        ps.device_compatibility = list(device_compatibility or ["desktop"])
        ps.filters = list(filters or [])
        ps.participant_group_id = participant_group_id
        ps.completed_action = completed_action
        ps.failed_check_review = failed_check_review
        ps.rejection_category = rejection_category
        ps.rejection_message = rejection_message
        ps.screen_out_reward_minor_units = screen_out_reward_minor_units
        ps.full_clean()
        ps.save()
    return ps


def prolific_study_link(*, study: Study, prolific_id: str) -> ProlificStudy:
    """Link the study to a study that already exists on Prolific (e.g. made in Prolific's app).

    Raises :class:`AlreadyCreated` if it is linked to another Prolific study, and
    ``ValidationError`` for an id that is not 24 hex characters or is linked elsewhere.
    """
    if not is_prolific_id(prolific_id):
        raise ValidationError({"prolific_id": "A Prolific study id is 24 lowercase hex characters."})
    with transaction.atomic():
        ps = ProlificStudy.objects.select_for_update().filter(study=study).first() or ProlificStudy(
            study=study
        )
        if ps.prolific_id and ps.prolific_id != prolific_id:
            raise AlreadyCreated(
                f"This study is already linked to Prolific study {ps.prolific_id}."
            )
        ps.prolific_id = prolific_id
        ps.full_clean()
        ps.save()
    return ps


def prolific_study_create(
    *, prolific_study_id: int, base_url: str | None = None, client: ProlificClient | None = None
) -> ProlificStudy:
    """Create the draft study on Prolific (``POST /studies/``) and record its id.

    ``base_url`` is this server's public origin (default ``settings.PROLIFIC_STUDY_BASE_URL``).
    The request is not retried: if it fails without an answer, check Prolific's app for a draft
    before trying again (then link it with :func:`prolific_study_link`).

    Raises
    ------
    AlreadyCreated
        If the study already has a Prolific id.
    ProlificValidationError
        If the draft is invalid (e.g. no description, no reward, no base URL).
    ProlificError
        If Prolific refuses or cannot be reached.
    """
    ps = ProlificStudy.objects.select_related("study").get(pk=prolific_study_id)
    if ps.prolific_id:
        raise AlreadyCreated(f"Already created on Prolific as {ps.prolific_id}.")
    base = base_url or settings.PROLIFIC_STUDY_BASE_URL
    if not base:
        raise ProlificValidationError(
            "Set PROLIFIC_STUDY_BASE_URL (or pass the base URL): the public https address of this server."
        )
    draft = selectors.study_draft(ps, base_url=base)
    with client_or_default(client, study_id=ps.study_id) as api:
        created = api.study_create(draft)
    with transaction.atomic():
        ps = ProlificStudy.objects.select_for_update().get(pk=prolific_study_id)
        ps.prolific_id = str(created.get("id") or "")
        ps.prolific_status = str(created.get("status") or "UNPUBLISHED")
        ps.external_study_url = draft.external_study_url
        ps.save(update_fields=["prolific_id", "prolific_status", "external_study_url", "updated_at"])
    return ps


def prolific_study_transition(
    *, prolific_study_id: int, action: str, client: ProlificClient | None = None
) -> ProlificStudy:
    """Publish, pause, start or stop the study on Prolific (``POST /studies/{id}/transition/``).

    Raises
    ------
    NotLinked
        If the study has no Prolific id.
    StudyNotLive
        For ``PUBLISH`` or ``START`` while the study here is not live (participants would be
        turned away).
    ProlificError
        If Prolific refuses or cannot be reached.
    """
    if action not in STUDY_ACTIONS:
        raise ValueError(f"action must be one of {', '.join(STUDY_ACTIONS)}.")
    ps = linked_prolific_study(prolific_study_id)
    if action in ("PUBLISH", "START") and ps.study.status != Study.Status.LIVE:
        raise StudyNotLive(
            f"The study is {ps.study.get_status_display().lower()} here: set it live before "
            "publishing it on Prolific, or arriving participants are turned away."
        )
    with client_or_default(client, study_id=ps.study_id) as api:
        answer = api.study_transition(ps.prolific_id, action) or {}
    status = answer.get("status") if isinstance(answer, dict) else None
    if status:
        ProlificStudy.objects.filter(pk=ps.pk).update(prolific_status=str(status), updated_at=timezone.now())
        ps.prolific_status = str(status)
    return ps

