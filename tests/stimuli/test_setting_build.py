"""Building a study setting from mined patterns, and seeing it in the participant flow."""
from __future__ import annotations

import random
import re
from html import escape

import pytest

from spotlight_study.stimuli.models import MinedPattern, Output, SettingSource
from spotlight_study.stimuli.errors import SettingBuildError
from spotlight_study.stimuli.services import SettingChoice, setting_create_from_patterns
from spotlight_study.studies.models import Setting
from spotlight_study.studies.selectors import study_cells, study_get_with_settings

from tests.conftest import Walker


def she_and_he(job) -> tuple[MinedPattern, MinedPattern]:
    patterns = list(job.patterns.all())
    she = next(p for p in patterns if ["She"] in p.clauses)
    he = next(p for p in patterns if ["He"] in p.clauses)
    return she, he


def build(job, study, **overrides):
    she, he = she_and_he(job)
    params = dict(key="pronouns", title="Pronouns", target_pattern_id=she.pk, distractor_pattern_ids=(he.pk,), seed=123)
    params.update(overrides)
    return setting_create_from_patterns(mining_job=job, study=study, choice=SettingChoice(**params))


def eligible(job, group, max_chars=2000):
    """The outputs of a group a sample may use, in index order."""
    outputs = Output.objects.filter(stimulus_set_id=job.stimulus_set_id, group=group).order_by("index")
    return [o for o in outputs if len(o.text) <= max_chars]


def test_random_sample_is_reproducible_from_the_recorded_seed(mined_job, demo_study):
    """Ten outputs per group are sampled with random.Random(seed) (group 1 first); patterns and the seed are recorded."""
    setting = build(mined_job, demo_study)
    rng = random.Random(123)
    expected1 = rng.sample(eligible(mined_job, 1), 10)
    expected2 = rng.sample(eligible(mined_job, 2), 10)
    assert setting.group1_texts == [o.text for o in expected1]
    assert setting.group2_texts == [o.text for o in expected2]
    assert (setting.kind, setting.position) == (Setting.Kind.MAIN, 2)
    she, he = she_and_he(mined_job)
    patterns = list(setting.patterns.order_by("position").values_list("tokens", "group", "is_distractor"))
    assert patterns == [(she.tokens, 2, False), (he.tokens, 1, True)]
    source = SettingSource.objects.get(setting=setting)
    assert (source.seed, source.selection, source.target_pattern_id) == (123, "random", she.pk)
    assert source.group1_output_ids == [o.pk for o in expected1]
    assert source.distractor_pattern_ids == [he.pk]


def test_a_seed_is_drawn_and_recorded_when_none_is_given(mined_job, demo_study):
    """Without a seed one is drawn, recorded, and reproduces the sample."""
    setting = build(mined_job, demo_study, seed=None)
    seed = SettingSource.objects.get(setting=setting).seed
    assert seed is not None
    rng = random.Random(seed)
    assert setting.group1_texts == [o.text for o in rng.sample(eligible(mined_job, 1), 10)]


def test_max_chars_limits_the_outputs_and_too_few_is_refused(mined_job, demo_study):
    """Only outputs up to max_chars are sampled; if fewer than needed remain, the build is refused."""
    limit = 33  # "She treats patient 9. She smiles." is 33 characters, with two digits 34
    setting = build(mined_job, demo_study, max_chars=limit, n_per_group=5)
    assert all(len(t) <= limit for t in setting.group1_texts + setting.group2_texts)
    allowed2 = {o.text for o in eligible(mined_job, 2, max_chars=limit)}
    assert len(allowed2) == 10 and set(setting.group2_texts) <= allowed2
    with pytest.raises(SettingBuildError, match=r"Group 1 has only 1 outputs of at most 20 characters; 10 are needed"):
        build(mined_job, demo_study, key="other", max_chars=20)


def test_outputs_picked_by_hand(mined_job, demo_study):
    """Picked outputs become the texts, in the order picked; a group left empty is refused."""
    g1 = list(Output.objects.filter(stimulus_set_id=mined_job.stimulus_set_id, group=1).order_by("index"))
    g2 = list(Output.objects.filter(stimulus_set_id=mined_job.stimulus_set_id, group=2).order_by("index"))
    picked = (g1[3].pk, g2[0].pk, g1[1].pk)
    setting = build(mined_job, demo_study, selection="hand", picked_output_ids=picked)
    assert setting.group1_texts == [g1[3].text, g1[1].text]
    assert setting.group2_texts == [g2[0].text]
    assert SettingSource.objects.get(setting=setting).seed is None
    with pytest.raises(SettingBuildError, match="Pick at least one output of group 2"):
        build(mined_job, demo_study, key="other", selection="hand", picked_output_ids=(g1[0].pk,))


def test_refused_once_the_study_has_participants(mined_job, demo_study, client):
    """A study with participants keeps its settings: adding one is refused with a clear message."""
    walker = Walker(client, demo_study.slug)
    walker.enter()
    walker.consent()
    assert demo_study.participants.count() == 1
    before = list(demo_study.settings.values_list("key", flat=True))
    with pytest.raises(SettingBuildError, match="already has participants"):
        build(mined_job, demo_study)
    assert list(demo_study.settings.values_list("key", flat=True)) == before


