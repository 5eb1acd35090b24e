"""Mining jobs through the services and the ``mine_patterns`` command."""
from __future__ import annotations

import io
import json

import pytest
import spacy
from django.core.management import CommandError, call_command

from spotlight_study.stimuli.models import GenerationJob, JobStatus, MinedPattern, MiningJob, Output
from spotlight_study.stimuli.errors import StimuliError
from spotlight_study.stimuli.jobs.runner import job_run_now
from spotlight_study.stimuli.services import (
    job_resume,
    mining_job_create,
    stimulus_set_import,
    stimulus_set_import_files,
)
from spotlight_study.stimuli.importers import ImportedGroups
from spotlight_study.stimuli.tasks import MINING

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def manual_runner(settings):
    """Jobs are run by the test itself."""
    settings.STIMULI_JOB_RUNNER = "manual"


def pronoun_set():
    """A small set where group 2 says "she" and group 1 "he"."""
    g1 = [f"He treats patient {i}. He smiles." for i in range(30)] + ["She visits."]
    g2 = [f"She treats patient {i}. She smiles." for i in range(30)] + ["He visits."]
    return stimulus_set_import(title="pronouns", groups=ImportedGroups(g1, g2))


def test_kansas_kenya_maize_leans_to_kenya(farming_path):
    """On the real farming outputs, (maize) leans to Kenya (group 2) with 0 Kansas outputs; counts match a direct count."""
    stimulus_set = stimulus_set_import_files(title="farming", file1=farming_path, file2=None)
    job = mining_job_create(stimulus_set=stimulus_set, method="premise")
    job_run_now(MINING, job_id=job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert (job.n_group1, job.n_group2, job.done, job.total) == (500, 500, job.patterns.count(), job.patterns.count())
    assert set(job.timings_ms) == {"tokenize", "mine", "store"}

    nlp = spacy.blank("en")
    texts = {g: list(Output.objects.filter(stimulus_set=stimulus_set, group=g).order_by("index").values_list("text", flat=True)) for g in (1, 2)}
    tokens = {g: [{t.text for t in doc} for doc in nlp.pipe(texts[g])] for g in (1, 2)}
    patterns = {str(p.clauses): p for p in job.patterns.all()}
    maize = patterns["[['maize']]"]
    assert (maize.group, maize.count_group1) == (2, 0)
    assert maize.count_group2 == sum("maize" in t for t in tokens[2]) > 150
    assert patterns["[['Juma']]"].group == 2
    kansas_side = [p for p in job.patterns.all() if {t for c in p.clauses for t in c} & {"wheat", "Joe", "Kansas"}]
    assert kansas_side and all(p.group == 1 for p in kansas_side)
    for p in job.patterns.all():
        for g, count in ((1, p.count_group1), (2, p.count_group2)):
            assert count == sum(all(any(tok in t for tok in c) for c in p.clauses) for t in tokens[g])


def test_tokens_are_stored_on_outputs_and_reused():
    """Tokenization is stored per output with its pipeline; a rerun does not tokenize again."""
    stimulus_set = pronoun_set()
    job = mining_job_create(stimulus_set=stimulus_set, method="ctfidf", params={"top_k": 3})
    job_run_now(MINING, job_id=job.pk)
    first = Output.objects.filter(stimulus_set=stimulus_set, group=1, index=0).get()
    assert first.tokens == ["He", "treats", "patient", "0", ".", "He", "smiles", "."]
    assert first.tokenizer == ""
    Output.objects.filter(pk=first.pk).update(tokens=["marker"])  # would be overwritten by a new tokenization
    second = mining_job_create(stimulus_set=stimulus_set, method="ctfidf", params={"top_k": 3})
    job_run_now(MINING, job_id=second.pk)
    assert Output.objects.get(pk=first.pk).tokens == ["marker"]


def test_rerun_replaces_patterns_without_duplicates():
    """Running a mining job again replaces its patterns: same patterns, no duplicates."""
    job = mining_job_create(stimulus_set=pronoun_set(), method="premise")
    job_run_now(MINING, job_id=job.pk)
    before = list(MinedPattern.objects.filter(mining_job=job).values_list("rank", "clauses", "group", "count_group1", "count_group2"))
    assert before
    MiningJob.objects.filter(pk=job.pk).update(status=JobStatus.FAILED)  # e.g. a crash after storing
    job_resume(kind="mining", job_id=job.pk)
    job_run_now(MINING, job_id=job.pk)
    after = list(MinedPattern.objects.filter(mining_job=job).values_list("rank", "clauses", "group", "count_group1", "count_group2"))
    assert after == before
    she = next(p for p in job.patterns.all() if ["She"] in p.clauses)
    assert (she.group, she.count_group1, she.count_group2) == (2, 1, 30)


def test_unknown_pipeline_fails_the_job_with_a_message():
    """A job naming a spaCy pipeline that is not installed fails with a message saying so."""
    job = mining_job_create(stimulus_set=pronoun_set(), pipeline="xx_missing_pipeline")
    job_run_now(MINING, job_id=job.pk)
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED
    assert "'xx_missing_pipeline' is not installed" in job.error


def test_pipeline_setting_is_the_default(settings):
    """The STIMULI_SPACY_PIPELINE setting names the pipeline of jobs that name none."""
    settings.STIMULI_SPACY_PIPELINE = "blank:en"
    job = mining_job_create(stimulus_set=pronoun_set(), method="ctfidf")
    job_run_now(MINING, job_id=job.pk)
    job.refresh_from_db()
    assert (job.pipeline, job.status) == ("blank:en", JobStatus.SUCCEEDED)
    assert set(Output.objects.filter(stimulus_set=job.stimulus_set).values_list("tokenizer", flat=True)) == {"blank:en"}
    settings.STIMULI_SPACY_PIPELINE = "xx_missing_pipeline"
    assert mining_job_create(stimulus_set=job.stimulus_set).pipeline == "xx_missing_pipeline"


def test_mining_is_refused_while_outputs_are_generated(settings):
    """A set whose generation job is still active cannot be mined yet."""
    stimulus_set = pronoun_set()
    GenerationJob.objects.create(
        stimulus_set=stimulus_set, base_url="http://x/v1", model="m", prompt_group1="a", prompt_group2="b", n_per_group=1, total=2
    )
    with pytest.raises(StimuliError, match="still being generated"):
        mining_job_create(stimulus_set=stimulus_set)


def test_bad_parameters_are_refused():
    """Out-of-range method parameters are refused with the field named."""
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError, match="top_k"):
        mining_job_create(stimulus_set=pronoun_set(), method="ctfidf", params={"top_k": 0})


