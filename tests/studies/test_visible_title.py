"""A study title with no visible character (only U+200B, U+FEFF, U+2060 and such, with or
without spaces) is refused by every way a title is set: the study file (the import service,
``import_study``, the REST API), the builder's new-study form, its texts section and Publish;
the admin cannot set a title at all. Each refusal names the field and changes nothing. A study
stored with such a title before the rule keeps its participant pages (the title is only text)."""
from __future__ import annotations

import re

import pytest
import yaml
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from spotlight_study.researcher.launch import NO_GO, launch_check
from spotlight_study.studies.definition_check import stored_definition_problems
from spotlight_study.studies.errors import StudyFileError
from spotlight_study.studies.export import study_file_data
from spotlight_study.studies.models import Study, StudyDraft
from spotlight_study.studies.plan import study_definition_changed
from spotlight_study.studies.selectors import study_get_with_settings
from spotlight_study.studies.services import study_import
from spotlight_study.studies.visible_text import is_invisible, visible_title_check

from ..conftest import Walker, make_staff
from ..researcher.builder_input import texts_section
from .test_freeze import _form

INVISIBLE_TITLES = {
    "zero width space": "\u200b",
    "three format characters": "\u200b\ufeff\u2060",
    "with spaces": " \u200b \ufeff\u00a0\u2060 ",
}
#: Visible at last: a letter among invisible ones, other scripts, an emoji, a right-to-left
#: title opened by a right-to-left mark (U+200F, itself invisible).
VISIBLE_TITLES = ["\u200bA\u200b", "Étude", "研究", "\U0001F642", "\u200fعنوان"]

invisible = pytest.mark.parametrize("title", INVISIBLE_TITLES.values(), ids=INVISIBLE_TITLES.keys())


def _refused_title(data: dict) -> list[str]:
    with pytest.raises(StudyFileError) as refused:
        study_import(data=data)
    return refused.value.errors["title"]


def test_the_rule_counts_whitespace_and_format_characters_as_invisible():
    """Whitespace and category Cf are invisible; letters, marks of other scripts and emoji are not."""
    assert all(is_invisible(ch) for ch in " \t\n\u00a0\u3000\u200b\u200e\u200f\ufeff\u2060\u00ad")
    assert not any(is_invisible(ch) for ch in "aZ9.é研ع\U0001F642")


#: Characters a try-out found accepted by the first version of the rule (whitespace and Cf only):
#: each made a study whose title and list link showed nothing.
DRAWING_NOTHING = {
    "variation selector": "\ufe0f", "combining grapheme joiner": "\u034f", "hangul filler": "\u3164",
    "braille blank": "\u2800", "control character": "\x01", "halfwidth hangul filler": "\uffa0",
    "combining acute alone": "\u0301", "unassigned": "\U000e0080",
}


@pytest.mark.parametrize("ch", DRAWING_NOTHING.values(), ids=DRAWING_NOTHING.keys())
def test_marks_controls_fillers_and_blank_glyphs_are_invisible_too(ch):
    assert is_invisible(ch)
    with pytest.raises(ValidationError):
        visible_title_check(f" {ch}\u200b{ch} ")
    # Beside a visible character they are allowed: an emoji's variation selector, an accent.
    visible_title_check(f"A{ch}")
    for title in VISIBLE_TITLES:
        visible_title_check(title)
    with pytest.raises(ValidationError) as refused:
        visible_title_check("\u200b \ufeff")
    assert refused.value.messages == [
        "The title has no visible character (it holds only U+200B ZERO WIDTH SPACE, "
        "U+FEFF ZERO WIDTH NO-BREAK SPACE, spaces): give the study a title that people can read."
    ]
    assert refused.value.code == "invisible_title"


@invisible
@pytest.mark.django_db
def test_the_import_refuses_it_and_creates_nothing(demo_data, title):
    """The import service refuses the file at ``title`` with the rule's message; no study."""
    messages = _refused_title({**demo_data, "title": title})
    assert len(messages) == 1 and messages[0].startswith("The title has no visible character")
    assert not Study.objects.exists()


@invisible
def test_a_replace_refuses_it_and_keeps_the_title(demo_study, demo_data, title):
    """``--replace`` with such a title refuses and leaves the stored study as it was."""
    before = study_file_data(Study.objects.get(pk=demo_study.pk))
    with pytest.raises(StudyFileError) as refused:
        study_import(data={**demo_data, "title": title}, replace=True)
    assert list(refused.value.errors) == ["title"]
    assert study_file_data(Study.objects.get(pk=demo_study.pk)) == before


