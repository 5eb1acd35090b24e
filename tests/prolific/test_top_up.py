"""``manage.py prolific_top_up``: places added after a burst of returns and an exclusion.

Eight participants complete (two per cell of the demo study's four cells, target 8); one fails
the instruction check (excluded); then three return their submission on Prolific at once. The
fake Prolific has 8 places. The seed of the choice of who returns is printed.
"""
from __future__ import annotations

import random
from collections import Counter

import pytest
from django.core.management import call_command

from spotlight_study.prolific.errors import ProlificAPIError
from spotlight_study.researcher.top_up import cell_needs, top_up
from spotlight_study.studies.models import Study

from .conftest import arrive

SEED = 2222
TARGET = 8
RETURNS = 3


@pytest.fixture
def burst(linked, fake_prolific):
    """The scenario of the module docstring; returns (participants, the returned ones, failed)."""
    Study.objects.filter(pk=linked.study.pk).update(target_sample_size=TARGET)
    fake_prolific.studies[linked.prolific_id]["total_available_places"] = TARGET
    people = []
    for i in range(TARGET):
        _, p = arrive(linked.study.slug, complete=True, **({"training": "No idea."} if i == 0 else {}))
        sub = fake_prolific.add_submission(linked.prolific_id, participant_id=p.prolific_pid,
                                           submission_id=p.prolific_session_id, status="AWAITING REVIEW")
        people.append((p, sub))
    print(f"seed {SEED}")
    returned = random.Random(SEED).sample(people[1:], RETURNS)
    for _, sub in returned:
        sub["status"] = "RETURNED"
    return [p for p, _ in people], [p for p, _ in returned], people[0][0]


def test_top_up_adds_exactly_what_the_cells_need_once(linked, burst, fake_prolific, capsys):
    """Needed = target - returned - excluded; open places are subtracted; a second run adds nothing."""
    people, returned, failed = burst
    study = Study.objects.get(pk=linked.study.pk)
    dry = top_up(study=study, dry_run=True)
    assert fake_prolific.count("PATCH", r"studies/.*/") == 0
    needed = TARGET - RETURNS - 1
    assert dry.needed == needed and dry.open == RETURNS and dry.add == needed - RETURNS
    lost = Counter(p.cell_index for p in (*returned, failed))
    for c in dry.cells:
        assert (c.quota, c.needed) == (TARGET // 4, lost[c.cell]), c
    with capsys.disabled():  # the per-cell numbers, for the reader of the test log
        print("\n" + "\n".join(dry.lines()))

    done = top_up(study=study)
    assert (done.places, done.places_after) == (TARGET, TARGET + needed - RETURNS)
    assert fake_prolific.studies[linked.prolific_id]["total_available_places"] == done.places_after
    assert fake_prolific.count("PATCH", r"studies/.*/") == 1
    again = top_up(study=study)
    assert again.add == 0 and fake_prolific.count("PATCH", r"studies/.*/") == 1
    call_command("prolific_top_up", study.slug, "--dry-run")
    out = capsys.readouterr().out
    assert "cell  quota  usable" in out and "no places added" in out


def test_pending_participants_count_as_places_filled(linked, burst, fake_prolific):
    """A participant still in progress is counted towards their cell, so nothing over-recruits."""
    people, returned, failed = burst
    study = Study.objects.get(pk=linked.study.pk)
    before = top_up(study=study, dry_run=True).needed  # after the sync of the returns
    _, p = arrive(study.slug)  # arrives and stays in progress
    fake_prolific.add_submission(linked.prolific_id, participant_id=p.prolific_pid,
                                 submission_id=p.prolific_session_id, status="ACTIVE")
    result = top_up(study=study, dry_run=True)
    assert result.needed == before - 1 and result.add == max(0, result.needed - result.open)
    assert sum(c.needed for c in cell_needs(study)) == result.needed


def test_a_patch_answered_5xx_is_retried_and_places_never_go_down(prolific_client, fake_prolific, sleeps):
    """PATCH is retried after a 503; asking for fewer places gets Prolific's 400."""
    study_id = fake_prolific.add_study(places=10)
    fake_prolific.fail("PATCH", f"studies/{study_id}/", 503)
    assert prolific_client.study_update(study_id, {"total_available_places": 12})["total_available_places"] == 12
    assert len(sleeps.delays) == 1
    with pytest.raises(ProlificAPIError) as err:
        prolific_client.study_update(study_id, {"total_available_places": 11})
    assert err.value.status_code == 400 and fake_prolific.studies[study_id]["total_available_places"] == 12
