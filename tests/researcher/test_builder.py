"""The study builder (issue 35 §2) through the test client: a draft built section by section,
validated by the study file's own validation, published through the import service, downloaded
as ``export_study``'s file; refusals (a stale version, bad input, a frozen study) change nothing."""
from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
import yaml
from django.urls import reverse

from spotlight_study.studies.drafts import DraftError, draft_save, draft_start
from spotlight_study.studies.errors import StudyFileError
from spotlight_study.studies.export import study_file_data
from spotlight_study.studies.models import Study, StudyDraft
from spotlight_study.studies.quality_flags import default_holding_flags
from spotlight_study.studies.schema import AnswerFlagsSerializer, parse_study_file, validate_study_data
from spotlight_study.studies.services import study_import

from ..codebooks import FULL_CODEBOOK
from ..conftest import DEMO_FILE, make_staff, new_id
from .builder_input import builder_steps

SLUG = "built-in-browser"


def _section(slug: str, section: str) -> str:
    return reverse("researcher:builder_section", kwargs={"slug": slug, "section": section})


def _post_section(client, slug: str, section: str, values: dict, boxes: dict):
    draft = StudyDraft.objects.get(slug=slug)
    data = {"version": str(draft.version), **values}
    for name, ticked in boxes.items():
        if name == "holding_flags":
            data[name] = default_holding_flags() if ticked is None else ticked
        elif name in ("stop_at_target", "optional"):
            if ticked:
                data[name] = "on"
        else:
            data[name] = ticked
    return client.post(_section(slug, section), data)


def _build(client, demo_data: dict, slug: str = SLUG) -> None:
    response = client.post(reverse("researcher:builder_new"),
                           {"slug": slug, "title": demo_data["title"], "language": "en"})
    assert response.status_code == 302, response.content.decode()[:2000]
    for section, values, boxes in builder_steps(demo_data):
        if section.startswith("setting-"):
            draft = StudyDraft.objects.get(slug=slug)
            client.post(reverse("researcher:builder_setting_add", kwargs={"slug": slug}), {"version": draft.version})
        response = _post_section(client, slug, section, values, boxes)
        assert response.status_code == 302, (section, response.content.decode()[:3000])


def _cleaned(data: dict) -> dict:
    """A study file as the import reads it (defaults filled in, block texts without their final
    line break), without its slug and with ``answer_flags`` left out when they are the defaults
    (export_study writes the section with every value; the fixture leaves it out)."""
    clean = _plain(validate_study_data(copy.deepcopy(data)))
    clean.pop("slug")
    defaults = {name: field.default for name, field in AnswerFlagsSerializer().fields.items()}
    if clean.get("answer_flags") == defaults:
        clean.pop("answer_flags")
    return clean


def _plain(value):
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def test_reference_study_built_section_by_section_downloads_as_the_fixture(staff_client, demo_data):
    """The reference study typed into the builder's sections downloads as a file equal to
    fixtures/spotlight-replication.yaml but for the slug, both as the import cleans it and as
    export_study writes the imported fixture."""
    _build(staff_client, demo_data)
    home = staff_client.get(reverse("researcher:builder", kwargs={"slug": SLUG}))
    assert "The draft is complete" in home.content.decode(), home.content.decode()
    response = staff_client.get(reverse("researcher:builder_download", kwargs={"slug": SLUG}))
    assert response.status_code == 200
    downloaded = yaml.safe_load(response.content.decode())
    assert downloaded["slug"] == SLUG
    assert _cleaned(downloaded) == _cleaned(demo_data)
    fixture_export = study_file_data(study_import(data=demo_data))
    fixture_export.pop("slug")
    downloaded.pop("slug")
    assert _plain(downloaded) == _plain(fixture_export)
    # Nothing was kept by the download's import (rolled back).
    assert not Study.objects.filter(slug=SLUG).exists()


