"""How simulated pilot participants behave: their profiles and the answers, comments and
browser telemetry they submit (used by the step specs' pilot hooks, :mod:`.steps`). What they
write is in the study's language (:mod:`.pilot_phrases`)."""
from __future__ import annotations

import random

from spotlight_study.studies.models import Setting
from spotlight_study.studies.selectors import patterns_for_condition

from .pilot_phrases import ENGLISH, pilot_phrases, tokens_phrase
from .services import Telemetry, instruction_check_passes

#: The behaviour of pilot participant i is ``PROFILES[i % 10]``: mostly careful participants,
#: and one each who is fast, fails the instruction check, pastes, leaves the tab for long, and
#: drops out after the first main task.
PROFILES = (
    "careful", "careful", "fast", "careful", "failed_check",
    "paster", "careful", "distracted", "careful", "dropout",
)

# Share of answers that name the setting's target pattern, by condition: the pattern box helps.
_IDENTIFY_RATE = {"no_pattern": 0.35, "pattern": 0.75, "pattern_with_distractors": 0.55}

#: The comments pilot participants leave in the survey (mostly none), in English; a study's own
#: language: :func:`pilot_comment`.
PILOT_COMMENTS = ENGLISH.comments


def pilot_comment(*, language: str | None, rng: random.Random) -> str:
    """A survey comment (mostly none) in ``language`` (English without its phrases)."""
    return rng.choice(pilot_phrases(language).comments)


def _language(setting: Setting) -> str:
    return setting.study.language


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
    language = _language(setting)
    phrases = pilot_phrases(language)
    targets = patterns_for_condition(setting, "pattern")
    if identify and targets:
        pattern = rng.choice(targets)
        text = rng.choice(phrases.identifying).format(
            g=pattern.group, o=3 - pattern.group, tokens=tokens_phrase(list(pattern.tokens), language)
        )
    else:
        text = rng.choice(phrases.not_identifying)
    return text + rng.choice(phrases.endings)


def pilot_training_answer(*, setting: Setting, passes: bool, rng: random.Random) -> str:
    """A training answer that passes or fails the setting's instruction check (keywords).

    A passing answer names a keyword (or the training pattern's tokens when they contain one);
    a failing one is a vague answer checked to contain no keyword. If the keywords make that
    impossible the closest answer is returned and the real check decides.
    """
    keywords = [k for k in setting.check_keywords if k.strip()]
    language = _language(setting)
    phrases = pilot_phrases(language)
    if passes:
        # Answers about the training pattern first (as a participant would write them), then
        # answers that name a keyword outright.
        about_pattern = [
            template.format(g=p.group, o=3 - p.group, tokens=tokens_phrase(list(p.tokens), language))
            for p in patterns_for_condition(setting, "pattern")
            for template in phrases.identifying
        ]
        naming_keyword = [phrases.naming_keyword.format(keyword=k) for k in keywords]
        rng.shuffle(about_pattern)
        rng.shuffle(naming_keyword)
        candidates = about_pattern + naming_keyword
    else:
        candidates = list(phrases.failing_training)
        rng.shuffle(candidates)
    for text in candidates:
        if instruction_check_passes(answer=text, keywords=keywords) == passes:
            return text
    return candidates[0] if candidates else "No answer."


def pilot_telemetry(profile: str, seconds: float, answer: str, rng: random.Random) -> Telemetry:
    """What the page would report for an answer written in ``seconds``: most type it at a
    human pace (150-350 ms a character, with a few corrections); ``fast`` types it at 5-20 ms a
    character; ``paster`` pastes it whole after 5-20 s in another window; ``distracted`` hides
    the tab most of the time, leaves it often and drops the text in from elsewhere."""
    hidden_ms = rng.randint(0, 4000)
    if profile == "distracted":
        hidden_ms = int(seconds * 1000 * rng.uniform(0.6, 0.8))
    pasted = profile == "paster"
    dropped = profile == "distracted"
    typed = 0 if pasted or dropped else len(answer) + rng.randint(0, 5)
    per_char_ms = rng.uniform(5, 20) if profile == "fast" else rng.uniform(150, 350)
    return Telemetry(
        paste_count=1 if pasted else 0,
        paste_chars=len(answer) if pasted else 0,
        hidden_ms=hidden_ms,
        blur_count=rng.randint(0, 2) + (3 if profile == "distracted" else 0),
        typed_chars=typed,
        dropped_chars=len(answer) if dropped else 0,
        insertions=typed or 1,
        deletions=typed - len(answer) if typed else 0,
        typing_ms=int(typed * per_char_ms),
        largest_insert_chars=1 if typed else len(answer),
        away_before_paste_ms=rng.randint(5_000, 20_000) if pasted else 0,
    )


def pilot_task_seconds(profile: str, study, rng: random.Random) -> float:
    """Simulated seconds on one task page (s): ``fast`` stays under the study's short-time flag
    (``short_time_flag_seconds``), ``distracted`` is long, everyone else takes a plausible
    time."""
    short_s = max(1, study.short_time_flag_seconds)
    if profile == "fast":
        return rng.uniform(0.2, 0.8) * short_s
    if profile == "distracted":
        return rng.uniform(150, 400)
    return rng.uniform(max(short_s * 1.5, 40), 240)