@pytest.mark.django_db
def test_import_study_and_the_api_refuse_it_by_its_path(demo_data, tmp_path):
    """``import_study FILE`` prints ``title: <message>``; the API's import names ``title`` in
    its fields; neither creates a study."""
    data = {**demo_data, "title": INVISIBLE_TITLES["three format characters"]}
    path = tmp_path / "invisible.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    with pytest.raises(CommandError) as command:
        call_command("import_study", str(path))
    assert "title: The title has no visible character (it holds only U+200B ZERO WIDTH SPACE" in str(command.value)

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=make_staff()).key}")
    error = api.post("/api/studies/import/", {"study": data}, format="json").json()["error"]
    assert error["code"] == "invalid_study_file"
    assert list(error["fields"]) == ["title"]
    assert not Study.objects.exists()


@invisible
def test_the_builder_new_study_form_refuses_it_and_starts_no_draft(staff_client, title):
    """The new-study form answers 400 with the message at the title field and makes no draft."""
    response = staff_client.post(reverse("researcher:builder_new"),
                                 {"slug": "invisible", "title": title, "language": "en"})
    assert response.status_code == 400
    assert 'id="id_title_error">The title has no visible character' in response.content.decode()
    assert not StudyDraft.objects.exists()


def test_the_builder_shows_it_at_the_title_and_publish_refuses_it(staff_client, demo_study):
    """In the texts section of a study's draft, the title is kept in the draft (every save is)
    and the rule's message shows next to the title field; Publish is refused and the study
    keeps its title."""
    slug = demo_study.slug
    staff_client.get(reverse("researcher:builder", kwargs={"slug": slug}))  # opens the draft
    draft = StudyDraft.objects.get(slug=slug)
    values = {**texts_section(draft.data), "title": INVISIBLE_TITLES["with spaces"], "version": str(draft.version)}
    section = reverse("researcher:builder_section", kwargs={"slug": slug, "section": "texts"})
    assert staff_client.post(section, values).status_code == 302
    page = staff_client.get(section).content.decode()
    field_div = page.split('id="id_title"')[0].rsplit("<div", 1)[1]
    assert "The title has no visible character" in field_div
    # The field names its message and the message carries that id, so a screen reader reads it
    # with the field (the list had no id: found by a try-out).
    title_input = re.search(r'<input[^>]*id="id_title"[^>]*>', page).group(0)
    assert 'aria-describedby="id_title_error"' in title_input and 'aria-invalid="true"' in title_input
    assert re.search(r'<ul class="errorlist" id="id_title_error">\s*<li>The title has no visible', page)
    draft = StudyDraft.objects.get(slug=slug)
    response = staff_client.post(reverse("researcher:builder_publish", kwargs={"slug": slug}),
                                 {"version": draft.version}, follow=True)
    assert "Not published" in response.content.decode()
    assert Study.objects.get(pk=demo_study.pk).title == demo_study.title


def test_the_admin_cannot_set_a_title(client, demo_study):
    """The admin's study form has no title field: a posted title is ignored, the study keeps
    its own (the admin's other edits go through the study file's validation)."""
    client.force_login(make_staff(is_superuser=True))
    url = f"/admin/studies/study/{demo_study.pk}/change/"
    fields = _form(client, url)
    assert "title" not in fields
    response = client.post(url, {**fields, "title": INVISIBLE_TITLES["zero width space"]})
    assert response.status_code == 302
    assert Study.objects.get(pk=demo_study.pk).title == demo_study.title


@pytest.mark.django_db
@pytest.mark.parametrize("title", ["\u200b", ""], ids=["invisible", "empty"])
def test_a_stored_study_with_such_a_title_keeps_its_participants(demo_study, client, title):
    """A title stored before the rule (written here by ``update()``, as an empty one could be by a
    shell) is listed for the researcher and stops the launch check, but the participant pages go
    on: the title is only text, and a running study must not turn its participants away."""
    Study.objects.filter(pk=demo_study.pk).update(title=title)
    study_definition_changed(study_id=demo_study.pk)
    assert "title" in stored_definition_problems(study_get_with_settings(slug=demo_study.slug))
    report = launch_check(study=study_get_with_settings(slug=demo_study.slug), check_url=False)
    assert "Study definition: title" in {item.check for item in report.items if item.status == NO_GO}
    walker = Walker(client, demo_study.slug)
    assert walker.enter().status_code == 302
    page = walker.page()
    assert page.status_code == 200 and 'name="token"' in page.content.decode()
