"""Freezing what participants saw: the admin and import_study --replace once a real participant consented."""
from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.core.management import CommandError, call_command

from spotlight_study.participation.models import Participant
from spotlight_study.studies.freeze import study_freeze_reason
from spotlight_study.studies.models import Setting, Study, TokenPattern
from spotlight_study.studies.errors import StudyImportError
from spotlight_study.studies.services import study_import

from ..conftest import DEMO_FILE, make_staff, Walker


class _FormFields(HTMLParser):
    """The fields a browser would submit from the admin change form (inputs, textareas, selects)."""

    def __init__(self):
        super().__init__()
        self.fields: dict[str, str] = {}
        self._textarea: str | None = None
        self._select: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        name = a.get("name")
        if tag == "input" and name and a.get("type") not in ("submit", "button", "file"):
            if a.get("type") in ("checkbox", "radio") and "checked" not in a:
                return
            self.fields[name] = a.get("value") or ("on" if a.get("type") == "checkbox" else "")
        elif tag == "textarea" and name:
            self._textarea = name
            self.fields[name] = ""
        elif tag == "select" and name:
            self._select = name
        elif tag == "option" and self._select and "selected" in a:
            self.fields[self._select] = a.get("value", "")

    def handle_data(self, data):
        if self._textarea:
            self.fields[self._textarea] += data

    def handle_endtag(self, tag):
        if tag == "textarea":
            if self._textarea:
                # Django renders a newline right after <textarea>; browsers drop it.
                self.fields[self._textarea] = self.fields[self._textarea].removeprefix("\n")
            self._textarea = None
        elif tag == "select":
            self._select = None


def _form(client, url: str) -> dict[str, str]:
    parser = _FormFields()
    parser.feed(client.get(url).content.decode())
    return parser.fields


def _consent(client, slug: str, *, pilot: bool = False) -> Participant:
    walker = Walker(client, slug)
    walker.enter()
    walker.consent()
    participant = Participant.objects.get(prolific_pid=walker.pid)
    if pilot:
        participant.is_pilot = True
        participant.save(update_fields=["is_pilot"])
    return participant


@pytest.fixture
def admin_client(client, db):
    """A client logged in as a superuser, as the researcher who edits studies in the admin."""
    user = make_staff(is_superuser=True)
    client.force_login(user)
    return client


def test_consent_freezes_pilot_does_not_and_deleting_unfreezes(client, demo_study):
    """Only a real participant's consent freezes; a pilot's does not; deleting the consent unfreezes."""
    Walker(client, demo_study.slug).enter()
    assert study_freeze_reason(study=demo_study) is None  # arrived, not consented
    pilot = _consent(client, demo_study.slug, pilot=True)
    assert study_freeze_reason(study=demo_study) is None
    real = _consent(client, demo_study.slug)
    assert study_freeze_reason(study=demo_study) == "1 real participant has consented to it."
    real.delete()
    pilot.delete()
    assert study_freeze_reason(study=demo_study) is None


def test_replace_deletes_pilot_data_and_keeps_the_study_row(client, demo_study, demo_data):
    """--replace with only pilot data replaces the definition in place and removes the pilot."""
    walker = Walker(client, demo_study.slug)
    walker.complete()
    Participant.objects.update(is_pilot=True)
    demo_data["settings"][0]["title"] = "Doctors"
    study = study_import(data=demo_data, replace=True)
    assert study.pk == demo_study.pk
    assert not Participant.objects.exists()
    assert study.settings.get(key="doctor").title == "Doctors"


def test_replace_of_frozen_study_is_refused_with_copy_hint(client, demo_study, demo_data):
    """import_study --replace on a frozen study changes nothing and says how to copy it."""
    _consent(client, demo_study.slug)
    demo_data["consent_text"] = "Changed."
    with pytest.raises(StudyImportError) as info:
        study_import(data=demo_data, replace=True)
    assert "frozen: 1 real participant has consented" in str(info.value)
    assert "import_study FILE --as-slug NEW-SLUG" in str(info.value)
    assert Study.objects.get(pk=demo_study.pk).consent_text != "Changed."
    assert Participant.objects.count() == 1


