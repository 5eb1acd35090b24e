"""What the check pages have in common: the instruction check's failure policies, and the step
of a page that a study file inserts to check the participant (``attention_check``,
``comprehension_quiz``; ``studies/pages.py``).

A check page asks multiple-choice questions, each with one correct option. Each try is a
:class:`..models.PageAnswer` row: created when the try's page is first served (its server time
stamp; a reload or a second tab keeps it), completed by the answer with the server's time on
the page. A try whose answers are all correct passes and the participant moves on. A failed
try leads to another try while the kind allows one (:attr:`CheckKind.tries`); after the last
failed try the kind's policy applies, the instruction check's choices: ``flag`` (move on; the
failure is stored, exported and shown in the monitor and the review), ``end``
(:func:`participant_check_end`, the failed-check completion code) or ``return`` (the study ends
as with ``end``, and the done page asks the participant to return the submission on Prolific
instead of giving a code).

The hidden ``try_number`` of the form is the try it was rendered for: a post of an earlier try
(a double submit, a stale tab, Back) changes nothing and shows the stale-page message, as a
post of an earlier step does.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django import forms
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy

from spotlight_study.studies.pages import page_at
from spotlight_study.studies.plan import study_plan

from ..errors import StaleStep
from ..forms import StepForm
from ..models import PageAnswer, Participant
from ..selectors import task_page
from ..services import STALE_MESSAGE
from . import keys, statements
from .spec import Outcome, PilotTurn, PreviewPage, StepSpec, Turn, advance, next_step
from .survey import participant_complete

#: The outcomes that end the study (the done page explains which).
ENDING_OUTCOMES = ("end", "return")


def participant_check_end(participant: Participant, now: datetime, fields: list[str]) -> None:
    """End a locked participant who failed a check under an ending policy: status
    ``failed_check``, the done page, ``finished_at`` = ``now``; ``fields`` are saved with it
    (one ``UPDATE``). The instruction check's ``end`` policy and a check page's ``end`` and
    ``return`` policies all end this way."""
    participant.status = Participant.Status.FAILED_CHECK
    participant.step = keys.DONE
    participant.finished_at = now
    participant.draft = None
    statements.participant_save(participant, list(dict.fromkeys([
        *fields, "step", "draft", "updated_at", "status", "finished_at",
    ])))


def check_ending(participant: Participant) -> PageAnswer | None:
    """The answered try of a check page whose policy ended ``participant``'s study, or ``None``
    (the done page words its end by it: a check page's, not the instruction check's)."""
    if participant.status != Participant.Status.FAILED_CHECK:
        return None
    return (
        PageAnswer.objects.filter(participant_id=participant.pk, outcome__in=ENDING_OUTCOMES)
        .order_by("-answered_at").first()
    )


@dataclass(frozen=True)
class CheckKind:
    """One kind of check page.

    ``kind`` its name in the study file; ``questions(page)`` the page's questions
    (``[{question, options, correct}]``); ``tries(page)`` how many tries it allows (>= 1);
    ``policy(page)`` what the last failed try leads to (``flag``, ``end``, ``return``);
    ``reread``: whether a later try shows the instructions again above the questions;
    ``label`` the monitor's name of the page (``"attention check"``); ``saved`` and ``here``
    its words for Back and Forward (:mod:`.place`).
    """

    kind: str
    questions: Callable[[dict], list[dict]]
    tries: Callable[[dict], int]
    policy: Callable[[dict], str]
    reread: bool
    label: Callable[[], str]
    saved: Callable[[], str]
    here: Callable[[], str]


class CheckForm(StepForm):
    """A check page's form: one radio choice per question (``q1``, ``q2``, ...; the value is the
    option's index in ``options``) and the hidden ``try_number`` it was rendered for."""

    try_number = forms.IntegerField(widget=forms.HiddenInput, min_value=1, max_value=100)

    def __init__(self, *args, questions: list[dict], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.questions = questions
        for i, q in enumerate(questions, start=1):
            self.fields[f"q{i}"] = forms.ChoiceField(
                choices=[(str(j), option) for j, option in enumerate(q["options"])],
                error_messages={"required": gettext_lazy("Please choose one of the options.")},
            )

    def chosen(self) -> list[str]:
        """The chosen options' texts, in question order (a valid form)."""
        return [
            q["options"][int(self.cleaned_data[f"q{i}"])]
            for i, q in enumerate(self.questions, start=1)
        ]

    def rows(self) -> list[dict]:
        """The questions as the template draws them: ``name``, ``id``, ``question``, ``errors``
        and ``options`` (``id``, ``value``, ``label``, ``checked``)."""
        out = []
        for i, q in enumerate(self.questions, start=1):
            name = f"q{i}"
            value = self[name].value()
            out.append({
                "name": name, "id": f"id_{name}", "question": q["question"],
                "errors": self.errors.get(name, []) if self.is_bound else [],
                "options": [
                    {"id": f"id_{name}_{j}", "value": str(j), "label": option,
                     "checked": value is not None and str(value) == str(j)}
                    for j, option in enumerate(q["options"])
                ],
            })
        return out


def _page(participant: Participant, at: str, kind: str) -> dict | None:
    version = getattr(participant, "definition_version", None)
    plan = study_plan(study_id=participant.study_id, version=version)
    return page_at(plan.pages, at, kind=kind)


def current_try(participant_id: int, key: str) -> int:
    """The number of the participant's current try at step ``key``: answered tries + 1."""
    return 1 + PageAnswer.objects.filter(
        participant_id=participant_id, step=key, answered_at__isnull=False
    ).count()


def _served(participant: Participant, key: str, kind: str, number: int, now: datetime) -> PageAnswer:
    """The row of try ``number``, created at ``now`` by its first serving (a later serving, a
    reload or a second tab, keeps the first time stamp)."""
    row, _created = PageAnswer.objects.get_or_create(
        participant_id=participant.pk, step=key, try_number=number,
        defaults={"kind": kind, "served_at": now},
    )
    return row


def check_spec(key: str, at: str, kind: CheckKind, template: str) -> StepSpec:
    """The step of a check page of ``kind`` placed ``at``, as step ``key`` (at most one page per
    place: the step passes by when the study has no such page there)."""

    def page_of(plan) -> dict:
        return page_at(plan.pages, at, kind=kind.kind) or {}

    def form_kwargs(turn: Turn) -> dict:
        return {"questions": kind.questions(page_of(turn.plan))}

    def context(turn: Turn, form) -> dict:
        page = page_of(turn.plan)
        number = current_try(turn.participant.pk, key)
        # The one write of the GET: the try's server start, kept by a reload.
        _served(turn.participant, key, kind.kind, number, turn.now or timezone.now())
        form.initial["try_number"] = number
        return _context(page, form, number, turn.plan)

    def _context(page: dict, form, number: int, study) -> dict:
        again = kind.reread and number > 1
        return {
            "check": page,
            "rows": form.rows(),
            "try_number": number,
            "tries": kind.tries(page),
            "again": again,
            # A later quiz try shows the instructions and their example again.
            "page": task_page(setting=study.training, condition="no_pattern", shuffle_seed=0)
            if again else None,
        }

    def save(turn: Turn, *, chosen: list[str], try_number: int) -> Outcome | None:
        p, now = turn.participant, turn.now or timezone.now()
        page = page_of(turn.plan)
        number = current_try(p.pk, key)
        if try_number != number:
            raise StaleStep(STALE_MESSAGE)
        row = _served(p, key, kind.kind, number, now)
        questions = kind.questions(page)
        passed = len(chosen) == len(questions) and all(
            c == q["correct"] for c, q in zip(chosen, questions)
        )
        if passed:
            outcome = "passed"
        elif number < kind.tries(page):
            outcome = "retry"
        else:
            outcome = kind.policy(page)
        row.answer = chosen[0] if kind.kind == "attention_check" else chosen
        row.passed = passed
        row.answered_at = now
        row.time_ms = max(0, int((now - row.served_at).total_seconds() * 1000))
        row.outcome = outcome
        row.save(update_fields=["answer", "passed", "answered_at", "time_ms", "outcome"])
        if outcome == "retry":
            # Same step, next try: its start is this save (the monitor's time on the step).
            p.draft = None
            statements.participant_save(p, ["draft", "updated_at"])
            return Outcome(message=gettext(
                "Not all answers were right. Please read carefully and try once more."
            ), level="info")
        if outcome in ENDING_OUTCOMES:
            participant_check_end(p, now, [])
            return None
        if next_step(p) == keys.DONE:
            return participant_complete(turn, now, fields=[])
        advance(p, [])
        return None

    def preview(page: PreviewPage):
        study_page = page_at(page.study.pages, at, kind=kind.kind) or {}
        form = CheckForm(initial={"try_number": 1}, questions=kind.questions(study_page))
        # The first try, as a participant first sees it (no instructions above it).
        return form, _context(study_page, form, 1, None)

    def pilot(pt: PilotTurn) -> dict:
        page = page_of(pt.turn.plan)
        number = current_try(pt.turn.participant.pk, key)
        _served(pt.turn.participant, key, kind.kind, number, pt.turn.now)
        pt.turn.now = pt.advance(pt.seconds[key] if number == 1 else pt.rng.uniform(5, 20))
        # The fast pilot participant skims: its first try picks the first option of each question.
        careless = pt.profile == "fast" and number == 1
        chosen = [q["options"][0] if careless else q["correct"] for q in kind.questions(page)]
        return {"chosen": chosen, "try_number": number}

    def pilot_seconds(profile, study, rng) -> float:
        page = page_at(getattr(study, "pages", ()), at, kind=kind.kind)
        return 0.0 if page is None else rng.uniform(5, 15) * len(kind.questions(page))

    def export(participant_ids: list[int]) -> dict[int, dict]:
        rows = (
            PageAnswer.objects.filter(
                participant_id__in=participant_ids, step=key, answered_at__isnull=False
            ).order_by("participant_id", "try_number")
        )
        cells: dict[int, dict] = {}
        for r in rows:  # the last try of each participant wins
            answer = r.answer if isinstance(r.answer, str) else " | ".join(r.answer or ())
            cells[r.participant_id] = {
                f"{key}_passed": r.passed, f"{key}_tries": r.try_number,
                f"{key}_answer": answer, f"{key}_ms": r.time_ms, f"{key}_outcome": r.outcome,
            }
        return cells

    return StepSpec(
        key=key,
        template=template,
        form=CheckForm,
        form_kwargs=form_kwargs,
        context=context,
        values=lambda form: {"chosen": form.chosen(), "try_number": form.cleaned_data["try_number"]},
        save=save,
        preview=preview,
        pilot=pilot,
        statements=(statements.LOCKED_READ, statements.PARTICIPANT_SAVE),
        in_preview=lambda study: page_at(study.pages, at, kind=kind.kind) is not None,
        applies=lambda participant: _page(participant, at, kind.kind) is not None,
        label=lambda task_index, n_tasks: f"{kind.label()} ({at})",
        place=lambda participant: (0, kind.saved(), kind.here()),
        pilot_seconds=pilot_seconds,
        export_columns=tuple(
            f"{key}_{column}" for column in ("passed", "tries", "answer", "ms", "outcome")
        ),
        export=export,
    )


def failed_checks(participant_ids: list[int]) -> dict[int, list[dict]]:
    """``{participant_id: [{step, kind, tries, outcome}]}``: the check pages each participant
    failed at their last answered try (the monitor and the review evidence show them), in step
    order. One query."""
    last: dict[tuple[int, str], dict] = {}
    for r in (
        PageAnswer.objects.filter(participant_id__in=participant_ids, answered_at__isnull=False)
        .order_by("participant_id", "step", "try_number")
        .values("participant_id", "step", "kind", "try_number", "passed", "outcome")
    ):
        last[(r["participant_id"], r["step"])] = r  # the last try wins
    out: dict[int, list[dict]] = {}
    for (pid, step), r in last.items():
        if r["passed"] is False:
            out.setdefault(pid, []).append(
                {"step": step, "kind": r["kind"], "tries": r["try_number"], "outcome": r["outcome"]}
            )
    return out
