"""The researcher API's resources: studies, data, annotation, analysis, stimuli, Prolific."""
from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from spotlight_study.annotation.services.labels import LabelInput, label_save
from spotlight_study.annotation.services.queue import assignment_next
from spotlight_study.participation.models import Participant, SurveyAnswer, TaskResponse
from spotlight_study.participation.selectors import participant_pseudonym
from spotlight_study.stimuli.models import GenerationJob, MiningJob, Output, StimulusSet
from spotlight_study.studies.models import Study

from ..annotation.conftest import complete_participants, make_user
from ..conftest import DEMO_FILE, Walker


def annotate_all(study, n_annotators: int = 2) -> None:
    """Annotators agree on every answer: identified, no tags (so every item gets a final label)."""
    for i in range(n_annotators):
        user = make_user(f"api-ann{i}", "annotators")
        while (item := assignment_next(study=study, annotator=user)) is not None:
            label_save(
                study=study, annotator=user, public_id=item.public_id,
                label=LabelInput(identified=True, surface_difference=False, no_difference=False, tags=[]),
            )


def test_studies_list_and_detail(api, demo_study):
    """Studies list with pagination keys; the detail has codes and times, never the salt."""
    body = api.get("/api/studies/").json()
    assert body["count"] == 1 and body["results"][0]["slug"] == demo_study.slug
    detail = api.get(f"/api/studies/{demo_study.slug}/").json()
    assert detail["completion_codes"]["completed"] == demo_study.completion_code
    assert detail["estimated_minutes"] == demo_study.estimated_minutes and detail["n_participants"] == 0
    assert "pseudonym_salt" not in detail and demo_study.pseudonym_salt not in json.dumps(detail)
    assert api.get("/api/studies/?status=draft").json()["count"] == 0


def test_unknown_study_is_404_in_the_error_shape(api, db):
    """Every error has {error: {status, code, message, fields}}."""
    body = api.get("/api/studies/nope/settings/").json()
    assert body == {"error": {"status": 404, "code": "not_found", "message": "No study with slug 'nope'.", "fields": {}}}


def test_import_from_json_body_and_conflict(api, demo_data, db):
    """A study file as JSON creates the study (201); importing the same slug again is 409."""
    demo_data["slug"] = "api-import"
    response = api.post("/api/studies/import/", {"study": demo_data}, format="json")
    assert response.status_code == 201 and response.json()["slug"] == "api-import"
    assert Study.objects.filter(slug="api-import").exists()
    again = api.post("/api/studies/import/", {"study": demo_data}, format="json")
    assert again.status_code == 409 and again.json()["error"]["code"] == "study_exists"
    replaced = api.post("/api/studies/import/", {"study": demo_data, "replace": True}, format="json")
    assert replaced.status_code == 201


def test_replace_that_drops_a_setting_needs_drop_missing(api, demo_data, db):
    """A replace whose file lacks a setting of the study is 409 naming it; drop_missing deletes it."""
    demo_data["slug"] = "api-drop"
    assert api.post("/api/studies/import/", {"study": demo_data}, format="json").status_code == 201
    farming = demo_data["settings"].pop()
    demo_data["annotation"]["settings"].pop(farming["key"])
    refused = api.post("/api/studies/import/", {"study": demo_data, "replace": True}, format="json")
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "study_exists"
    assert "'farming'" in refused.json()["error"]["message"] and "export_study" in refused.json()["error"]["message"]
    assert Study.objects.get(slug="api-drop").settings.filter(key="farming").exists()
    dropped = api.post(
        "/api/studies/import/", {"study": demo_data, "replace": True, "drop_missing": True}, format="json"
    )
    assert dropped.status_code == 201
    assert not Study.objects.get(slug="api-drop").settings.filter(key="farming").exists()


