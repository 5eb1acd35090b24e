"""How simulated pilot participants behave: their profiles and the answers, comments and
browser telemetry they submit (used by the step specs' pilot hooks, :mod:`.steps`)."""
from __future__ import annotations

import random

from spotlight_study.studies.models import Setting
from spotlight_study.studies.selectors import patterns_for_condition

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
#: The comments pilot participants leave in the survey (mostly none).
PILOT_COMMENTS = (
    "", "", "", "The texts were long but fine.", "Interesting task.",
    "The second setting was harder.",
)


def _tokens(tokens: list[str]) -> str:
    quoted = [f'"{t}"' for t in tokens]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


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
