"""Pilot runs: simulated participants sent through the real participant flow, and their removal.

A pilot participant (``Participant.is_pilot``) goes through the same services as a real one
(:func:`.services.consent_record`, :func:`.services.instructions_confirm`,
:func:`.services.task_serve`, :func:`.services.answer_submit`, :func:`.services.survey_submit`),
in-process, so no server needs to run. Only the arrival differs: :func:`pilot_participant_create`
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

from spotlight_study.studies.models import Setting, Study
from spotlight_study.studies.selectors import (
    main_settings,
    patterns_for_condition,
    study_cells,
    training_setting,
)

from .errors import PilotError
from .models import Participant
from .selectors import PilotCounts, pilot_counts
from .services import (
    Telemetry,
    answer_submit,
    consent_record,
    instruction_check_passes,
    instructions_confirm,
    step_token,
    survey_item_keys,
    survey_submit,
    task_serve,
)

#: Most simulated participants per run from the command line; the web button allows fewer.
PILOT_MAX_PARTICIPANTS = 500
PILOT_MAX_PARTICIPANTS_WEB = 50

#: The behaviour of pilot participant i is ``PROFILES[i % 10]``: mostly careful participants,
#: and one each who is fast, fails the instruction check, pastes, leaves the tab for long, and
#: drops out after the first main task.
PROFILES = (
    "careful", "careful", "fast", "careful", "failed_check",
    "paster", "careful", "distracted", "careful", "dropout",
)

# Share of answers that name the setting's target pattern, by condition: the pattern box helps.
_IDENTIFY_RATE = {"no_pattern": 0.35, "pattern": 0.75, "pattern_with_distractors": 0.55}

_IDENTIFYING = (
    "Group {g} uses {tokens} much more often than group {o}.",
    "The texts in group {g} keep mentioning {tokens}; group {o} hardly does.",
    "Main difference: group {g} has {tokens} far more often.",
    "In group {g} I noticed {tokens} again and again, less so in group {o}. "
    "Otherwise they look alike.",
    "Group {o} rarely has {tokens}, while most texts of group {g} do.",
)
_NOT_IDENTIFYING = (
    "Group 1 texts are a bit longer and more detailed than group 2.",
    "Group 2 sounds more formal to me.",
    "I could not find a clear difference between the two groups.",
    "Group 1 uses more numbers and lists.",
    "The tone of group 2 is friendlier and more personal.",
    "Both groups say much the same thing; group 2 has shorter sentences.",
    "Group 1 seems more positive overall, group 2 more neutral.",
)
_ENDINGS = (
    "", " That is what stood out.", " Not fully sure, though.", " It was easy to see.",
    " Took me a while.",
)
_FAILING_TRAINING = (
    "I did not see any difference.",
    "The texts in group 1 are longer.",
    "Group 2 seems more cheerful.",
    "Both groups look the same to me.",
)
_COMMENTS = (
    "", "", "", "The texts were long but fine.", "Interesting task.",
    "The second setting was harder.",
)


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
    )
    # auto_now_add stamps the real clock; the pilot's timeline is simulated.
    Participant.objects.filter(pk=participant.pk).update(started_at=started_at)
    return participant


def _tokens(tokens: list[str]) -> str:
    quoted = [f'"{t}"' for t in tokens]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _at_least(text: str, min_chars: int) -> str:
    while len(text) < min_chars:
        text += " I compared the two groups text by text before writing this."
    return text


def pilot_answer(
    *, setting: Setting, condition: str, rng: random.Random, identify: bool | None = None
) -> str:
    """A varied main-task answer: names the setting's target pattern or describes something else.

    ``identify`` forces the choice; by default it is drawn with the condition's rate (the
    pattern box makes identification more likely). A setting without target patterns gets a
    non-identifying answer.
    """
    if identify is None:
        identify = rng.random() < _IDENTIFY_RATE.get(condition, 0.5)
    targets = patterns_for_condition(setting, "pattern")
    if identify and targets:
        pattern = rng.choice(targets)
        text = rng.choice(_IDENTIFYING).format(
            g=pattern.group, o=3 - pattern.group, tokens=_tokens(list(pattern.tokens))
        )
    else:
        text = rng.choice(_NOT_IDENTIFYING)
    return text + rng.choice(_ENDINGS)


def pilot_training_answer(*, setting: Setting, passes: bool, rng: random.Random) -> str:
    """A training answer that passes or fails the setting's instruction check (keywords).

    A passing answer names a keyword (or the training pattern's tokens when they contain one);
    a failing one is a vague answer checked to contain no keyword. If the keywords make that
    impossible the closest answer is returned and the real check decides.
    """
    keywords = [k for k in setting.check_keywords if k.strip()]
    if passes:
        # Answers about the training pattern first (as a participant would write them), then
        # answers that name a keyword outright.
        about_pattern = [
            template.format(g=p.group, o=3 - p.group, tokens=_tokens(list(p.tokens)))
            for p in patterns_for_condition(setting, "pattern")
            for template in _IDENTIFYING
        ]
        naming_keyword = [f"One group talks about {k} a lot, the other does not." for k in keywords]
        rng.shuffle(about_pattern)
        rng.shuffle(naming_keyword)
        candidates = about_pattern + naming_keyword
    else:
        candidates = list(_FAILING_TRAINING)
        rng.shuffle(candidates)
    for text in candidates:
        if instruction_check_passes(answer=text, keywords=keywords) == passes:
            return text
    return candidates[0] if candidates else "No answer."


def _survey(participant: Participant, rng: random.Random) -> dict[tuple[str, str], int]:
    responses = {}
    for condition, item in survey_item_keys(participant):
        if condition == "background":
            value = rng.randint(1, 5)
        else:
            # With the pattern box the task is a little easier and less effortful.
            shift = 0 if condition == "no_pattern" else 1
            base = rng.randint(2, 4) + (shift if item != "effort" else -shift)
            value = min(5, max(1, base))
        responses[(condition, item)] = value
    return responses


def _task_seconds(profile: str, short_s: float, rng: random.Random) -> float:
    """Seconds on one task: ``fast`` is under the short-time flag, ``distracted`` is long."""
    if profile == "fast":
        return rng.uniform(0.2, 0.8) * short_s
    if profile == "distracted":
        return rng.uniform(150, 400)
    return rng.uniform(max(short_s * 1.5, 40), 240)


def _time_plan(profile: str, *, study: Study, rng: random.Random) -> dict:
    """Simulated seconds per step: ``consent``, ``instructions``, ``training``, ``tasks`` (a
    list, one per main setting) and ``survey``."""
    n_tasks = len(main_settings(study))
    short_s = max(1, study.short_time_flag_seconds)
    return {
        "consent": rng.uniform(15, 60),
        "instructions": rng.uniform(30, 120),
        "training": _task_seconds(profile, short_s, rng),
        "tasks": [_task_seconds(profile, short_s, rng) for _ in range(n_tasks)],
        "survey": rng.uniform(40, 150),
    }


class _Clock:
    """The simulated time of one pilot participant, moved on step by step."""

    def __init__(self, start: datetime):
        self.now = start

    def advance(self, seconds: float) -> datetime:
        self.now = self.now + timedelta(seconds=seconds)
        return self.now


def _telemetry(profile: str, seconds: float, answer: str, rng: random.Random) -> Telemetry:
    """What the page would report for an answer written in ``seconds``: ``paster`` pastes it
    whole, ``distracted`` hides the tab most of the time and leaves it often."""
    hidden_ms = rng.randint(0, 4000)
    if profile == "distracted":
        hidden_ms = int(seconds * 1000 * rng.uniform(0.6, 0.8))
    pasted = profile == "paster"
    return Telemetry(
        paste_count=1 if pasted else 0,
        paste_chars=len(answer) if pasted else 0,
        hidden_ms=hidden_ms,
        blur_count=rng.randint(0, 2) + (3 if profile == "distracted" else 0),
    )


def _arrive(*, study: Study, plan: dict, clock: _Clock, rng: random.Random) -> Participant:
    """Create the pilot participant at ``clock.now``, give consent and confirm the instructions.

    ``consented_at`` is set to the simulated instant (the service stamps the real clock).
    """
    p = pilot_participant_create(study=study, rng=rng, started_at=clock.now)
    consented_at = clock.advance(plan["consent"])
    p = consent_record(participant_id=p.pk, token=step_token(p), agreed=True)
    Participant.objects.filter(pk=p.pk).update(consented_at=consented_at)
    clock.advance(plan["instructions"])
    return instructions_confirm(participant_id=p.pk, token=step_token(p))


def _answer(
    p: Participant, *, study: Study, text: str, seconds: float, clock: _Clock, profile: str,
    rng: random.Random,
) -> Participant:
    """Serve ``p``'s current task at ``clock.now`` and submit ``text`` ``seconds`` later."""
    text = _at_least(text, study.min_answer_chars)
    task_serve(participant=p, study=study, now=clock.now)
    return answer_submit(
        study=study, participant_id=p.pk, token=step_token(p), answer=text,
        telemetry=_telemetry(profile, seconds, text, rng), now=clock.advance(seconds),
    )


def _simulate_one(*, study: Study, index: int, rng: random.Random, end: datetime) -> Participant:
    """Send pilot participant ``index`` through the flow on a timeline ending before ``end``.

    The steps draw from ``rng`` in a fixed order (time plan, start, arrival, then each answer
    and its telemetry, then the survey), so a seed gives the same pilots.
    """
    profile = PROFILES[index % len(PROFILES)]
    plan = _time_plan(profile, study=study, rng=rng)
    total = sum(plan[k] for k in ("consent", "instructions", "training", "survey"))
    total += sum(plan["tasks"])
    clock = _Clock(end - timedelta(seconds=total + rng.uniform(5, 900)))
    p = _arrive(study=study, plan=plan, clock=clock, rng=rng)
    steps = {"study": study, "clock": clock, "profile": profile, "rng": rng}

    passes = profile != "failed_check"
    text = pilot_training_answer(setting=training_setting(study), passes=passes, rng=rng)
    p = _answer(p, text=text, seconds=plan["training"], **steps)
    for position, seconds in enumerate(plan["tasks"], start=1):
        if p.status != Participant.Status.IN_PROGRESS or p.step != Participant.Step.TASK:
            break
        if profile == "dropout" and position > 1:
            task_serve(participant=p, study=study, now=clock.now)  # saw the task, then left
            return p
        task = p.cell_plan[p.task_index]
        setting = next(s for s in main_settings(study) if s.key == task["setting"])
        text = pilot_answer(setting=setting, condition=task["condition"], rng=rng)
        p = _answer(p, text=text, seconds=seconds, **steps)
    if p.status == Participant.Status.IN_PROGRESS and p.step == Participant.Step.SURVEY:
        p = survey_submit(
            participant_id=p.pk,
            token=step_token(p),
            responses=_survey(p, rng),
            comment=rng.choice(_COMMENTS),
            now=clock.advance(plan["survey"]),
        )
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
