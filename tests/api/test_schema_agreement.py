"""The researcher API does what its published schema says (issue 38, part 4): the requests
schemathesis found accepted though the schema forbids them are refused with 400, and the valid
ones it found refused are accepted. The whole schema is checked by test_schemathesis.py."""
from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from spotlight_study.stimuli.models import GenerationJob, MiningJob, StimulusSet
from spotlight_study.studies.models import Study

from ..conftest import DEMO_FILE
from .test_schemathesis import stimuli_data

JOB = {"title": "Smith vs Li", "prompt_group1": "Describe Dr. Smith.", "prompt_group2": "Describe Dr. Li.",
       "model": "llama3", "n_per_group": 3}


@pytest.mark.parametrize("query", ["page_size=null", "page_size=0", "page_size=2.5", "page_size=", "page=", "page=abc",
                                   "page=last"])
def test_a_page_or_page_size_that_is_not_a_whole_number_is_400(api, demo_study, query):
    """?page_size=null (and 0, 2.5, empty) or a page that is not a number: 400 naming the parameter."""
    response = api.get(f"/api/studies/{demo_study.slug}/participants/?{query}")
    assert response.status_code == 400, response.content
    assert query.split("=")[0] in response.json()["error"]["fields"]


def test_a_large_page_size_is_served_as_the_maximum_and_a_page_past_the_end_is_404(api, demo_study):
    """page_size=100000 is served (at most 500 rows); page 99 of one page is 404."""
    assert api.get(f"/api/studies/{demo_study.slug}/participants/?page_size=100000").status_code == 200
    assert api.get(f"/api/studies/{demo_study.slug}/participants/?page=99").status_code == 404


@pytest.mark.parametrize("path", ["responses/?position=0.5", "participants/?cell=0.5", "participants/?status=",
                                  "responses/?setting=", "annotation/final-labels/?status=",
                                  "participants/?instruction_check_passed=maybe", "responses/?setting=%20",
                                  "annotation/final-labels/?setting=%09"])
def test_filters_refuse_what_the_schema_forbids(api, demo_study, path):
    """position=0.5, an empty status or setting (or white space alone), a boolean that is not
    true/false: 400 naming it."""
    response = api.get(f"/api/studies/{demo_study.slug}/{path}")
    assert response.status_code == 400, response.content
    assert path.split("?")[1].split("=")[0] in response.json()["error"]["fields"]


def test_a_generation_job_with_seed_null_is_created(api, db):
    """seed: null (the schema's nullable seed) creates the job without a seed."""
    response = api.post("/api/stimuli/generation-jobs/", {**JOB, "seed": None}, format="json")
    assert response.status_code == 201, response.content
    assert GenerationJob.objects.get().seed is None


@pytest.mark.parametrize("body, field", [
    ({**JOB, "temprature": 0.2}, "temprature"),  # a misspelt field is not left out silently
    ({**JOB, "n_per_group": "3"}, "n_per_group"),
    ({**JOB, "temperature": True}, "temperature"),
])
def test_a_job_body_with_an_unknown_field_or_a_wrong_type_is_400(api, db, body, field):
    """An unknown field, a number sent as a string or true as a number: 400 naming it; no job."""
    response = api.post("/api/stimuli/generation-jobs/", body, format="json")
    assert response.status_code == 400 and field in response.json()["error"]["fields"], response.content
    assert GenerationJob.objects.count() == 0


def test_a_job_sent_as_a_form_is_refused(api, db):
    """The researcher API reads JSON only, as its schema says: a form body (whose "null" would
    be no seed) creates nothing (400: the form is read by the request checks before DRF, so DRF
    sees no body rather than a form it does not read)."""
    response = api.post("/api/stimuli/generation-jobs/", {**JOB, "seed": "null"}, format="multipart")
    assert response.status_code in (400, 415), response.content
    assert GenerationJob.objects.count() == 0


@pytest.mark.parametrize("params", [{"x": 1.0}, {"top_k": False}, {"fisher_p_value": 0}, {"min_overlap": 2}])
def test_mining_parameters_the_schema_forbids_are_400(api, db, params):
    """An unknown parameter, false as a number, p = 0, an overlap over 1: 400; no job."""
    ids = stimuli_data()
    response = api.post("/api/stimuli/mining-jobs/", {"stimulus_set": ids["/api/stimuli/sets/"],
                                                      "method": "ctfidf", "params": params}, format="json")
    assert response.status_code == 400, response.content
    assert MiningJob.objects.count() == 1  # the one stimuli_data made