def test_import_of_a_json_body_that_is_not_utf8_is_400_invalid_utf8(api, db):
    """A JSON study file with bytes that are not UTF-8 gets ``invalid_utf8`` (not DRF's
    ``parse_error`` with Python's decoder message); nothing is created."""
    body = b'{"study": {"slug": "caf\xe9", "title": "x"}}'  # Latin-1 bytes, declared as nothing
    response = api.generic("POST", "/api/studies/import/", body, content_type="application/json")
    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    assert response.json() == {"error": {
        "status": 400, "code": "invalid_utf8", "fields": {},
        "message": "The request body is not valid UTF-8, so it cannot be read as JSON and nothing "
        "was saved. Send the JSON encoded as UTF-8.",
    }}
    assert Study.objects.count() == 0


def test_import_from_uploaded_yaml_file(api, db):
    """The fixture file uploaded as multipart creates the study."""
    upload = SimpleUploadedFile("study.yaml", DEMO_FILE.read_bytes(), content_type="application/yaml")
    response = api.post("/api/studies/import/", {"file": upload}, format="multipart")
    assert response.status_code == 201 and Study.objects.count() == 1


def test_invalid_study_file_names_every_bad_field(api, demo_data, db):
    """Validation errors are 400 with the study-file paths in `fields`; nothing is created."""
    demo_data["settings"][1]["group2"] = []
    del demo_data["title"]
    response = api.post("/api/studies/import/", {"study": demo_data}, format="json")
    error = response.json()["error"]
    assert response.status_code == 400 and error["code"] == "invalid_study_file"
    assert "settings[1].group2" in error["fields"] and "title" in error["fields"]
    bad_yaml = SimpleUploadedFile("s.yaml", b"slug: [unclosed", content_type="application/yaml")
    assert api.post("/api/studies/import/", {"file": bad_yaml}, format="multipart").status_code == 400
    assert Study.objects.count() == 0


def test_settings_cells_and_dashboard(api, demo_study):
    """Settings carry texts and patterns; cells count places held; the dashboard matches."""
    complete_participants(demo_study.slug, 2)
    Walker(Client(), demo_study.slug).enter()
    settings_ = api.get(f"/api/studies/{demo_study.slug}/settings/").json()
    assert [s["kind"] for s in settings_] == ["main", "main", "training"]
    assert settings_[0]["patterns"][0]["label"].endswith("(more often in group 2)")
    assert api.get(f"/api/studies/{demo_study.slug}/settings/?kind=training").json()[0]["kind"] == "training"
    cells = api.get(f"/api/studies/{demo_study.slug}/cells/").json()
    assert len(cells) == 4 and sum(c["places_held"] for c in cells) == 3
    assert sum(c["completed"] for c in cells) == 2 and sum(c["in_progress"] for c in cells) == 1
    dash = api.get(f"/api/studies/{demo_study.slug}/dashboard/").json()
    assert dash["totals"]["completed"] == 2 and len(dash["median_times"]) >= 2


def test_participants_are_pseudonymized_paginated_and_filtered(api, demo_study):
    """Participants appear as p_ pseudonyms, never with their PID, session or study ID."""
    walkers = complete_participants(demo_study.slug, 3)
    Walker(Client(), demo_study.slug).enter()
    body = api.get(f"/api/studies/{demo_study.slug}/participants/?page_size=2").json()
    assert body["count"] == 4 and len(body["results"]) == 2 and body["next"]
    every = api.get(f"/api/studies/{demo_study.slug}/participants/").content.decode()
    for p in Participant.objects.all():
        for secret in (p.prolific_pid, p.prolific_session_id, p.prolific_study_id):
            assert secret not in every
        assert participant_pseudonym(study=demo_study, prolific_pid=p.prolific_pid) in every
    assert walkers[0].pid not in every
    completed = api.get(f"/api/studies/{demo_study.slug}/participants/?status=completed").json()
    assert completed["count"] == 3 and {r["status"] for r in completed["results"]} == {"completed"}
    assert api.get(f"/api/studies/{demo_study.slug}/participants/?status=bogus").status_code == 400