def test_pilot_only_study_says_to_delete_the_pilot(mined_job, demo_study):
    """With only pilot participants, the refusal says how to delete the pilot; after that the build works."""
    from django.core.management import call_command

    call_command("pilot", demo_study.slug, "--participants", "2")
    with pytest.raises(SettingBuildError, match="all pilot participants.*--delete"):
        build(mined_job, demo_study)
    call_command("pilot", demo_study.slug, "--delete")
    setting = build(mined_job, demo_study)
    assert Setting.objects.filter(study_id=demo_study.pk, kind=Setting.Kind.MAIN).count() == 3
    assert setting.key == "pronouns"


def test_taken_key_and_foreign_patterns_are_refused(mined_job, demo_study):
    """A key the study already uses, or a pattern from another job, is refused."""
    with pytest.raises(SettingBuildError, match="already has a setting with the key 'doctor'"):
        build(mined_job, demo_study, key="doctor")
    with pytest.raises(SettingBuildError, match="not from this mining job"):
        build(mined_job, demo_study, distractor_pattern_ids=(10**9,))
    with pytest.raises(SettingBuildError, match="cannot also be a distractor"):
        she, _ = she_and_he(mined_job)
        build(mined_job, demo_study, distractor_pattern_ids=(she.pk,))


def test_participant_flow_shows_the_new_setting(mined_job, demo_study, client):
    """After the build the study has a third main setting, its cells include it, and a participant works on it."""
    setting = build(mined_job, demo_study)
    study = study_get_with_settings(slug=demo_study.slug)
    cells = study_cells(study)
    assert len(cells) == 12  # 3 settings (odd): 6 Williams orders x 2 conditions
    assert all(len(c.tasks) == 3 and "pronouns" in {t.setting for t in c.tasks} for c in cells)

    walker = Walker(client, demo_study.slug)
    walker.enter()
    walker.consent()
    walker.instructions()
    walker.answer("Day and night.")
    pages = []
    for _ in range(3):
        pages.append(walker.page().content.decode())
        walker.post({walker.answer_field(): "An answer.", "client_events": ""})
    shown = [p for p in pages if escape(setting.group1_texts[0]) in p]
    assert len(shown) == 1
    assert all(escape(t) in shown[0] for t in setting.group1_texts + setting.group2_texts)


def test_build_view_saves_the_setting(staff_client, mined_job, demo_study):
    """The build page preselects the patterns from the table and saves the setting into the study."""
    she, he = she_and_he(mined_job)
    url = f"/stimuli/mining/{mined_job.pk}/build/"
    page = staff_client.get(url, {"target": she.pk, "distractors": [he.pk]}).content.decode()
    assert re.search(rf'name="target" value="{she.pk}"[^>]*checked', page)
    assert re.search(rf'name="distractors" value="{he.pk}"[^>]*checked', page)
    response = staff_client.post(
        url,
        {"study": demo_study.slug, "key": "pronouns", "title": "Pronouns", "target": she.pk, "distractors": [he.pk],
         "selection": "random", "n_per_group": 10, "seed": 5, "target_description": "gender"},
    )
    assert response.status_code == 302 and response.url == f"/researcher/{demo_study.slug}/"
    setting = demo_study.settings.get(key="pronouns")
    assert setting.target_description == "gender" and len(setting.group2_texts) == 10


def test_build_view_shows_the_refusal(staff_client, mined_job, demo_study, client):
    """When the study has participants, the build page comes back with the reason."""
    walker = Walker(client, demo_study.slug)
    walker.enter()
    walker.consent()
    she, _ = she_and_he(mined_job)
    response = staff_client.post(
        f"/stimuli/mining/{mined_job.pk}/build/",
        {"study": demo_study.slug, "key": "pronouns", "title": "Pronouns", "target": she.pk, "selection": "random", "n_per_group": 10},
    )
    assert response.status_code == 200
    assert "already has participants" in response.content.decode()
    assert not demo_study.settings.filter(key="pronouns").exists()


def test_a_setting_the_study_file_would_refuse_is_not_added(mined_job, demo_study):
    """A built setting goes through the study file's checks (issue 35): when the target pattern
    occurs in none of the texts shown, the build is refused with the import's message and
    nothing is added."""
    Output.objects.filter(stimulus_set_id=mined_job.stimulus_set_id).update(text="They treat patients.")
    picked = list(Output.objects.filter(stimulus_set_id=mined_job.stimulus_set_id).order_by("group", "index")
                  .values_list("pk", flat=True))
    with pytest.raises(SettingBuildError) as info:
        build(mined_job, demo_study, selection="hand", picked_output_ids=(picked[0], picked[-1]))
    assert "settings[2].patterns[0]: `She` occurs in none of the setting's texts" in str(info.value)
    assert not Setting.objects.filter(study=demo_study, key="pronouns").exists()
