"""Writes and reads of study drafts: the study builder's study files in the making.

A draft (:class:`~.models.StudyDraft`) holds a study file as a mapping. The builder edits it
section by section; every save stores what was entered, even when it is incomplete, and every
page shows what the study file's one validation (:func:`.schema.validate_study_data`, the gate
of ``import_study``) says about it, by path. Publishing hands the mapping to the import service
(:func:`.services.study_import_outcome`), so a draft becomes a study exactly as its file would.

Concurrency: a save names the draft version its form was loaded at. A save at an older version
is refused (:class:`DraftConflict`) and changes nothing, so a second tab cannot silently
overwrite the first.
"""
from __future__ import annotations

import copy
from typing import Any, Callable, TypeVar

from django.core.exceptions import ValidationError
from django.db import transaction

from spotlight_study.accounts.roles import is_staff_user
from rest_framework import serializers

from .errors import StudyError, StudyFileError, StudyImportError
from .export import study_file_data
from .freeze import frozen_message, study_freeze_reason
from .languages import DEFAULT_LANGUAGE, default_texts, language_known
from .members import member_add
from .models import Study, StudyDraft, StudyMember
from .schema import RESERVED_SLUGS, validate_study_data
from .services import study_import_outcome
from .visible_text import visible_title_check

T = TypeVar("T")

#: Slugs that name platform pages under /researcher/ (``team/``, the builder's ``new/``).
BUILDER_RESERVED_SLUGS = RESERVED_SLUGS


class DraftConflict(StudyError):
    """A builder save made from an older version of the draft: another tab or person saved in
    between. Nothing was changed."""

    code = "draft_conflict"
    http_status = 409


class DraftError(StudyError):
    """A draft that cannot be started, published or copied as asked (message for the
    researcher); nothing was changed. ``problems`` maps each input the refusal is about (``slug``,
    ``title``, ``language``) to its message: ``fields`` then holds them as the error shape does
    for invalid input (:func:`spotlight_study.exceptions.error_body`), and the message names
    each, ``"title: Give the study a title."``, several joined by a space. A refusal about no
    input has ``message`` only."""

    code = "draft_refused"
    http_status = 400

    def __init__(self, message: str = "", *, problems: dict[str, str] | None = None):
        if problems:
            message = " ".join(f"{name}: {text}" for name, text in problems.items())
            super().__init__(message, fields={name: [text] for name, text in problems.items()})
        else:
            super().__init__(message)


def draft_skeleton(*, slug: str, title: str, language: str) -> dict[str, Any]:
    """The study file a new draft starts from: the slug, title and language, status ``draft``,
    the participant texts' defaults in that language (:func:`.languages.default_texts`: consent,
    instructions, pattern intro, task prompt; English where the platform ships no translation),
    and the sections the builder fills in, empty. Not valid yet: the builder's pages list what
    is missing."""
    return {
        "slug": slug,
        "title": title,
        "status": Study.Status.DRAFT,
        "language": language,
        **default_texts(language),
        "conditions": ["no_pattern", "pattern"],
        "training": {"key": "training", "title": "", "group1": [], "group2": [], "patterns": [],
                     "check_keywords": []},
        "settings": [],
    }


def _slug_problem(slug: str) -> str | None:
    """Why ``slug`` cannot name a new study or draft, or ``None``."""
    try:
        serializers.SlugField(max_length=80).run_validation(slug)
    except serializers.ValidationError as exc:
        return " ".join(str(m) for m in exc.detail)
    if slug in BUILDER_RESERVED_SLUGS:
        return f"“{slug}” is reserved for a page of the platform; choose another slug."
    if Study.objects.filter(slug=slug).exists():
        return f"A study with the slug “{slug}” exists already; edit it, or choose another slug."
    if StudyDraft.objects.filter(slug=slug).exists():
        return f"A draft with the slug “{slug}” exists already; open it, or choose another slug."
    return None


