"""Pilot runs: simulated participants sent through the real participant flow, and their removal.

A pilot participant (``Participant.is_pilot``) goes through the same step machine as a real one
(:mod:`.steps`): at each step it is locked, the step spec's ``pilot`` hook says what it submits
(from its profile, below) and the spec's own save service stores it, in-process, so no server
needs to run. Only the arrival differs: :func:`pilot_participant_create`
spreads pilots evenly over the cells by the pilot counts, and never looks at or changes the
real counts (:func:`.selectors.cell_counts` ignores pilots). Pilots work in every study status,
so a draft study can be tried before it goes live.

Times are simulated, not waited for: each pilot participant gets a plausible timeline that ends
before the run, and the services are called with those instants (``now=``), so ``served_at``,
``answered_at`` and ``time_on_task_ms`` are computed by the real code from them. ``started_at``
and ``consented_at``, which the services stamp with the real clock, are then set to the
simulated instants.
"""
from __future__ import annotations

import random
import secrets
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from spotlight_study.studies.models import Study
from spotlight_study.studies.selectors import (
    main_settings,
    study_cells,
    training_setting,
)

from .errors import PilotError
from .models import Participant
from .selectors import PilotCounts, pilot_counts
from .pilot_behaviour import PROFILES, pilot_answer, pilot_training_answer  # noqa: F401 (re-exported)
from .steps import first_step, pilot_turn
from .steps.lookup import pilot_time_plan

#: Most simulated participants per run from the command line; the web button allows fewer.
PILOT_MAX_PARTICIPANTS = 500
PILOT_MAX_PARTICIPANTS_WEB = 50

@dataclass(frozen=True)
class PilotReport(PilotCounts):
    """What a pilot run made: its participants' counts (the same definition as the researcher
    page's, :func:`.selectors.pilot_counts`) and the seed of their simulated behaviour
    (``manage.py pilot --seed`` repeats the run's answers and times)."""

    seed: int = 0


def pilot_participant_create(
    *, study: Study, rng: random.Random, started_at: datetime
) -> Participant:
    """Create one pilot participant in the least-filled cell among the study's pilots.

    Ties are broken with ``rng``; the pilot counts seen are stored as ``assignment_counts``.
    Prolific IDs are random 24-hex strings. The real participants' counts are not read, and
    pilots are not counted by :func:`.selectors.cell_counts`.
    """
    cells = study_cells(study)
    counts = {c.index: 0 for c in cells}
    for index in Participant.objects.filter(study=study, is_pilot=True).values_list(
        "cell_index", flat=True
    ):
        if index in counts:
            counts[index] += 1
    least = min(counts.values())
    seed = rng.getrandbits(62)
    chosen = cells[random.Random(seed).choice(sorted(i for i, n in counts.items() if n == least))]
    participant = Participant.objects.create(
        study=study,
        prolific_pid=secrets.token_hex(12),
        prolific_study_id=secrets.token_hex(12),
        prolific_session_id=secrets.token_hex(12),
        cell_index=chosen.index,
        cell_plan=[{"setting": t.setting, "condition": t.condition} for t in chosen.tasks],
        assignment_counts={str(k): v for k, v in counts.items()},
        assignment_seed=seed,
        shuffle_seed=rng.getrandbits(62),
        is_pilot=True,
        step=first_step(),
    )
    # auto_now_add stamps the real clock; the pilot's timeline is simulated.
    Participant.objects.filter(pk=participant.pk).update(started_at=started_at)
    return participant


class _Clock:
    """The simulated time of one pilot participant, moved on step by step."""

    def __init__(self, start: datetime):
        self.now = start

    def advance(self, seconds: float) -> datetime:
        self.now = self.now + timedelta(seconds=seconds)
        return self.now


