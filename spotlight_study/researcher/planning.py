"""The sample-size planner of the researcher study page (a GET form; the numbers come from
:func:`analysis.plan_sample_size`, so the page and ``python -m analysis plan`` agree)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django import forms

from spotlight_study.studies.models import Study
from spotlight_study.studies.selectors import study_cells

if TYPE_CHECKING:
    from analysis import SamplePlan


class PlanForm(forms.Form):
    """Expected rates, alpha, power and dropout. Only the types are checked here; the ranges
    are checked by :func:`analysis.plan_sample_size`, whose messages the page shows."""

    p_control = forms.FloatField(label="Identification rate without the pattern (P0)", initial=0.3)
    p_treatment = forms.FloatField(label="Identification rate with the pattern (P1)", initial=0.6)
    alpha = forms.FloatField(label="Alpha (one-sided)", initial=0.05)
    power = forms.FloatField(label="Power", initial=0.8)
    dropout = forms.FloatField(label="Dropout and exclusions (share)", initial=0.1)


@dataclass(frozen=True)
class PlanView:
    """What the page shows: the form, the plan (when asked and valid) and any error."""

    form: PlanForm
    plan: "SamplePlan | None"
    error: str | None
    cells: int
    conditions: int


def study_plan(*, study: Study, query) -> PlanView:
    """The planner for ``study`` from the GET ``query``; computed only when ``p_control`` is given.

    ``cells`` and ``conditions`` are the study's own (its counterbalancing cells and its
    conditions), so the total can be booked as is.
    """
    cells = len(study_cells(study))
    conditions = len(study.conditions)
    if "p_control" not in query:
        return PlanView(PlanForm(), None, None, cells, conditions)
    # analysis/ loads pandas, scipy and statsmodels (seconds, once per worker): only when the
    # page is asked for a plan, not on every dashboard view.
    from analysis import AnalysisInputError, plan_sample_size

    form = PlanForm(query)
    if not form.is_valid():
        fields = ", ".join(form.fields[name].label for name in form.errors)
        return PlanView(form, None, f"Give a number for: {fields}.", cells, conditions)
    d = form.cleaned_data
    try:
        plan = plan_sample_size(
            d["p_control"], d["p_treatment"], alpha=d["alpha"], power=d["power"],
            dropout=d["dropout"], cells=cells, conditions=conditions,
        )
    except AnalysisInputError as exc:
        return PlanView(form, None, f"{str(exc)[:1].upper()}{str(exc)[1:]}.", cells, conditions)
    return PlanView(form, plan, None, cells, conditions)
