"""The survey step: per-condition and background items (on a 1-5 scale, or of the types in
participation/survey_items.py), and a free comment."""
from __future__ import annotations

from django.utils import timezone
from django.utils.translation import gettext

from spotlight_study.studies.pages import page_at

from ..errors import InvalidAnswer
from ..forms import SurveyForm
from ..fragments import survey_radios_html
from ..models import Participant, SurveyAnswer
from ..pilot_behaviour import pilot_comment
from ..selectors import completion_url
from ..services import survey_item_keys
from ..survey_items import answer_rows, pilot_answer
from . import keys, statements
from .spec import Outcome, PilotTurn, PreviewPage, StepSpec, Turn, advance, next_step


def survey_context(turn: Turn, form) -> dict:
    """A fresh survey's questions come as shared HTML (:func:`..fragments.survey_radios_html`);
    a kept draft's (refused or typed) are rendered with its own choices (and a refused one's
    errors). Typed drafts go to ``draft_url``. ``continues``: a page of the study file follows
    (the button says Continue rather than Finish)."""
    ctx = {"draft_url": turn.draft_url, "continues": next_step(turn.participant) != keys.DONE}
    if turn.draft is None:  # the shared HTML has no choice checked
        ctx["radios_html"] = survey_radios_html(plan=turn.plan, conditions=turn.conditions, form=form)
    return ctx


def survey_save(turn: Turn, *, responses: dict[tuple[str, str], object], comment: str) -> Outcome:
    """Save the survey of a locked participant and complete it (status ``completed``); the
    outcome sends the participant to Prolific with the completion code.

    Parameters
    ----------
    responses : dict
        ``{(condition or "background", item_key): answer}``, one for every item the
        participant was asked: 1..5 for an item without a type, else as
        :func:`..survey_items.cleaned_answer` gives it.
    comment : str
        The free comment, possibly empty.

    Raises
    ------
    InvalidAnswer
        If an item is missing or an answer does not fit its item (nothing is written).
    """
    now = turn.now or timezone.now()
    p, plan = turn.participant, turn.plan
    if set(responses) != survey_item_keys(p, plan):
        raise InvalidAnswer(gettext("Please answer every question."))
    rows = answer_rows(plan.survey, responses)  # each answer checked against its item's type
    statements.survey_inserted([
        SurveyAnswer(participant=p, condition=c, item=i, **row) for (c, i), row in sorted(rows.items())
    ])
    p.comment = comment
    if next_step(p) != keys.DONE:
        # A page the study file puts at the end (a debrief) comes before the completion code.
        advance(p, ["comment"])
        return None
    return participant_complete(turn, now, fields=["comment"])


def participant_complete(turn: Turn, now, *, fields: list[str]) -> Outcome:
    """Complete a locked participant at ``now`` (status, the done page, ``finished_at``) and
    save ``fields`` with it; the outcome sends them to Prolific's completion URL."""
    p = turn.participant
    p.status = Participant.Status.COMPLETED
    p.step = keys.DONE
    p.finished_at = now
    p.draft = None
    statements.participant_save(p, [*fields, "status", "step", "finished_at", "draft", "updated_at"])
    return Outcome(redirect=completion_url(turn.plan.completion_code))


def survey_preview(page: PreviewPage):
    """The survey of the cell's conditions."""
    conditions = list(dict.fromkeys(t.condition for t in page.cell.tasks))
    # As in the flow: a page the study file puts at the end follows the survey.
    continues = page_at(page.study.pages, "end") is not None
    return SurveyForm(survey=page.study.survey, conditions=conditions), {"continues": continues}


def survey_started_at(row: dict, answers: dict):
    """The survey starts when the last answer was saved (else at the participant's last write)."""
    saved = [answered for _served, answered in answers.values() if answered]
    return max(saved) if saved else row["updated_at"]


def survey_pilot(pt: PilotTurn) -> dict:
    """Plausible answers: with the pattern box the task is a little easier and less effortful."""
    rng = pt.rng
    responses = {}
    typed = {i["key"]: i for key in ("condition_items", "background_items")
             for i in pt.turn.plan.survey.get(key, ()) if i.get("type") not in (None, "scale")}
    for condition, item in survey_item_keys(pt.turn.participant, pt.turn.plan):
        if item in typed:
            value = pilot_answer(typed[item], rng, shift=int(condition not in ("no_pattern", "background")))
        elif condition == "background":
            value = rng.randint(1, 5)
        else:
            shift = 0 if condition == "no_pattern" else 1
            base = rng.randint(2, 4) + (shift if item != "effort" else -shift)
            value = min(5, max(1, base))
        responses[(condition, item)] = value
    comment = pilot_comment(language=pt.turn.plan.language, rng=rng)
    pt.turn.now = pt.advance(pt.seconds[keys.SURVEY])
    return {"responses": responses, "comment": comment}


SURVEY = StepSpec(
    key=keys.SURVEY,
    template="participation/survey.html",
    form=SurveyForm,
    form_kwargs=lambda turn: {"survey": turn.plan.survey, "conditions": turn.conditions},
    context=survey_context,
    values=lambda form: {"responses": form.responses(), "comment": form.cleaned_data["comment"]},
    save=survey_save,
    preview=survey_preview,
    pilot=survey_pilot,
    statements=(statements.LOCKED_READ, statements.SURVEY_INSERTED, statements.PARTICIPANT_SAVE,
                statements.TYPED_DRAFT_SAVED),
    place=lambda p: (0, gettext("Your survey answers are saved"), gettext("this is the survey")),
    started_at=survey_started_at,
    pilot_seconds=lambda profile, study, rng: rng.uniform(40, 150),
    draft_kind="survey",
)