def test_mine_patterns_command_writes_the_documented_shape(tmp_path):
    """``mine_patterns A B --out`` writes a JSON list in the stable shape and shows a progress bar."""
    a = tmp_path / "smith.jsonl"
    b = tmp_path / "li.txt"
    a.write_text("".join(json.dumps({"text": f"He treats patient {i}. He smiles."}) + "\n" for i in range(30)))
    b.write_text("".join(f"She treats patient {i}. She smiles.\n" for i in range(30)))
    out = tmp_path / "patterns.json"
    err = io.StringIO()
    call_command("mine_patterns", str(a), str(b), "--out", str(out), stderr=err)
    patterns = json.loads(out.read_text())
    assert patterns
    keys = ["clauses", "group", "count_group1", "count_group2", "n_group1", "n_group2", "mdl_gain", "fisher_p", "method"]
    assert all(list(p) == keys for p in patterns)
    she = next(p for p in patterns if ["She"] in p["clauses"])
    assert (she["group"], she["count_group1"], she["count_group2"], she["n_group1"], she["n_group2"]) == (2, 0, 30, 30, 30)
    assert she["method"] == "premise" and isinstance(she["mdl_gain"], float) and 0 <= she["fisher_p"] < 0.01
    assert "tokenizing" in err.getvalue() and "60/60" in err.getvalue()


def test_mine_patterns_command_ctfidf_on_farming(farming_path, tmp_path):
    """``--method ctfidf`` on the farming file (both groups in one file) puts maize on Kenya's side."""
    out = tmp_path / "p.json"
    call_command("mine_patterns", str(farming_path), "--method", "ctfidf", "--top-k", "40", "--out", str(out), stderr=io.StringIO())
    patterns = {p["clauses"][0][0]: p for p in json.loads(out.read_text())}
    assert patterns["maize"]["group"] == 2 and patterns["maize"]["count_group1"] == 0
    assert patterns["maize"]["mdl_gain"] is None and patterns["maize"]["method"] == "ctfidf"
    assert patterns["wheat"]["group"] == 1


def test_mine_patterns_command_reports_import_errors(tmp_path):
    """An unreadable input stops the command with the importer's message."""
    a = tmp_path / "a.txt"
    a.write_bytes(b"\xff\xfe broken")
    b = tmp_path / "b.txt"
    b.write_text("x\n")
    with pytest.raises(CommandError, match="not UTF-8"):
        call_command("mine_patterns", str(a), str(b), "--out", str(tmp_path / "o.json"), stderr=io.StringIO())
