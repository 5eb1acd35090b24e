"""The launch check's money items: the reward per hour and whether the workspace can pay.

- **Reward per hour**: the Prolific study's reward (minor units) over the study's
  ``estimated_minutes``, and over the pilot's median duration (consent to completion of the
  completed pilot participants) when there is a pilot; the lower rate is judged. Below
  ``PROLIFIC_MIN_REWARD_PER_HOUR_MINOR_UNITS`` (Prolific refuses to publish) or below
  ``PROLIFIC_RECOMMENDED_REWARD_PER_HOUR_MINOR_UNITS`` is a warning.
- **Balance** (only in the full check, which may use the network): the cost places x reward x
  (1 + ``PROLIFIC_FEE_RATE``) against the workspace's ``available_balance``
  (``GET /workspaces/{id}/balance/``; the workspace is ``PROLIFIC_WORKSPACE_ID`` or the Prolific
  study's ``workspace``). Without a token or a workspace there is no item; an API error is a
  warning that says the balance was not checked.
"""
from __future__ import annotations

import math
import statistics

from django.conf import settings

from spotlight_study.participation.models import Participant
from spotlight_study.prolific.client import ProlificClient
from spotlight_study.prolific.credentials import study_api_token
from spotlight_study.prolific.errors import ProlificError
from spotlight_study.prolific.models import ProlificStudy
from spotlight_study.studies.models import Study

GO, WARNING = "go", "warning"


def _money(minor: float) -> str:
    return f"{minor / 100:.2f}"


def pilot_median_seconds(study: Study) -> float | None:
    """Median seconds from consent to completion of the study's completed pilot participants,
    or ``None`` without any."""
    times = Participant.objects.filter(
        study=study, is_pilot=True, status=Participant.Status.COMPLETED,
        consented_at__isnull=False, finished_at__isnull=False,
    ).values_list("consented_at", "finished_at")
    seconds = [(end - start).total_seconds() for start, end in times if end >= start]
    return statistics.median(seconds) if seconds else None


def reward_item(study: Study, ps: ProlificStudy | None) -> tuple[str, str, str] | None:
    """``(check, status, detail)`` of the reward per hour (see the module docstring), or ``None``
    when the study has no Prolific settings (the Prolific link item says so)."""
    if ps is None:
        return None
    if not ps.reward_minor_units:
        return ("Reward per hour", WARNING,
                "No reward set: configure it with `manage.py prolific_study ... configure --reward-minor-units N`.")
    rates = {f"the estimate of {study.estimated_minutes} min": ps.reward_minor_units * 60 / study.estimated_minutes}
    median = pilot_median_seconds(study)
    if median:
        m, s = divmod(int(round(median)), 60)
        rates[f"the pilot's median of {m}:{s:02d}"] = ps.reward_minor_units * 3600 / median
    basis, rate = min(rates.items(), key=lambda kv: kv[1])
    shown = "; ".join(f"{_money(r)}/h by {b}" for b, r in rates.items())
    minimum = settings.PROLIFIC_MIN_REWARD_PER_HOUR_MINOR_UNITS
    recommended = settings.PROLIFIC_RECOMMENDED_REWARD_PER_HOUR_MINOR_UNITS
    detail = f"Reward {_money(ps.reward_minor_units)}: {shown}."
    if rate < minimum:
        return ("Reward per hour", WARNING,
                f"{detail} Below Prolific's minimum of {_money(minimum)}/h (by {basis}): Prolific "
                "will not publish it; raise the reward or shorten the study.")
    if rate < recommended:
        return ("Reward per hour", WARNING,
                f"{detail} Below Prolific's recommended {_money(recommended)}/h (by {basis}).")
    return ("Reward per hour", GO, detail)


def balance_item(
    study: Study, ps: ProlificStudy | None, *, client: ProlificClient | None = None
) -> tuple[str, str, str] | None:
    """``(check, status, detail)`` of the workspace balance (network; see the module docstring),
    or ``None`` when there is nothing to check (not on Prolific, no reward, no token, no
    workspace named): the API gives no balance then."""
    if ps is None or not ps.prolific_id or not ps.reward_minor_units:
        return None
    try:
        token = study_api_token(study.pk)  # the study's own, else PROLIFIC_API_TOKEN
    except ProlificError as exc:
        return ("Balance", WARNING, f"Not checked: {exc}")
    if not token and client is None:
        return None
    places = ps.total_available_places or study.target_sample_size
    cost = math.ceil(places * ps.reward_minor_units * (1 + settings.PROLIFIC_FEE_RATE))
    own = client or ProlificClient.from_settings(token=token)
    try:
        workspace = settings.PROLIFIC_WORKSPACE_ID or str(own.study_get(ps.prolific_id).get("workspace") or "")
        available = own.workspace_balance(workspace).get("available_balance") if workspace else None
    except ProlificError as exc:
        return ("Balance", WARNING, f"Not checked: Prolific did not give the workspace balance ({exc}).")
    finally:
        if client is None:
            own.close()
    if available is None:
        return None
    detail = (f"{places} places x {_money(ps.reward_minor_units)} + {settings.PROLIFIC_FEE_RATE:.1%} fee = "
              f"{_money(cost)}; available {_money(available)}.")
    if available < cost:
        return ("Balance", WARNING, f"{detail} Top up the workspace before publishing.")
    return ("Balance", GO, detail)