def test_a_study_file_named_png_is_imported_by_its_content(api, db):
    """The upload's name does not decide: a YAML study file named study.png is imported (201),
    and PNG bytes are refused as not a study file (400 invalid_study_file)."""
    upload = SimpleUploadedFile("study.png", DEMO_FILE.read_bytes(), content_type="image/png")
    assert api.post("/api/studies/import/", {"file": upload}, format="multipart").status_code == 201
    png = SimpleUploadedFile("other.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", content_type="image/png")
    refused = api.post("/api/studies/import/", {"file": png, "replace": "true"}, format="multipart")
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "invalid_study_file"
    assert Study.objects.count() == 1


def test_the_outputs_of_a_missing_stimulus_set_are_404(api, db):
    """GET /api/stimuli/sets/<no such id>/outputs/: 404, not an empty list."""
    missing = (StimulusSet.objects.order_by("-pk").values_list("pk", flat=True).first() or 0) + 1
    response = api.get(f"/api/stimuli/sets/{missing}/outputs/")
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


def test_the_schema_documents_the_errors_and_refuses_unknown_fields(api, db):
    """Every operation lists 401, 403, 429 and 503; lists 400 and 404; bodies 415 and
    additionalProperties false; page_size has minimum 1."""
    schema = api.get("/api/schema/?format=json").json()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            assert {"401", "403", "429", "503"} <= set(operation["responses"]), (method, path)
            if "requestBody" in operation:
                assert {"400", "413", "415"} <= set(operation["responses"]), (method, path)
    listing = schema["paths"]["/api/studies/{slug}/participants/"]["get"]
    assert {"400", "404"} <= set(listing["responses"])
    page_size = next(p for p in listing["parameters"] if p["name"] == "page_size")
    assert page_size["schema"]["minimum"] == 1
    request = schema["components"]["schemas"]["GenerationJobCreateRequest"]
    assert request["additionalProperties"] is False


@pytest.mark.parametrize("body, field", [
    # schemathesis seed 3849639002 (CI): U+0085 then 200 characters was accepted as a model name
    # of 200 (DRF trims first); the schema's maxLength counts the text as sent.
    ({**JOB, "model": "\u0085" + "m" * 200}, "model"),
    ({**JOB, "title": " " + "t" * 200}, "title"),
    # the same run: "\x1f" alone is white space to Python (trimmed to blank, refused) but not to
    # the schema's old ``\s``; the pattern now names Python's white space, so both refuse it.
    ({**JOB, "title": "\x1f"}, "title"),
])
def test_a_job_text_the_schema_forbids_is_400(api, db, body, field):
    """A text over its limit as sent, or white space alone by Python's reading: 400 naming it; no job."""
    response = api.post("/api/stimuli/generation-jobs/", body, format="json")
    assert response.status_code == 400 and field in response.json()["error"]["fields"], response.content
    assert GenerationJob.objects.count() == 0


def test_a_job_text_at_its_limit_with_white_space_inside_is_created(api, db):
    """200 characters as sent, white space inside kept: created (the limit is not stricter than the schema)."""
    response = api.post("/api/stimuli/generation-jobs/", {**JOB, "model": "a" + " " * 198 + "b"}, format="json")
    assert response.status_code == 201, response.content


def test_a_final_label_filter_over_its_limit_as_sent_is_400(api, demo_study):
    """?setting= of 51 characters with a leading space (50 after trimming): 400 naming it."""
    response = api.get(f"/api/studies/{demo_study.slug}/annotation/final-labels/?setting=%20{'s' * 50}")
    assert response.status_code == 400 and "setting" in response.json()["error"]["fields"], response.content


def test_the_not_blank_pattern_refuses_exactly_what_python_strips_to_nothing(api, db):
    """For every code point but NUL, the published pattern refuses the one-character text if and
    only if ``str.strip()`` (DRF's trim_whitespace) leaves nothing; and it uses no class shorthand
    such as ``\\s``, whose members differ between ECMA-262 (the schema's dialect, in which
    schemathesis took "\\x1f" for a character) and Python."""
    import re

    schema = api.get("/api/schema/?format=json").json()
    pattern = schema["components"]["schemas"]["GenerationJobCreateRequest"]["properties"]["title"]["pattern"]
    assert not re.search(r"\\[sSdDwWbB]", pattern), pattern
    compiled = re.compile(pattern)
    disagreeing = [hex(code) for code in range(1, 0x110000)
                   if (compiled.fullmatch(chr(code)) is None) != (chr(code).strip() == "")]
    assert disagreeing == []
    assert compiled.fullmatch("\x1f") is None and compiled.fullmatch("\x85") is None
    assert compiled.fullmatch("\x1fa") is not None