def _simulate_one(*, study: Study, index: int, rng: random.Random, end: datetime) -> Participant:
    """Send pilot participant ``index`` through the flow on a timeline ending before ``end``.

    Each step is one turn through its spec (:func:`.steps.pilot_turn`) until the participant
    finishes or leaves. The steps draw from ``rng`` in a fixed order (time plan, start, arrival,
    then each step's answer and telemetry, then the survey), so a seed gives the same pilots.
    """
    profile = PROFILES[index % len(PROFILES)]
    # Each step's spec draws its own seconds (``StepSpec.pilot_seconds``), in flow order.
    plan = pilot_time_plan(profile, study=study, rng=rng)
    # Single pages first, then the pages of several (the main tasks): the order of the sum
    # that seeded pilots have always used.
    total = sum(v for v in plan.values() if not isinstance(v, list))
    total += sum(sum(v) for v in plan.values() if isinstance(v, list))
    clock = _Clock(end - timedelta(seconds=total + rng.uniform(5, 900)))
    p = pilot_participant_create(study=study, rng=rng, started_at=clock.now)
    while True:
        moved = pilot_turn(
            participant_id=p.pk, study=study, profile=profile, rng=rng, seconds=plan, clock=clock
        )
        if moved is None:
            break
        p = moved
    p.refresh_from_db()
    return p


def pilot_run(
    *, study: Study, participants: int, seed: int | None = None, now: datetime | None = None
) -> PilotReport:
    """Send ``participants`` simulated participants through the flow of ``study``, as pilots.

    Parameters
    ----------
    study : Study
        With settings prefetched (``studies.selectors.study_get_with_settings``); any status.
    participants : int
        1..:data:`PILOT_MAX_PARTICIPANTS`.
    seed : int, optional
        Seed of the simulated behaviour (answers, times, survey); random by default. Prolific
        IDs are always random.
    now : datetime, optional
        The end of the simulated timelines (default: now).

    Returns
    -------
    PilotReport
        Counts of this run's pilot participants by final state
        (:func:`.selectors.pilot_counts`, as the researcher page counts all of them), and the
        seed used (drawn when none was given).

    Raises
    ------
    PilotError
        If ``participants`` is out of range or the study has no training or no main setting;
        nothing is created.

    Notes
    -----
    Behaviour follows :data:`PROFILES` by the participant's number among the study's pilots
    (earlier runs included). Each participant
    is one transaction, so an error leaves no half-made pilot participant.
    """
    if not 1 <= participants <= PILOT_MAX_PARTICIPANTS:
        raise PilotError(
            f"A pilot has 1 to {PILOT_MAX_PARTICIPANTS} participants, not {participants}."
        )
    if training_setting(study) is None or not main_settings(study):
        raise PilotError("The study needs a training setting and at least one main setting.")
    if seed is None:
        seed = secrets.randbits(32)
    rng = random.Random(seed)
    end = now or timezone.now()
    # Numbering goes on from earlier pilots, so several small runs still cycle all profiles.
    first = Participant.objects.filter(study=study, is_pilot=True).count()
    made = []
    for i in range(first, first + participants):
        with transaction.atomic():
            made.append(_simulate_one(study=study, index=i, rng=rng, end=end))
    counts = pilot_counts((p.status, p.instruction_check_passed) for p in made)
    return PilotReport(**asdict(counts), seed=seed)


def pilot_delete(*, study: Study) -> dict[str, int]:
    """Delete the study's pilot participants and everything made from them.

    Their answers, survey answers, annotation items, labels, label revisions, reservations and
    final labels go with them (database cascades). Tags that annotators added to a codebook
    during the pilot stay. Pilots never freeze a study, so afterwards the study is exactly as
    frozen as its real participants make it.

    Returns
    -------
    dict
        Rows deleted per model, ``{"participation.Participant": n, ...}`` (empty if there
        was no pilot data).
    """
    with transaction.atomic():
        _, per_model = Participant.objects.filter(study=study, is_pilot=True).delete()
    return {name: n for name, n in per_model.items() if n}