def test_responses_and_survey_answers(api, demo_study):
    """Answers with export flags and, after annotation, final labels; survey answers 1..5."""
    complete_participants(demo_study.slug, 2)
    body = api.get(f"/api/studies/{demo_study.slug}/responses/?kind=main").json()
    assert body["count"] == 4
    row = body["results"][0]
    assert row["participant"].startswith("p_") and row["identified"] is None
    assert row["excluded"] is False and isinstance(row["flags"], list)
    annotate_all(demo_study)
    labelled = api.get(f"/api/studies/{demo_study.slug}/responses/?kind=main&condition=pattern").json()
    assert labelled["count"] == 2 and {r["identified"] for r in labelled["results"]} == {True}
    training = api.get(f"/api/studies/{demo_study.slug}/responses/?kind=training").json()["results"][0]
    assert training["flags"] is None and training["identified"] is True
    survey = api.get(f"/api/studies/{demo_study.slug}/survey-answers/?condition=background").json()
    assert survey["count"] > 0 and {r["response"] for r in survey["results"]} == {4}
    pids = {p.prolific_pid for p in Participant.objects.all()}
    raw = api.get(f"/api/studies/{demo_study.slug}/responses/").content.decode()
    assert not any(pid in raw for pid in pids)


def test_annotation_progress_counts_answers_nobody_has_opened(api, demo_study):
    """Progress counts an item for every saved answer before any annotator has pressed Next."""
    complete_participants(demo_study.slug, 2)
    progress = api.get(f"/api/studies/{demo_study.slug}/annotation/").json()
    assert progress["items"] == 6 and progress["status"]["final"] == 0


def test_annotation_progress_agreement_and_final_labels(api, demo_study):
    """Progress counts items; agreement rows have null for undefined statistics; final labels filter."""
    complete_participants(demo_study.slug, 2)
    annotate_all(demo_study)
    progress = api.get(f"/api/studies/{demo_study.slug}/annotation/").json()
    assert progress["items"] == 6 and progress["status"]["final"] == 6 and len(progress["annotators"]) == 2
    agreement = api.get(f"/api/studies/{demo_study.slug}/annotation/agreement/").json()["results"]
    identified = next(r for r in agreement if r["field"] == "identified" and r["scope"] == "all")
    assert identified["percent_agreement"] == 1.0
    assert identified["cohen_kappa"] is None and identified["cohen_kappa_note"]
    finals = api.get(f"/api/studies/{demo_study.slug}/annotation/final-labels/?status=final&kind=main").json()
    assert finals["count"] == 4 and finals["results"][0]["identified"] is True and finals["results"][0]["tags"] == []
    assert api.get(f"/api/studies/{demo_study.slug}/annotation/final-labels/?status=nope").status_code == 400


def test_analysis_before_annotation_is_409(api, demo_study):
    """Running the analysis on unannotated data is a 409 that says why; no results exist yet."""
    complete_participants(demo_study.slug, 1)
    assert api.get(f"/api/studies/{demo_study.slug}/analysis/").json()["error"]["code"] == "no_analysis"
    response = api.post(f"/api/studies/{demo_study.slug}/analysis/")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "not_analysable"
    assert "cannot be analysed yet" in response.json()["error"]["message"]


def test_analysis_runs_on_annotated_data(api, demo_study):
    """After annotation the analysis returns results.json, which also becomes the latest."""
    complete_participants(demo_study.slug, 8)
    annotate_all(demo_study)
    response = api.post(f"/api/studies/{demo_study.slug}/analysis/")
    assert response.status_code == 200, response.content
    results = response.json()["results"]
    assert set(results["identification"]) == {"doctor", "farming"} and results["input_sha256"]
    latest = api.get(f"/api/studies/{demo_study.slug}/analysis/").json()["results"]
    assert latest["input_sha256"] == results["input_sha256"]


def test_stimulus_generation_job_create_and_progress(api, staff_user):
    """Creating a generation job queues it (201) with its progress; the detail returns it."""
    response = api.post("/api/stimuli/generation-jobs/", {
        "title": "Smith vs Li", "prompt_group1": "Describe Dr. Smith.", "prompt_group2": "Describe Dr. Li.",
        "model": "llama3", "n_per_group": 3, "seed": 7,
    }, format="json")
    assert response.status_code == 201, response.content
    job = response.json()
    assert job["progress"]["status"] == "queued" and job["progress"]["total"] == 6
    assert GenerationJob.objects.get(pk=job["id"]).created_by == staff_user
    detail = api.get(f"/api/stimuli/generation-jobs/{job['id']}/").json()
    assert detail["progress"]["done"] == 0 and detail["stimulus_set"] == job["stimulus_set"]
    assert api.get("/api/stimuli/generation-jobs/").json()["count"] == 1
    cancelled = api.post(f"/api/stimuli/generation-jobs/{job['id']}/cancel/").json()
    assert cancelled["status"] == "cancelled"
    bad = api.post("/api/stimuli/generation-jobs/", {"title": "x"}, format="json")
    assert bad.status_code == 400 and "model" in bad.json()["error"]["fields"]


