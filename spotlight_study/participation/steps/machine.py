"""The dispatch of the step machine: a step page's GET, its POST, the researcher's preview and
the pilot's turns all go through the current step's :class:`.spec.StepSpec`.

Request-free: the views (``participation/views.py``, ``researcher/views.py``) turn what these
functions return into responses and messages.
"""
from __future__ import annotations

from dataclasses import dataclass

from spotlight_study.studies.plan import study_plan

from ..draft_marks import page_draft_mark
from . import draft_store as drafts
from ..errors import InvalidAnswer, StaleStep
from ..models import Participant
from .place import page_place, place_note_pattern
from ..services import STALE_MESSAGE, step_token
from . import statements
from .spec import Outcome, PilotTurn, PreviewPage, StepSpec, Turn, flow_order, spec_for, spec_named


def _draft_for(participant: Participant, token: str) -> tuple[dict | None, bool]:
    """The kept draft of the page with ``token`` (``{field: value}``, or ``None``) and whether
    it was typed (``static/js/draft.js``: shown as typed) rather than refused (shown with its
    errors). A draft belongs to one page: another page ignores it, the next step change clears
    it."""
    draft = participant.draft
    if not draft or draft.get("token") != token:
        return None, False
    return drafts.draft_data(draft), drafts.draft_is_typed(draft)


def _form(spec: StepSpec, turn: Turn):
    """The step's form: fresh, or restoring the page's kept draft. A refused draft is bound
    (its errors show next to the fields); a typed one gives the initial values (a half-typed
    answer is no error)."""
    if spec.form is None:
        return None
    kwargs = spec.form_kwargs(turn)
    if turn.draft is None:
        return spec.form(initial={"token": turn.token}, **kwargs)
    if turn.draft_typed:
        return spec.form(initial={**turn.draft, "token": turn.token}, **kwargs)
    form = spec.form({**turn.draft, "token": turn.token}, **kwargs)
    form.is_valid()  # computes the errors the template shows next to the fields
    return form


def page(
    *, participant: Participant, plan, query_string: str = "", draft_url: str = ""
) -> tuple[str, dict]:
    """The participant's current step page: ``(template, context)``.

    The context holds ``study`` (the plan), ``participant``, ``form`` (restoring the page's
    kept draft, refused or typed, if any), ``place`` (:func:`.place.page_place`),
    ``place_note`` (:func:`.place.place_note_pattern`, in the active language),
    ``draft_mark`` (:func:`..draft_marks.page_draft_mark`) and the
    step's own context (which gives ``draft_url``, where ``static/js/draft.js`` sends typed
    drafts, on the pages that have something to type). A task page records its serving (the
    one write a GET makes).
    """
    spec = spec_for(participant)
    token = step_token(participant)
    draft, typed = _draft_for(participant, token)
    turn = Turn(
        participant=participant, plan=plan, token=token, draft=draft, draft_typed=typed,
        query_string=query_string, draft_url=draft_url,
    )
    form = _form(spec, turn)
    ctx = {
        "study": plan,
        "participant": participant,
        "form_method": "post",
        "form_action": "",
        "form": form,
        "place": page_place(participant) if spec.save is not None else None,
        # How flow.js words the Back/Forward note, in the page's language.
        "place_note": place_note_pattern(),
        # Which writer stored the page's draft: draft.js puts its tab copy back only over one
        # the copy supersedes (draft_marks.py).
        "draft_mark": page_draft_mark(participant.draft, token),
    }
    ctx.update(spec.context(turn, form))
    return spec.template, ctx


@dataclass(frozen=True)
class Refused:
    """A refused post: keep ``data`` (the form's own submitted fields) as the page's draft."""

    data: dict
    message: str = ""