def _every_part(demo_data: dict) -> dict:
    """A study file using every part the builder edits: German, typed survey items, a codebook
    of every field type with a success mapping, inserted pages, an unchecked pattern, the
    answer-quality thresholds, no holding flags, stop_at_target and two check attempts."""
    data = copy.deepcopy(demo_data)
    german = parse_study_file(Path(__file__).parents[1] / "fixtures" / "umfrage-de.yaml")
    data.update(language="de", stop_at_target=True, instruction_check_attempts=2, holding_flags=[],
                min_answer_chars=5, max_answer_chars=3000, short_time_flag_seconds=15, failed_check_policy="end",
                answer_flags={"typed_chars_per_minute_max": 900, "inserted_without_typing_share": 0.25,
                              "copied_from_shown_texts_share": 0.4, "near_duplicate_similarity": 85,
                              "away_before_paste_seconds": 5})
    data["survey"] = german["survey"]
    data["annotation"]["codebook"] = copy.deepcopy(FULL_CODEBOOK)
    data["settings"][1]["distractor_patterns"][0] = {"tokens": ["family"], "group": 1, "unchecked": True,
                                                     "unchecked_reason": "A false hint on purpose."}
    data["pages"] = [{"kind": "info", "at": "between_tasks", "title": "Pause", "text": "Take a short break.", "min_seconds": 10},
                     {"kind": "info", "at": "end", "title": "Debriefing", "text": "Thank you."}]
    validate_study_data(copy.deepcopy(data))
    return data


def test_every_part_of_the_study_file_round_trips(staff_client, demo_data):
    """A study using every part the builder edits (typed survey items, a codebook, pages, an
    unchecked pattern, thresholds) built section by section downloads as a file equal to it
    but for the slug."""
    data = _every_part(demo_data)
    _build(staff_client, data)
    response = staff_client.get(reverse("researcher:builder_download", kwargs={"slug": SLUG}))
    assert response.status_code == 200, [str(m) for m in response.wsgi_request._messages]
    downloaded = yaml.safe_load(response.content.decode())
    assert _cleaned(downloaded) == _cleaned(data)


def test_publish_makes_the_study_through_the_import(staff_client, demo_data):
    """Publishing a complete draft imports it (the study exists, the draft is gone); its
    export equals the downloaded file."""
    _build(staff_client, demo_data)
    download = staff_client.get(reverse("researcher:builder_download", kwargs={"slug": SLUG})).content.decode()
    draft = StudyDraft.objects.get(slug=SLUG)
    response = staff_client.post(reverse("researcher:builder_publish", kwargs={"slug": SLUG}), {"version": draft.version})
    assert response.status_code == 302 and response.url == reverse("researcher:study_detail", kwargs={"slug": SLUG})
    study = Study.objects.get(slug=SLUG)
    assert not StudyDraft.objects.filter(slug=SLUG).exists()
    assert _plain(study_file_data(study)) == yaml.safe_load(download)


def test_error_shown_next_to_its_field_with_the_import_message(staff_client, demo_data):
    """A completion code equal to another is saved in the draft and shown next to its field with
    the import's own message; publishing is refused and no study is made."""
    _build(staff_client, demo_data)
    values = dict(builder_steps(demo_data)[1][1])
    values["no_consent"] = values["completed"]
    assert _post_section(staff_client, SLUG, "run", values, {"holding_flags": None}).status_code == 302
    page = staff_client.get(_section(SLUG, "run")).content.decode()
    with pytest.raises(StudyFileError) as refused:
        validate_study_data({**demo_data, "completion_codes": {**demo_data["completion_codes"], "no_consent": values["completed"]}})
    message = refused.value.errors["completion_codes.no_consent"][0]
    assert message in page
    # Next to the field: the error list sits in the field's own div, before its input.
    field_div = page.split('id="id_no_consent"')[0].rsplit("<div", 1)[1]
    assert message in field_div
    draft = StudyDraft.objects.get(slug=SLUG)
    response = staff_client.post(reverse("researcher:builder_publish", kwargs={"slug": SLUG}), {"version": draft.version}, follow=True)
    assert "Not published" in response.content.decode()
    assert not Study.objects.filter(slug=SLUG).exists()