def test_stimulus_mining_job_results(api):
    """A mining job on a set of outputs is created; its patterns are listed as results."""
    stimulus_set = StimulusSet.objects.create(title="t", source="imported")
    Output.objects.bulk_create(
        [Output(stimulus_set=stimulus_set, group=g, index=i, text=f"text {g} {i}") for g in (1, 2) for i in range(3)]
    )
    response = api.post("/api/stimuli/mining-jobs/", {"stimulus_set": stimulus_set.pk, "method": "ctfidf"}, format="json")
    assert response.status_code == 201, response.content
    job_id = response.json()["id"]
    job = MiningJob.objects.get(pk=job_id)
    job.patterns.create(rank=0, clauses=[["maize"]], group=2, count_group1=0, count_group2=3, score=1.5)
    patterns = api.get(f"/api/stimuli/mining-jobs/{job_id}/patterns/").json()
    assert patterns["count"] == 1 and patterns["results"][0]["tokens"] == ["maize"]
    outputs = api.get(f"/api/stimuli/sets/{stimulus_set.pk}/outputs/?group=2").json()
    assert outputs["count"] == 3 and {o["group"] for o in outputs["results"]} == {2}
    assert api.get(f"/api/stimuli/sets/{stimulus_set.pk}/").json()["n_group1"] == 3
    assert api.get("/api/stimuli/mining-jobs/999999/").status_code == 404
    empty = StimulusSet.objects.create(title="empty", source="imported")
    conflict = api.post("/api/stimuli/mining-jobs/", {"stimulus_set": empty.pk}, format="json")
    assert conflict.status_code == 409 and "no outputs" in conflict.json()["error"]["message"]


def test_schema_and_docs(api, client, staff_user):
    """The OpenAPI 3 schema lists the API; Swagger UI renders HTML for staff."""
    schema = api.get("/api/schema/?format=json").json()
    assert schema["openapi"].startswith("3.") and "/api/studies/{slug}/participants/" in schema["paths"]
    assert not any(path.startswith("/annotate/") for path in schema["paths"])
    assert api.get("/api/schema/").status_code == 200  # YAML by default
    client.force_login(staff_user)
    docs = client.get("/api/docs/")
    assert docs.status_code == 200 and b"swagger-ui" in docs.content and b"/api/schema/" in docs.content


def test_prolific_resources_without_prolific(api, demo_study):
    """A study not on Prolific: 404 not_on_prolific; without a token, actions are 409 not 5xx."""
    assert api.get(f"/api/studies/{demo_study.slug}/prolific/").json()["error"]["code"] == "not_on_prolific"
    from spotlight_study.prolific.models import ProlificStudy

    ProlificStudy.objects.create(study=demo_study, prolific_id="a" * 24, description="d", reward_minor_units=1)
    response = api.post(f"/api/studies/{demo_study.slug}/prolific/sync/")
    assert response.status_code == 409 and response.json()["error"]["code"] == "prolific_not_configured"