def submit(*, participant: Participant, plan, token: str, data) -> Outcome | Refused:
    """Submit ``data`` (the POST) to the current step of a participant the caller locked and
    whose posted ``token`` it checked (it is the current page's, and the participant is in
    progress). Returns the :class:`.spec.Outcome`, or a :class:`Refused` the caller keeps as
    the page's draft (:func:`..drafts.draft_save`). A post whose fields belong to another page,
    or that the page already saved, changes nothing (the stale-page message)."""
    spec = spec_for(participant)
    if spec.save is None:
        return Outcome()
    turn = Turn(participant=participant, plan=plan, token=token)
    form = spec.form(data, **spec.form_kwargs(turn))
    if spec.for_this_page is not None and not spec.for_this_page(form):
        # The token is current but the fields are another step's (a form restored or rebuilt
        # by the browser): never read them as this step's.
        return Outcome(message=STALE_MESSAGE, level="info")
    kept = {name: data[name] for name in form.fields if name != "token" and name in data}
    if not form.is_valid():
        return Refused(kept)
    try:
        return spec.save(turn, **spec.values(form)) or Outcome()
    except InvalidAnswer as exc:
        return Refused(kept, str(exc))
    except StaleStep as exc:
        return Outcome(message=str(exc), level="info")


def step_save(*, participant_id: int, token: str, now=None, **values) -> Participant:
    """Lock participant ``participant_id``, check that ``token`` is its current page, and save
    ``values`` (the arguments of the step's save, e.g. ``decision="agree"``) with the current
    step's save service, at ``now`` (default: now). For code that sends participants through
    the flow without HTTP (tests, scripts). Returns the participant with its new step.

    Raises ``StaleStep`` for another page or an ended participant (nothing is stored),
    ``Participant.DoesNotExist`` for an unknown id, and what the save raises
    (``InvalidAnswer``).
    """
    with statements.participant_locked(participant_id=participant_id) as participant:
        if participant is None:
            raise Participant.DoesNotExist(f"No participant {participant_id}.")
        if participant.status != Participant.Status.IN_PROGRESS or step_token(participant) != token:
            raise StaleStep(STALE_MESSAGE)
        spec = spec_for(participant)
        if spec.save is None:
            raise StaleStep(STALE_MESSAGE)
        plan = study_plan(study_id=participant.study_id, version=participant.definition_version)
        spec.save(Turn(participant=participant, plan=plan, now=now, token=token), **values)
        return participant


def pilot_turn(*, participant_id: int, study, profile: str, rng, seconds: dict, clock) -> Participant | None:
    """One pilot participant's turn at its current step, through the step's spec: lock it, let
    the spec's ``pilot`` hook choose what to submit, and save that with the spec's save.

    Returns the participant after the save, or ``None`` when it leaves the study at this step
    (the hook said so) or its step has no save (the end). ``clock`` is the pilot's simulated
    clock (``clock.now``, ``clock.advance(seconds)``); the save's instant is the simulated one.
    """
    with statements.participant_locked(participant_id=participant_id) as participant:
        spec = spec_for(participant)
        if spec.save is None or spec.pilot is None or participant.status != Participant.Status.IN_PROGRESS:
            return None
        plan = study_plan(study_id=participant.study_id, version=participant.definition_version)
        turn = Turn(participant=participant, plan=plan, now=clock.now, token=step_token(participant))
        values = spec.pilot(PilotTurn(turn, study, profile, rng, seconds, clock.advance))
        if values is None:
            return None
        spec.save(turn, **values)
        return participant


def preview_pages(n_tasks: int, *, study=None) -> list[tuple[str, str, int]]:
    """The preview's pages of a cell with ``n_tasks`` main tasks, in flow order:
    ``[(page name, step key, position)]``; a step with ``in_preview`` only when it says so of
    ``study`` (never without one)."""
    return [
        (name, key, position)
        for key in flow_order
        if _previewed(spec_named(key), study)
        for name, position in spec_named(key).pages(n_tasks)
    ]


def _previewed(spec: StepSpec, study) -> bool:
    return spec.in_preview is None or (study is not None and spec.in_preview(study))


def preview(*, study, cell, page_name: str) -> tuple[str, dict] | None:
    """The preview page ``page_name`` of ``cell``: ``(template, context)`` with ``study``,
    ``cell`` and ``form``, or ``None`` for a page the cell does not have. Records nothing."""
    pages = preview_pages(len(cell.tasks), study=study)
    for name, key, position in pages:
        if name == page_name:
            spec = spec_named(key)
            form, ctx = spec.preview(PreviewPage(study=study, cell=cell, position=position))
            return spec.template, {"study": study, "cell": cell, "form": form, **ctx}
    return None
