"""Fixtures of the study-file tests: a study that uses every field of the schema, part of it built
on the Stimuli pages (a generated set sampled at random, an imported set picked by hand)."""
from __future__ import annotations

import copy

import pytest

from spotlight_study.stimuli.importers import ImportedGroups
from spotlight_study.stimuli.jobs.runner import job_run_now
from spotlight_study.stimuli.models import GenerationJob, JobStatus, Output, StimulusSet
from spotlight_study.stimuli.services import (
    SettingChoice,
    mining_job_create,
    setting_create_from_patterns,
    stimulus_set_import,
)
from spotlight_study.stimuli.tasks import MINING
from spotlight_study.studies.models import Setting
from spotlight_study.studies.selectors import study_get_with_settings
from spotlight_study.studies.services import study_import

from ..codebooks import FULL_CODEBOOK

# Seeds of the random samples of the built settings (printed by the tests that use them).
SAMPLE_SEED = 123

HE = [f"He treats patient {i}. He smiles." for i in range(20)]
SHE = [f"She treats patient {i}. She smiles." for i in range(20)]


def _mine(stimulus_set: StimulusSet):
    job = mining_job_create(stimulus_set=stimulus_set, method="premise", pipeline="")
    job_run_now(MINING, job_id=job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.error
    return job


def _she_and_he(job):
    patterns = list(job.patterns.all())
    she = next(p for p in patterns if ["She"] in p.clauses)
    he = next(p for p in patterns if ["He"] in p.clauses)
    return she, he


def generated_set() -> StimulusSet:
    """A generated stimulus set as a finished generation job leaves it (rows written as the job
    writes them; the job itself is tested in tests/stimuli)."""
    stimulus_set = StimulusSet.objects.create(
        title="Pronouns, generated",
        source=StimulusSet.Source.GENERATED,
        group1_label="Write about a doctor called he.",
        group2_label="Write about a doctor called she.",
        source_detail="llama3 at http://127.0.0.1:9/v1",
    )
    GenerationJob.objects.create(
        stimulus_set=stimulus_set,
        status=JobStatus.SUCCEEDED,
        base_url="http://127.0.0.1:9/v1",
        model="llama3",
        prompt_group1=stimulus_set.group1_label,
        prompt_group2=stimulus_set.group2_label,
        n_per_group=len(HE),
        temperature=0.7,
        top_p=0.9,
        max_tokens=64,
        seed=42,
        stage="generate",
        done=2 * len(HE),
        total=2 * len(HE),
    )
    # Surrounding whitespace, as LLM outputs often have: the built setting strips it.
    Output.objects.bulk_create(
        Output(stimulus_set=stimulus_set, group=g, index=i, text=f"\n{text} ")
        for g, texts in ((1, HE), (2, SHE))
        for i, text in enumerate(texts)
    )
    return stimulus_set


@pytest.fixture
def full_data(demo_data) -> dict:
    """The demo file with every optional field set to a value other than its default."""
    print(f"sample seed {SAMPLE_SEED}")
    demo_data.update(
        slug="full-study",
        status="draft",
        min_answer_chars=12,
        max_answer_chars=3000,
        short_time_flag_seconds=15,
        failed_check_policy="end",
        conditions=["no_pattern", "pattern", "pattern_with_distractors"],
        task_prompt="Describe how the texts in Group 1 differ from those in Group 2.",
    )
    demo_data["annotation"].update(
        annotators_per_item=3, reservation_minutes=20, codebook=copy.deepcopy(FULL_CODEBOOK)
    )
    demo_data["settings"][0]["distractor_patterns"].append(
        {
            "tokens": ["Smith"],
            "group": 2,
            "unchecked": True,
            "unchecked_reason": "A deliberately false hint: Smith is in group 1.",
        }
    )
    unchecked = {"unchecked": True, "unchecked_reason": "A deliberately false hint."}
    demo_data["training"]["distractor_patterns"] = [{"tokens": ["moon"], "group": 1, **unchecked}]
    demo_data["training"]["patterns"].append({"tokens": ["sun"], "group": 2, **unchecked})
    demo_data["settings"][1]["patterns"].append({"tokens": ["wheat"], "group": 1, **unchecked})
    # Survey items with types (docs/study-file.md), each type's keys on both kinds of item; each
    # takes Walker.survey's answer "4".
    typed = [
        {"key": "sure", "text": "How sure are you?", "type": "likert", "labels": ["Not at all", "A little", "Somewhat", "Very"]},
        {"key": "strategy", "text": "How did you work?", "type": "choice", "options": ["Read all", "Skimmed", "Searched", "Guessed"]},
        {"key": "minutes", "text": "Minutes needed?", "type": "number", "min": 0, "max": 90, "test": "welch_t"},
    ]
    demo_data["survey"]["condition_items"] += typed
    demo_data["survey"]["background_items"] += [{**item, "key": f"bg_{item['key']}"} for item in typed]
    return demo_data


@pytest.fixture
def built_study(db, full_data):
    """``full-study``: the full file imported, then two main settings built on the Stimuli
    pages: ``pronouns`` (generated outputs, a random sample) and ``pronouns-hand`` (imported
    outputs picked by hand), and codebook tags added to one of them as the admin would."""
    study = study_import(data=full_data)
    generated = _mine(generated_set())
    she, he = _she_and_he(generated)
    setting_create_from_patterns(
        mining_job=generated,
        study=study,
        choice=SettingChoice(
            key="pronouns",
            title="Pronouns",
            target_pattern_id=she.pk,
            distractor_pattern_ids=(he.pk,),
            target_description="The doctor's pronoun.",
            n_per_group=8,
            seed=SAMPLE_SEED,
            max_chars=200,
        ),
    )
    imported = _mine(stimulus_set_import(title="Pronouns, imported", groups=ImportedGroups(HE, SHE, "he", "she")))
    she, he = _she_and_he(imported)
    outputs = list(Output.objects.filter(stimulus_set=imported.stimulus_set).order_by("group", "index"))
    picked = [outputs[3].pk, outputs[1].pk, outputs[20 + 5].pk, outputs[20 + 2].pk]
    setting_create_from_patterns(
        mining_job=imported,
        study=study,
        choice=SettingChoice(
            key="pronouns-hand",
            title="Pronouns picked by hand",
            target_pattern_id=she.pk,
            distractor_pattern_ids=(he.pk,),
            selection="hand",
            picked_output_ids=tuple(picked),
        ),
    )
    Setting.objects.filter(study=study, key="pronouns").update(
        annotation_tags=["specialty"], surface_difference="He or she."
    )
    return study_get_with_settings(slug="full-study")
