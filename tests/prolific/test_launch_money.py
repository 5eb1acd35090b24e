"""The launch check's reward-per-hour and balance items, the balance read from the fake Prolific."""
from __future__ import annotations

import math
import statistics

import pytest

from spotlight_study.participation.models import Participant
from spotlight_study.participation.pilot import pilot_run
from spotlight_study.prolific.models import ProlificStudy
from spotlight_study.researcher.launch import launch_check
from spotlight_study.studies.selectors import study_get_with_settings

SEED = 22
WORKSPACE = "a" * 24


def _items(report, check: str):
    return [i for i in report.items if i.check == check]


def _set_reward(linked, minor: int) -> None:
    ProlificStudy.objects.filter(pk=linked.pk).update(reward_minor_units=minor)


def test_reward_below_the_minimum_and_below_the_recommended_rate_warn(linked, settings):
    """A rate under Prolific's minimum warns that it will not publish; between the two, recommended."""
    study = linked.study
    minimum = settings.PROLIFIC_MIN_REWARD_PER_HOUR_MINOR_UNITS
    recommended = settings.PROLIFIC_RECOMMENDED_REWARD_PER_HOUR_MINOR_UNITS
    for rate, words in ((minimum - 60, "minimum"), ((minimum + recommended) // 2, "recommended"),
                        (recommended + 60, None)):
        _set_reward(linked, math.ceil(rate * study.estimated_minutes / 60))
        (item,) = _items(launch_check(study=study, check_url=False), "Reward per hour")
        if words is None:
            assert item.status == "go"
        else:
            assert item.status == "warning" and words in item.detail


def test_the_pilots_median_duration_is_used_when_there_is_a_pilot(linked, settings):
    """With pilot participants the rate by their median duration is shown and the lower rate judged."""
    print(f"seed {SEED}")
    study = study_get_with_settings(slug=linked.study.slug)
    pilot_run(study=study, participants=6, seed=SEED)
    times = [(p.finished_at - p.consented_at).total_seconds()
             for p in Participant.objects.filter(study=study, is_pilot=True, status="completed")]
    median = statistics.median(times)
    (item,) = _items(launch_check(study=study, check_url=False), "Reward per hour")
    m, s = divmod(int(round(median)), 60)
    assert f"the pilot's median of {m}:{s:02d}" in item.detail
    pilot_rate = linked.reward_minor_units * 3600 / median
    assert f"{pilot_rate / 100:.2f}/h by the pilot's median" in item.detail


def test_balance_is_read_from_prolific_and_compared_with_the_cost(linked, fake_prolific, settings):
    """places x reward x (1 + fee) against available_balance: short warns, enough is go."""
    settings.PROLIFIC_WORKSPACE_ID = WORKSPACE
    study = linked.study
    cost = math.ceil(study.target_sample_size * linked.reward_minor_units * (1 + settings.PROLIFIC_FEE_RATE))
    for available, status in ((cost - 1, "warning"), (cost, "go")):
        fake_prolific.balances[WORKSPACE] = available
        (item,) = _items(launch_check(study=study, check_url=True, timeout_s=0.5), "Balance")
        assert item.status == status and f"{cost / 100:.2f}" in item.detail
    assert fake_prolific.count("GET", f"workspaces/{WORKSPACE}/balance/") == 2
    # The page's quick check does not ask Prolific.
    assert not _items(launch_check(study=study, check_url=False), "Balance")


def test_an_unknown_workspace_is_reported_not_raised(linked, fake_prolific, settings):
    """Prolific's 404 for the workspace becomes a warning that the balance was not checked."""
    settings.PROLIFIC_WORKSPACE_ID = "b" * 24
    (item,) = _items(launch_check(study=linked.study, check_url=True, timeout_s=0.5), "Balance")
    assert item.status == "warning" and "Not checked" in item.detail and "404" in item.detail


@pytest.mark.parametrize("token", [""])
def test_without_a_token_there_is_no_balance_item(linked, settings, token):
    """No API token: the API gives no balance, so the check has no balance item."""
    settings.PROLIFIC_API_TOKEN = token
    assert not _items(launch_check(study=linked.study, check_url=True, timeout_s=0.5), "Balance")