def test_pattern_error_and_live_count_next_to_the_pattern(staff_client, demo_data):
    """A pattern whose token occurs in no text gets the import's message in its row; a pattern
    row shows how many texts of each group hold it."""
    _build(staff_client, demo_data)
    values = builder_steps(demo_data)[4][1]
    values = {**values, "p-0-tokens": "banana"}
    assert _post_section(staff_client, SLUG, "setting-0", values, {}).status_code == 302
    page = staff_client.get(_section(SLUG, "setting-0")).content.decode()
    assert "`banana` occurs in none of the setting&#x27;s texts" in page
    assert "occurs in 2 of 10 texts of group 1 / 3 of 10 texts of group 2" in page  # distractor `clinic`
    live = staff_client.post(reverse("researcher:builder_pattern_check", kwargs={"slug": SLUG}),
                             {"tokens": "her", "group1": values["group1"], "group2": values["group2"]})
    assert live.json()["count"].startswith("occurs in ")


def test_stale_version_is_refused_and_changes_nothing(staff_client, demo_data):
    """Two tabs: the second save made from the same version is refused with a message (409) and
    the first tab's save stays."""
    _build(staff_client, demo_data)
    draft = StudyDraft.objects.get(slug=SLUG)
    values = {**builder_steps(demo_data)[0][1], "version": str(draft.version)}
    first = staff_client.post(_section(SLUG, "texts"), {**values, "title": "First tab"})
    assert first.status_code == 302
    second = staff_client.post(_section(SLUG, "texts"), {**values, "title": "Second tab"})
    assert second.status_code == 409
    body = second.content.decode()
    assert "saved elsewhere" in body and "Second tab" in body  # the input stays in the form
    assert StudyDraft.objects.get(slug=SLUG).data["title"] == "First tab"


@pytest.mark.parametrize("post", [
    {"version": "abc", "title": "x"},
    {"title": "no version"},
    {"version": "1", "estimated_minutes": "fifteen"},
])
def test_bad_input_gives_a_message_never_a_500(staff_client, demo_data, post):
    """A missing or malformed version changes nothing (400 with a message); a number that is not
    one is kept in the draft and named by the import's message."""
    staff_client.post(reverse("researcher:builder_new"), {"slug": SLUG, "title": "T", "language": "en"})
    before = StudyDraft.objects.get(slug=SLUG)
    section = "run" if "estimated_minutes" in post else "texts"
    response = staff_client.post(_section(SLUG, section), post)
    assert response.status_code in (302, 400)
    after = StudyDraft.objects.get(slug=SLUG)
    if response.status_code == 400:
        assert after.version == before.version and after.data == before.data
    else:
        page = staff_client.get(_section(SLUG, section)).content.decode()
        assert "A valid integer is required." in page


@pytest.mark.parametrize("slug,expected", [("team", "reserved"), ("new", "reserved"), ("Not a slug!", "slug"), ("", "slug")])
def test_new_refuses_bad_slugs(staff_client, slug, expected):
    """Starting a draft with a reserved, malformed or empty slug is refused with a message."""
    response = staff_client.post(reverse("researcher:builder_new"), {"slug": slug, "title": "T", "language": "en"})
    assert response.status_code == 400 and expected in response.content.decode()
    assert not StudyDraft.objects.exists()


@pytest.mark.parametrize("values,field", [
    ({"slug": "Not a slug!", "title": "T", "language": "en"}, "slug"),
    ({"slug": "fine-slug", "title": "\u200b", "language": "en"}, "title"),
    ({"slug": "fine-slug", "title": "T", "language": "zz-nowhere"}, "language"),
])
def test_new_puts_the_message_at_the_field_it_is_about(staff_client, values, field):
    """The refusal is shown next to its field, which is marked invalid, described by it and
    focused (a title's message was attached to the slug field, found by a try-out); the others
    are not."""
    html = staff_client.post(reverse("researcher:builder_new"), values).content.decode()
    inputs = dict(re.findall(r'<input id="id_(\w+)"([^>]*)>', html))
    assert 'aria-invalid="true"' in inputs[field] and f"id_{field}_error" in inputs[field]
    assert "autofocus" in inputs[field]
    for other in {"slug", "title", "language"} - {field}:
        assert "aria-invalid" not in inputs[other] and "_error" not in inputs[other], other
    assert len(re.findall(r'id="id_\w+_error"', html)) == 1 and 'id="new-error"' not in html
    message = re.search(rf'id="id_{field}_error">([^<]*)<', html).group(1)
    assert message and not message.startswith(f"{field}: ")  # the field says which it is


