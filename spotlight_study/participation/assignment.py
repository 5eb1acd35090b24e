"""Assignment at arrival: the counterbalanced cell of a new participant, or the resume of one.

The study row is locked while the counts are read and the participant is inserted, so arrivals
in a burst are assigned one after the other (``tests/participation/test_assignment.py``).
"""
from __future__ import annotations

import random
import secrets
from datetime import datetime

from django.db import transaction
from django.db.models import Q
from django.utils.translation import gettext, gettext_lazy

from spotlight_study.identifiers import PROLIFIC_ID_RE
from spotlight_study.studies.models import Study
from spotlight_study.studies.plan import StudyPlan, study_plan_of

from .arrival import expected_study_ids
from .errors import SessionInUse, StudyFull, StudyNotOpen, WrongStudy
from .models import Participant
from spotlight_study.compiled_sql import SENTINEL_INT, SENTINEL_STR, PreparedQuery, rows_insert
from .selectors import cell_counts
from .steps.spec import first_step

# The arrival's reads, compiled once per process (compiled_sql).
_STUDY_LOCKED = PreparedQuery(
    lambda study_id: Study.objects.select_for_update().only("id", "slug", "status").filter(pk=study_id)[:1],
    study_id=SENTINEL_INT,
)
_PID_OR_SESSION = PreparedQuery(
    lambda study_id, prolific_pid, session_id: Participant.objects.filter(
        Q(prolific_pid=prolific_pid) | Q(prolific_session_id=session_id), study_id=study_id
    ),
    study_id=SENTINEL_INT,
    prolific_pid=SENTINEL_STR,
    session_id=SENTINEL_STR + "s",
)
STUDY_FULL = gettext_lazy(
    "Thank you for your interest: all places in this study have been taken, so nothing was "
    "recorded. Please return your submission on Prolific (\"Return submission\" on the study's "
    "page in your Prolific account); returning a study that is full costs you nothing."
)


def assignment_create(
    *,
    study: Study | StudyPlan,
    prolific_pid: str,
    prolific_study_id: str,
    prolific_session_id: str,
    now: datetime | None = None,
) -> Participant:
    """Assign an arriving participant to the least-filled cell, or resume an existing one.

    Parameters
    ----------
    study : Study or StudyPlan
        The study: its compiled plan (:mod:`spotlight_study.studies.plan`), or a ``Study``,
        whose plan is used.
    prolific_pid, prolific_study_id, prolific_session_id : str
        Prolific's URL parameters, 24 lowercase hex characters each.

    Returns
    -------
    Participant
        The new participant, or the existing one with this PID (a PID takes part once).

    Raises
    ------
    ValueError
        If an ID is malformed (views validate first; this is a guard).
    WrongStudy
        If the study is linked to a Prolific study (:func:`arrival.expected_study_ids`) and
        ``prolific_study_id`` is not its id; checked for resumes too.
    SessionInUse
        If another PID of this study already arrived with ``prolific_session_id``.
    StudyNotOpen
        If the study is not live and the PID has not taken part yet.
    StudyFull
        If the study has ``stop_at_target`` and the places held (completed participants and
        those in progress within the abandonment timeout, :func:`selectors.cell_counts`) reach
        ``target_sample_size``. A participant in progress may still finish after the timeout
        and then counts too, so a study (and a cell) can end one or more over the target.

    Nothing is created when an error is raised.

    Notes
    -----
    The study row is locked (``select_for_update``) for the duration, so concurrent arrivals
    are assigned one after the other and each sees the counts left by the previous one. Only
    its id and status are read: the rest comes from the plan. Cell counts follow
    :func:`selectors.holding_filter` and are counted by the database. Ties are broken with
    ``random.Random(seed)`` over the sorted tied cells; the seed, the counts and the cell are
    stored for audit.
    """
    for name, value in (
        ("PROLIFIC_PID", prolific_pid),
        ("STUDY_ID", prolific_study_id),
        ("SESSION_ID", prolific_session_id),
    ):
        if not PROLIFIC_ID_RE.match(value or ""):
            raise ValueError(f"{name} is not 24 lowercase hex characters.")
    plan = study_plan_of(study)
    cells = plan.cells
    with transaction.atomic():
        (locked,) = _STUDY_LOCKED.fetch(study_id=plan.pk) or (None,)
        if locked is None:
            raise Study.DoesNotExist(f"No study with id {plan.pk}.")
        expected = expected_study_ids(study=locked)
        if expected and prolific_study_id not in expected:
            raise WrongStudy(gettext(
                "The link that opened this page names a different Prolific study (its STUDY_ID does "
                "not match this study). Please open the study from its own page on Prolific."
            ))
        # One query for both checks: this PID's row (a resume) and any row with this session.
        # The study row lock serializes arrivals, so two PIDs cannot both pass the second.
        rows = _PID_OR_SESSION.fetch(
            study_id=plan.pk, prolific_pid=prolific_pid, session_id=prolific_session_id
        )
        existing = next((p for p in rows if p.prolific_pid == prolific_pid), None)
        if existing is not None:
            return existing
        if rows:
            raise SessionInUse(gettext(
                "The Prolific session in this link (its SESSION_ID) was already used by another "
                "participant. Please open the study from your own Prolific account."
            ))
        if locked.status != Study.Status.LIVE:
            raise StudyNotOpen(
                "This study is not accepting participants at the moment."
            )
        counts = cell_counts(study=plan, n_cells=len(cells), now=now)
        if plan.stop_at_target and sum(counts.values()) >= plan.target_sample_size:
            raise StudyFull(str(STUDY_FULL))
        seed = secrets.randbits(62)
        least = min(counts.values())
        tied = sorted(i for i, n in counts.items() if n == least)
        chosen = cells[random.Random(seed).choice(tied)]
        participant = Participant(
            study=locked,
            prolific_pid=prolific_pid,
            prolific_study_id=prolific_study_id,
            prolific_session_id=prolific_session_id,
            cell_index=chosen.index,
            cell_plan=[{"setting": t.setting, "condition": t.condition} for t in chosen.tasks],
            assignment_counts={str(k): v for k, v in counts.items()},
            assignment_seed=seed,
            shuffle_seed=secrets.randbits(62),
            step=first_step(),
        )
        rows_insert([participant], returning_pk=True)
        return participant