@transaction.atomic
def draft_start(*, slug: str, title: str, language: str = DEFAULT_LANGUAGE, user=None) -> StudyDraft:
    """Start a new draft (:func:`draft_skeleton`).

    Raises
    ------
    DraftError
        For a slug that is not a slug, is reserved, or names a study or draft already; for an
        empty title or one with no visible character (:func:`.visible_text.visible_title_check`);
        for a language code Django does not know; each problem in ``problems`` at once. Nothing
        is created.
    """
    slug, title, language = slug.strip(), title.strip(), (language or DEFAULT_LANGUAGE).strip().lower()
    # Every input is checked, so that one refusal names each problem.
    problems = {}
    problem = _slug_problem(slug)
    if problem:
        problems["slug"] = problem
    if not title:
        problems["title"] = "Give the study a title."
    elif "\x00" in title or len(title) > 200:
        problems["title"] = "At most 200 characters, and no NUL character."
    else:
        try:
            visible_title_check(title)
        except ValidationError as exc:
            problems["title"] = " ".join(exc.messages)
    if not language_known(language):
        problems["language"] = f"Unknown language code “{language}”."
    if problems:
        raise DraftError(problems=problems)
    return StudyDraft.objects.create(
        slug=slug,
        data=draft_skeleton(slug=slug, title=title, language=language),
        created_by=user,
        updated_by=user,
    )


def draft_for_study(*, study: Study, user=None) -> StudyDraft:
    """The study's draft, started from its study file (what ``export_study`` writes) when it has
    none. Raises :class:`DraftError` for a frozen study (edit a new version instead)."""
    reason = study_freeze_reason(study=study)
    if reason:
        raise DraftError(frozen_message(study=study, reason=reason))
    draft = StudyDraft.objects.filter(slug=study.slug).first()
    if draft is not None:
        return draft
    try:
        data = study_file_data(study)
    except ValueError as exc:  # no training setting: start from what the row has
        raise DraftError(str(exc)) from None
    draft, _ = StudyDraft.objects.get_or_create(
        slug=study.slug, defaults={"data": data, "created_by": user, "updated_by": user}
    )
    return draft


@transaction.atomic
def draft_save(*, slug: str, data: dict[str, Any], version: int, user=None) -> StudyDraft:
    """Store ``data`` as the draft's study file and count the version up.

    ``data["slug"]`` is kept as the draft's slug (a draft's slug does not change; "Edit as new
    version" copies under another). Raises :class:`DraftConflict` when the draft's version is no
    longer ``version`` (saved meanwhile, e.g. in another tab), ``StudyDraft.DoesNotExist`` when
    it is gone (published or deleted); nothing is changed then.
    """
    draft = StudyDraft.objects.select_for_update().get(slug=slug)
    if draft.version != version:
        raise DraftConflict(
            f"This draft was saved elsewhere (another tab or person) after you opened this page: "
            f"it is at version {draft.version}, your page at version {version}. Nothing was "
            "saved. Your input is still in the form below: copy what you need, reload the page "
            "to see the other save, and enter it again."
        )
    draft.data = {**copy.deepcopy(data), "slug": draft.slug}
    draft.version += 1
    draft.updated_by = user
    draft.save(update_fields=["data", "version", "updated_by", "updated_at"])
    return draft


def draft_problems(draft: StudyDraft) -> dict[str, list[str]]:
    """What ``import_study`` would refuse in the draft's study file, by path (``{}``: it would
    import). The messages are the import's own."""
    try:
        validate_study_data(copy.deepcopy(draft.data))
    except StudyFileError as exc:
        return exc.errors
    return {}


def _import_draft(draft: StudyDraft):
    existing = Study.objects.filter(slug=draft.slug).first()
    # A draft of an existing study carries all its settings (it began as the study's own file),
    # so a setting missing from it was removed in the builder on purpose.
    return study_import_outcome(
        data=copy.deepcopy(draft.data), replace=existing is not None, drop_missing=True
    )