def test_new_names_every_problem_at_once(staff_client):
    """A bad slug, an empty title and an unknown language in one submit: all three fields are
    marked with their own message (a try-out found only the slug's, three submits to learn all
    three); the first one is focused; the typed values are kept; nothing is created."""
    values = {"slug": "Not a slug!", "title": "", "language": "zz"}
    response = staff_client.post(reverse("researcher:builder_new"), values)
    html = response.content.decode()
    assert response.status_code == 400
    inputs = dict(re.findall(r'<input id="id_(\w+)"([^>]*)>', html))
    for field in ("slug", "title", "language"):
        assert 'aria-invalid="true"' in inputs[field] and f'aria-describedby="id_{field}_error' in inputs[field]
        assert re.search(rf'id="id_{field}_error">[^<]+<', html), field
    assert [f for f in inputs if "autofocus" in inputs[f]] == ["slug"]
    assert 'value="Not a slug!"' in inputs["slug"] and 'value="zz"' in inputs["language"]
    assert "Unknown language code \u201czz\u201d." in html
    assert not StudyDraft.objects.exists()


def test_new_refuses_a_taken_slug(staff_client, demo_study):
    """A slug of an existing study is refused (edit that study instead)."""
    response = staff_client.post(reverse("researcher:builder_new"), {"slug": demo_study.slug, "title": "T", "language": "en"})
    assert response.status_code == 400 and "exists already" in response.content.decode()


def test_editing_a_study_starts_from_its_file_and_publish_replaces_it(staff_client, demo_study):
    """/researcher/<slug>/edit/ opens a draft holding the study's exported file; a publish
    after an edit replaces the definition (before any real consent)."""
    response = staff_client.get(reverse("researcher:builder", kwargs={"slug": demo_study.slug}))
    assert response.status_code == 200
    draft = StudyDraft.objects.get(slug=demo_study.slug)
    assert draft.data == study_file_data(demo_study)
    data = {**draft.data, "title": "A new title"}
    draft_save(slug=draft.slug, data=data, version=draft.version)
    staff_client.post(reverse("researcher:builder_publish", kwargs={"slug": demo_study.slug}), {"version": draft.version + 1})
    assert Study.objects.get(slug=demo_study.slug).title == "A new title"


def test_frozen_study_cannot_be_edited_and_copies_as_new_version(staff_client, demo_study, walker):
    """Once a real participant consented, the builder refuses the study (409 page with "Edit as
    new version"); one click copies it under a new slug, as import_study --as-slug does."""
    walker.enter()
    walker.consent()
    response = staff_client.get(reverse("researcher:builder", kwargs={"slug": demo_study.slug}))
    assert response.status_code == 409 and "Edit as new version" in response.content.decode()
    for section in ("texts", "run"):
        assert staff_client.post(_section(demo_study.slug, section), {"version": "1", "title": "x"}).status_code == 409
    response = staff_client.post(reverse("researcher:builder_new_version", kwargs={"slug": demo_study.slug}))
    new_slug = f"{demo_study.slug}-v2"
    assert response.status_code == 302 and response.url == reverse("researcher:builder", kwargs={"slug": new_slug})
    copy_data = study_file_data(Study.objects.get(slug=new_slug))
    original = study_file_data(demo_study)
    assert copy_data.pop("status") == "draft"
    original.pop("status")
    assert {**copy_data, "slug": None} == {**original, "slug": None}


def test_preview_of_every_page_of_every_cell(staff_client, demo_data):
    """The builder's preview lists the cells and shows every page of each, records nothing."""
    _build(staff_client, demo_data)
    index = staff_client.get(reverse("researcher:builder_preview", kwargs={"slug": SLUG}))
    assert index.status_code == 200
    body = index.content.decode()
    assert body.count("/edit/preview/") >= 4
    from spotlight_study.participation import steps

    for cell in range(4):
        for name, _, _ in steps.preview_pages(2):
            page = staff_client.get(reverse("researcher:builder_preview_page", kwargs={"slug": SLUG, "cell": cell, "page": name}))
            assert page.status_code == 200, (cell, name)
            assert "nothing is recorded" in page.content.decode()
    assert not Study.objects.filter(slug=SLUG).exists()