@pytest.mark.usefixtures("_prolific_fake_settings")
def test_prolific_sync_review_and_bonus_through_the_api(api, demo_study, fake):
    """Sync, approve and a bonus dry run and pay through the API against the fake Prolific."""
    from spotlight_study.prolific.models import ProlificStudy

    ps = ProlificStudy.objects.create(study=demo_study, prolific_id=fake.add_study(), description="d",
                                      reward_minor_units=1)
    w = complete_participants(demo_study.slug, 1)[0]
    p = Participant.objects.get(prolific_pid=w.pid)
    fake.add_submission(ps.prolific_id, participant_id=p.prolific_pid, submission_id=p.prolific_session_id,
                        status="AWAITING REVIEW")
    base = f"/api/studies/{demo_study.slug}/prolific"
    assert api.post(f"{base}/sync/").json()["created"] == 1
    subs = api.get(f"{base}/submissions/?status=AWAITING REVIEW").json()
    assert subs["count"] == 1 and subs["results"][0]["participant"].startswith("p_")
    assert p.prolific_pid not in json.dumps(subs)
    assert api.post(f"{base}/approve/", {"dry_run": True}, format="json").json()["selected"] == 1
    assert api.post(f"{base}/approve/", {}, format="json").json()["done"] == 1
    pseudonym = subs["results"][0]["participant"]
    draft = api.post(f"{base}/bonuses/", {"csv": f"{pseudonym},0.40"}, format="json")
    assert draft.status_code == 201 and draft.json()["total_minor_units"] == 40
    assert p.prolific_pid not in draft.content.decode() and p.prolific_session_id not in draft.content.decode()
    paid = api.post(f"{base}/bonuses/{draft.json()['id']}/pay/").json()
    assert paid["status"] == "paid"
    again = api.post(f"{base}/bonuses/{draft.json()['id']}/pay/")
    assert again.status_code == 409 and again.json()["error"]["code"] == "already_sent"
    bad = api.post(f"{base}/bonuses/", {"csv": "nobody,1.00"}, format="json")
    assert bad.status_code == 400 and "line 1" in bad.json()["error"]["fields"]
    assert bad.json()["error"]["code"] == "invalid_bonus_csv"


@pytest.fixture
def fake():
    """The fake Prolific server of tests/prolific."""
    from ..prolific.fake_prolific import FakeProlific

    server = FakeProlific().start()
    yield server
    server.stop()


@pytest.fixture
def _prolific_fake_settings(settings, fake):
    """Settings pointing the Prolific client at the fake server."""
    settings.PROLIFIC_API_TOKEN = fake.token
    settings.PROLIFIC_API_BASE_URL = fake.base_url
    settings.PROLIFIC_RETRY_BACKOFF_SECONDS = 0.001



def test_pilot_participants_are_left_out_unless_asked_for(api, demo_study):
    """Participants, responses and survey lists leave pilots out by default, like the export;
    ?include_pilot=true adds them and a bad value is a 400."""
    from django.core.management import call_command

    complete_participants(demo_study.slug, 1)
    call_command("pilot", demo_study.slug, "--participants", "3")
    base = f"/api/studies/{demo_study.slug}"
    real = Participant.objects.filter(is_pilot=False)
    assert api.get(f"{base}/participants/").json()["count"] == real.count() == 1
    assert api.get(f"{base}/participants/?include_pilot=true").json()["count"] == Participant.objects.count() == 4
    real_answers = TaskResponse.objects.filter(participant__is_pilot=False, answered_at__isnull=False)
    assert api.get(f"{base}/responses/").json()["count"] == real_answers.count()
    with_pilot = api.get(f"{base}/responses/?include_pilot=true").json()["count"]
    assert with_pilot == TaskResponse.objects.filter(answered_at__isnull=False).count() > real_answers.count()
    survey = api.get(f"{base}/survey-answers/").json()["count"]
    assert survey == SurveyAnswer.objects.filter(participant__is_pilot=False).count()
    assert api.get(f"{base}/participants/?include_pilot=perhaps").status_code == 400


def test_a_study_file_over_the_size_limit_is_refused_on_its_size(api, db):
    """An uploaded study file of 10 MB (over 512 KiB) is a 400 invalid_study_file naming the
    limit, refused on its announced size; nothing is created."""
    upload = SimpleUploadedFile("big.yaml", b"# filler\n" * (10 * 1024 * 1024 // 9), content_type="application/yaml")
    response = api.post("/api/studies/import/", {"file": upload}, format="multipart")
    error = response.json()["error"]
    assert response.status_code == 400 and error["code"] == "invalid_study_file"
    assert "big.yaml: the file is 10,485,756 bytes; a study file may have at most 524,288" in error["fields"]["(file)"][0]
    assert Study.objects.count() == 0