def test_as_slug_copies_a_frozen_study_as_a_new_version(client, demo_study, capsys):
    """import_study FILE --as-slug NEW imports the file as a new study beside the frozen one."""
    _consent(client, demo_study.slug)
    with pytest.raises(CommandError, match="frozen"):
        call_command("import_study", str(DEMO_FILE), "--replace")
    call_command("import_study", str(DEMO_FILE), "--as-slug", "spotlight-replication-v2")
    copy = Study.objects.get(slug="spotlight-replication-v2")
    assert copy.settings.count() == 3 and not copy.participants.exists()


def test_admin_study_form_is_read_only_once_frozen(client, admin_client, demo_study):
    """The admin never edits the consent text (issue 35: the definition is read-only there, before
    and after a consent), but still saves the status; after a consent it says the study is frozen."""
    url = f"/admin/studies/study/{demo_study.pk}/change/"
    original = demo_study.consent_text
    for consented in (False, True):
        if consented:
            Study.objects.filter(pk=demo_study.pk).update(status="live")
            _consent(client, demo_study.slug)
            page = admin_client.get(url).content.decode()
            assert "is frozen: 1 real participant has consented" in page and "--as-slug" in page
        fields = _form(admin_client, url)
        assert "consent_text" not in fields and "instructions_text" not in fields
        fields.update(consent_text="Changed in the admin.", status="paused" if consented else "closed")
        response = admin_client.post(url, fields)
        assert response.status_code == 302, response.content.decode()[:2000]
        demo_study.refresh_from_db()
        assert demo_study.consent_text == original
        assert demo_study.status == ("paused" if consented else "closed")


def test_admin_setting_texts_and_patterns_are_read_only_once_frozen(client, admin_client, demo_study):
    """A setting's texts and its patterns cannot be changed, added or deleted in the admin, before
    or after a consent (issue 35); its target description stays editable."""
    setting = Setting.objects.get(study=demo_study, key="doctor")
    url = f"/admin/studies/setting/{setting.pk}/change/"
    for consented in (False, True):
        if consented:
            _consent(client, demo_study.slug)
        fields = _form(admin_client, url)
        assert "group1_texts" not in fields
        assert not [name for name in fields if name.startswith("patterns-") and name.endswith(("tokens", "group"))]
        fields["target_description"] = f"Annotators may still refine this ({consented})."
        fields["group1_texts"] = '["Changed"]'
        response = admin_client.post(url, fields)
        assert response.status_code == 302, response.content.decode()[:2000]
        setting.refresh_from_db()
        assert setting.group1_texts[0].startswith("Dr. Smith")
        assert setting.target_description == f"Annotators may still refine this ({consented})."
        assert TokenPattern.objects.filter(setting=setting).count() == 3
        delete = admin_client.post(f"/admin/studies/setting/{setting.pk}/delete/", {"post": "yes"})
        assert delete.status_code == 302 and Setting.objects.filter(pk=setting.pk).exists()


def test_admin_refuses_a_new_setting_for_a_frozen_study(client, admin_client, demo_study):
    """Adding a setting (or a study) in the admin is refused for every study, frozen or not: a
    definition comes from its study file (issue 35)."""
    for path in ("/admin/studies/setting/add/", "/admin/studies/study/add/"):
        assert admin_client.get(path).status_code == 403
    _consent(client, demo_study.slug)
    response = admin_client.post(
        "/admin/studies/setting/add/",
        {"study": str(demo_study.pk), "key": "extra", "kind": "main", "position": "5", "title": "Extra",
         "group1_texts": '["a"]', "group2_texts": '["b"]', "check_keywords": "[]", "annotation_tags": "[]"},
    )
    assert response.status_code == 403
    assert not Setting.objects.filter(key="extra").exists()