def test_builder_pages_need_a_researcher(client, db):
    """Anonymous users go to the login page."""
    draft_start(slug=SLUG, title="T")
    for url in (reverse("researcher:builder_new"), reverse("researcher:builder", kwargs={"slug": SLUG}), _section(SLUG, "texts")):
        assert client.get(url).status_code == 302


def test_demo_file_is_the_reference(demo_data):
    """The builder's reference study is the demo file (guards the helpers above)."""
    assert DEMO_FILE.name == "spotlight-replication.yaml" and demo_data["slug"] == "spotlight-replication"
    assert new_id()


def test_groups_taken_from_a_stimulus_set(staff_client, demo_data):
    """A setting's groups taken from a stimulus set of the Stimuli pages: the first N outputs of
    each group, in index order."""
    from spotlight_study.stimuli.models import Output, StimulusSet

    stimulus_set = StimulusSet.objects.create(title="Doctors", source=StimulusSet.Source.IMPORTED)
    for group, texts in ((1, demo_data["settings"][0]["group1"]), (2, demo_data["settings"][0]["group2"])):
        Output.objects.bulk_create(Output(stimulus_set=stimulus_set, group=group, index=i, text=t) for i, t in enumerate(texts))
    _build(staff_client, demo_data)
    values = {**builder_steps(demo_data)[4][1], "group1": "", "group2": "",
              "stimulus_set": str(stimulus_set.pk), "stimulus_per_group": "4"}
    page = staff_client.get(_section(SLUG, "setting-0")).content.decode()
    assert "Doctors (10 + 10 outputs)" in page
    assert _post_section(staff_client, SLUG, "setting-0", values, {}).status_code == 302
    setting = StudyDraft.objects.get(slug=SLUG).data["settings"][0]
    assert setting["group1"] == demo_data["settings"][0]["group1"][:4]
    assert setting["group2"] == demo_data["settings"][0]["group2"][:4]


def test_nul_characters_are_refused_with_a_message(staff_client, demo_data):
    """A NUL in a typed field or an uploaded file of texts is refused (400, the field named),
    nothing saved: PostgreSQL could not store it."""
    response = staff_client.post(reverse("researcher:builder_new"), {"slug": SLUG, "title": "A\x00B", "language": "en"})
    assert response.status_code == 400 and not StudyDraft.objects.exists()
    _build(staff_client, demo_data)
    before = StudyDraft.objects.get(slug=SLUG)
    response = _post_section(staff_client, SLUG, "texts", {**builder_steps(demo_data)[0][1], "consent_text": "a\x00b"}, {})
    assert response.status_code == 400 and "Null characters are not allowed." in response.content.decode()
    from django.core.files.uploadedfile import SimpleUploadedFile

    values = {**builder_steps(demo_data)[4][1], "group1_file": SimpleUploadedFile("g1.txt", b"one\x00\ntwo\n")}
    response = _post_section(staff_client, SLUG, "setting-0", values, {})
    assert response.status_code == 400 and "NUL character" in response.content.decode()
    assert StudyDraft.objects.get(slug=SLUG).version == before.version


def test_upload_of_a_group(staff_client, demo_data):
    """A group uploaded as a CSV file with a ``text`` column replaces the typed texts."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    _build(staff_client, demo_data)
    body = "id,text\n1,\"First, with a comma\"\n2,Second\n".encode()
    values = {**builder_steps(demo_data)[4][1], "group1_file": SimpleUploadedFile("g1.csv", body)}
    assert _post_section(staff_client, SLUG, "setting-0", values, {}).status_code == 302
    assert StudyDraft.objects.get(slug=SLUG).data["settings"][0]["group1"] == ["First, with a comma", "Second"]


@pytest.mark.parametrize("language,word", [("de", "Einwilligungserklärung"), ("es", "consentimiento"), ("fr", "consentement"), ("en", "consent information")])
def test_new_draft_starts_with_texts_in_its_language(staff_client, language, word):
    """A new draft's consent, instructions, pattern intro and task prompt start as the
    platform's defaults in the study's language."""
    staff_client.post(reverse("researcher:builder_new"), {"slug": SLUG, "title": "T", "language": language})
    data = StudyDraft.objects.get(slug=SLUG).data
    assert word in data["consent_text"]
    assert data["instructions_text"] and data["pattern_intro_text"] and data["task_prompt"]