def _owner_add(study: Study, user) -> None:
    # Who makes a study from the builder runs it: without this, a researcher who is not instance
    # staff could not see the study they just published (issue 40's membership).
    if user is None or is_staff_user(user):
        return
    if not StudyMember.objects.filter(study=study, user=user, role=StudyMember.Role.OWNER).exists():
        member_add(study=study, username=user.username, role=StudyMember.Role.OWNER, actor=user)


@transaction.atomic
def draft_publish(*, slug: str, version: int, user=None) -> Study:
    """Make the draft a study through the import service, then delete the draft (the study is
    now the truth; a later edit starts from its exported file). ``user``, when given and not
    instance staff, becomes the owner of a study that did not exist before (audit
    ``membership.add``).

    Raises
    ------
    DraftConflict
        If the draft was saved since ``version``.
    StudyFileError
        If the study file would not import (every problem by path).
    StudyImportError
        If the study exists and is frozen. Nothing is changed in any case.
    """
    draft = StudyDraft.objects.select_for_update().get(slug=slug)
    if draft.version != version:
        raise DraftConflict(
            f"This draft was saved elsewhere after you opened this page (now version "
            f"{draft.version}); nothing was published. Reload the page and publish again."
        )
    existed = Study.objects.filter(slug=slug).exists()
    study = _import_draft(draft).study
    draft.delete()
    if not existed:
        _owner_add(study, user)
    return study


class _Rollback(Exception):
    def __init__(self, value):
        self.value = value


def draft_as_study(draft: StudyDraft, use: Callable[[Study], T]) -> T:
    """``use(study)`` on the study the draft would publish as, inside a transaction that is then
    rolled back: the builder's preview and download see exactly what publishing would make
    (the import service's own study and settings), and nothing is kept.

    Raises :class:`~.errors.StudyFileError` or :class:`~.errors.StudyImportError` as
    :func:`draft_publish` would, before ``use`` is called.
    """
    try:
        with transaction.atomic():
            study = _import_draft(draft).study
            raise _Rollback(use(study))
    except _Rollback as done:
        return done.value


def _free_slug(base: str) -> str:
    stem = base[:74]
    for n in range(2, 1000):
        candidate = f"{stem}-v{n}"
        if _slug_problem(candidate) is None:
            return candidate
    raise DraftError(f"No free slug of the form {stem}-vN; choose one.")


@transaction.atomic
def study_new_version(*, study: Study, new_slug: str | None = None, user=None) -> StudyDraft:
    """Copy ``study`` under a new slug, as ``import_study FILE --as-slug NEW-SLUG`` does with its
    exported file, and open a draft of the copy. The copy's status is ``draft`` (it has no
    participants and no Prolific link yet). ``new_slug`` defaults to the first free
    ``<slug>-vN`` (N from 2).

    Raises :class:`DraftError` for a taken or malformed slug, and the import's errors.
    """
    slug = (new_slug or "").strip() or _free_slug(study.slug)
    problem = _slug_problem(slug)
    if problem:
        raise DraftError(problems={"slug": problem})
    try:
        data = study_file_data(study)
    except ValueError as exc:
        raise DraftError(str(exc)) from None
    data["status"] = Study.Status.DRAFT
    copy_study = study_import_outcome(data=data, as_slug=slug).study
    # The new version keeps the team of the old one; its maker owns it too.
    for member in StudyMember.objects.filter(study=study).select_related("user"):
        member_add(study=copy_study, username=member.user.username, role=member.role, actor=user)
    _owner_add(copy_study, user)
    return draft_for_study(study=copy_study, user=user)


__all__ = [
    "DraftConflict",
    "DraftError",
    "StudyImportError",
    "draft_as_study",
    "draft_for_study",
    "draft_problems",
    "draft_publish",
    "draft_save",
    "draft_skeleton",
    "draft_start",
    "study_new_version",
]
