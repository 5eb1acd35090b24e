"""Bad bytes and characters in requests and imports: a clear refusal, nothing stored, never a 500."""
from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client, override_settings

from spotlight_study.annotation.models import Annotation, Item
from spotlight_study.annotation.services.queue import items_sync
from spotlight_study.participation.models import Participant, TaskResponse
from spotlight_study.stimuli.importers import ImportOptions, OutputImportError, read_outputs
from spotlight_study.stimuli.models import StimulusSet

from ..conftest import Walker
from .flow import answer_field, at_training, complete

FORM = "application/x-www-form-urlencoded"


def _at_training(client, demo_study) -> Walker:
    """A participant of the demo study on the training task page."""
    return at_training(Walker(client, demo_study.slug))


def _post_raw(client, url: str, body: bytes, content_type: str):
    return client.generic("POST", url, body, content_type=content_type)


@pytest.mark.django_db
@pytest.mark.parametrize("charset", ["latin-1", "iso-8859-1", "windows-1252", "utf-16", "no-such-charset", '"'])
def test_step_post_declaring_another_charset_gives_a_400_page(demo_study, charset):
    """A step POST declaring a charset other than UTF-8 gets the 400 page (CSRF on), not a 500."""
    client = Client(enforce_csrf_checks=True)
    w = _at_training(Client(), demo_study)
    client.cookies = w.client.cookies
    body = f"token={w.token()}&{answer_field(w)}=caf%E9+at+night&client_events=".encode()
    response = _post_raw(client, w.step_url, body, f"{FORM}; charset={charset}")
    assert response.status_code == 400
    html = response.content.decode()
    assert "accepts only UTF-8" in html and "Something was wrong with that request" in html
    assert TaskResponse.objects.get().answered_at is None


@pytest.mark.django_db
def test_login_post_declaring_latin1_gives_a_400_page():
    """The login page answers a latin-1 form with the 400 page, not a 500."""
    client = Client(enforce_csrf_checks=True)
    response = _post_raw(client, "/accounts/login/", b"username=a&password=b", f"{FORM}; charset=latin-1")
    assert response.status_code == 400
    assert "accepts only UTF-8" in response.content.decode()


@pytest.mark.django_db
def test_utf8_declared_in_any_spelling_is_accepted(client, demo_study):
    """charset=UTF-8 / utf8 is accepted and the answer is saved."""
    w = _at_training(client, demo_study)
    body = f"token={w.token()}&{answer_field(w)}=caf%C3%A9+at+night&client_events=".encode()
    response = _post_raw(client, w.step_url, body, f"{FORM}; charset=UTF8")
    assert response.status_code == 302
    assert TaskResponse.objects.get(position=0).answer == "café at night"


@pytest.mark.django_db
@pytest.mark.parametrize("encoded", ["night%ff%fe+day", "night%C3+day", "%ED%A0%80night", "night+%C0%AF"])
def test_invalid_utf8_in_an_answer_is_refused_not_stored_as_replacement(client, demo_study, encoded):
    """Percent-encoded bytes that are not UTF-8 are refused with a message; nothing is stored."""
    w = _at_training(client, demo_study)
    body = f"token={w.token()}&{answer_field(w)}={encoded}&client_events=".encode()
    response = _post_raw(client, w.step_url, body, FORM)
    assert response.status_code == 400
    assert "not valid UTF-8, so nothing was saved" in response.content.decode()
    response = TaskResponse.objects.get()
    assert response.answered_at is None and response.answer == ""
    assert not TaskResponse.objects.filter(answer__contains="\ufffd").exists()


@pytest.mark.django_db
def test_raw_non_utf8_bytes_in_a_form_body_are_refused(client, demo_study):
    """Raw (not percent-encoded) bytes that are not UTF-8 in a form body are refused."""
    w = _at_training(client, demo_study)
    body = f"token={w.token()}&{answer_field(w)}=".encode() + b"night \xff day"
    assert _post_raw(client, w.step_url, body, FORM).status_code == 400
    assert TaskResponse.objects.get().answered_at is None


@pytest.mark.django_db
def test_a_properly_encoded_replacement_character_is_kept(client, demo_study):
    """U+FFFD sent as valid UTF-8 (%EF%BF%BD) is text like any other and is saved."""
    w = _at_training(client, demo_study)
    body = f"token={w.token()}&{answer_field(w)}=night+and+day+%EF%BF%BD&client_events=".encode()
    assert _post_raw(client, w.step_url, body, FORM).status_code == 302
    assert TaskResponse.objects.get(position=0).answer == "night and day \ufffd"


@pytest.mark.django_db
def test_nul_in_an_answer_is_refused_with_a_message(client, demo_study):
    """A NUL in an answer brings the form back with a message; nothing is stored."""
    w = _at_training(client, demo_study)
    response = w.post({answer_field(w): "night\x00 and day", "client_events": ""})
    assert response.status_code in (200, 302)
    page = w.page() if response.status_code == 302 else response
    assert "Null characters are not allowed" in page.content.decode()
    assert TaskResponse.objects.get().answered_at is None


@pytest.mark.django_db
def test_a_form_over_the_size_limit_gets_413(client, demo_study, settings):
    """A form body over DATA_UPLOAD_MAX_MEMORY_SIZE gets 413 with a message, not a 500."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    w = _at_training(client, demo_study)
    body = f"token={w.token()}&{answer_field(w)}={'x' * 2000}".encode()
    response = _post_raw(client, w.step_url, body, FORM)
    assert response.status_code == 413 and "too large" in response.content.decode()


@pytest.mark.django_db
def test_a_form_with_too_many_fields_gets_400(client, demo_study, settings):
    """A form with more fields than DATA_UPLOAD_MAX_NUMBER_FIELDS gets the 400 page, not a 500."""
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 10
    body = "&".join(f"f{i}=1" for i in range(50)).encode()
    response = _post_raw(Client(enforce_csrf_checks=True), "/accounts/login/", body, FORM)
    assert response.status_code == 400


@pytest.mark.django_db
def test_api_body_declaring_latin1_gets_the_json_error_shape(staff_client):
    """Under /api/ a refused charset is answered with the API's JSON error body."""
    response = _post_raw(staff_client, "/api/studies/import/", b"{}", "application/json; charset=latin-1")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["status"] == 400 and error["code"] == "unsupported_charset"


@pytest.mark.django_db
def test_annotator_api_refusals_have_the_same_json_error_shape(staff_client, demo_study):
    """Under /annotate/api/ a body that is not UTF-8, or too large, gets the one JSON error body."""
    url = f"/annotate/api/{demo_study.slug}/next/"
    response = _post_raw(staff_client, url, b"note=%ff%fe", FORM)
    assert response.status_code == 400 and response["Content-Type"].startswith("application/json")
    assert response.json() == {
        "error": {
            "status": 400,
            "code": "invalid_utf8",
            "message": response.json()["error"]["message"],
            "fields": {},
        }
    }
    assert "UTF-8" in response.json()["error"]["message"]
    with override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=100):
        response = _post_raw(staff_client, url, b"note=" + b"a" * 500, FORM)
    assert response.status_code == 413 and response.json()["error"]["code"] == "too_large"


@pytest.mark.django_db
def test_multipart_text_field_with_invalid_utf8_is_refused(staff_client):
    """A multipart text field that is not UTF-8 is refused; no stimulus set is stored."""
    boundary = "XyZ"
    body = (
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\n".encode()
        + b"bad \xff\xfe title\r\n"
        + f"--{boundary}\r\nContent-Disposition: form-data; name=\"file1\"; filename=\"a.txt\"\r\n"
        "Content-Type: text/plain\r\n\r\none\r\n".encode()
        + f"--{boundary}--\r\n".encode()
    )
    response = _post_raw(staff_client, "/stimuli/import/", body, f"multipart/form-data; boundary={boundary}")
    assert response.status_code == 400
    assert StimulusSet.objects.count() == 0


# --- client_events telemetry ------------------------------------------------------------------


@pytest.mark.django_db
def test_nul_inside_client_events_is_stripped_and_the_answer_saved(client, demo_study):
    """A \\u0000 inside client_events is stripped (PostgreSQL jsonb refuses it); the answer is saved."""
    w = _at_training(client, demo_study)
    events = json.dumps(
        {"paste_count": 1, "events": [{"t": 5, "type": "paste\u0000x", "chars": "\u0000"}]}
    )
    response = w.post({answer_field(w): "By day and by night.", "client_events": events})
    assert response.status_code == 302
    r = TaskResponse.objects.get(position=0)
    assert r.answered_at is not None and r.paste_count == 1
    assert r.client_events == [{"t": 5, "type": "pastex", "chars": ""}]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "raw",
    [
        '{"paste_count": NaN, "events": [{"t": Infinity}]}',
        '{"events": [{"t": 1e400, "type": "\\ud800"}]}',
        "[" * 5000 + "]" * 5000,
        '{"events": [{"t": ' + "9" * 5000 + "}]}",
        '{"events": [{"t": 123456789012345678901234567890}]}',
    ],
)
def test_hostile_client_events_never_give_a_500(client, demo_study, raw):
    """NaN, huge numbers, lone surrogates or deep nesting in client_events save the answer, clean."""
    w = _at_training(client, demo_study)
    response = w.post({answer_field(w): "By day and by night.", "client_events": raw[:40_000]})
    assert response.status_code == 302
    r = TaskResponse.objects.get(position=0)
    assert r.answered_at is not None
    stored = json.dumps(r.client_events)
    assert "NaN" not in stored and "Infinity" not in stored and "\\ud800" not in stored


# --- stimulus imports -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, data, message",
    [
        ("a.csv", b"text\nfirst\x00 output\n", "NUL character (byte 0x00)"),
        ("a.txt", b"one\x00\ntwo\n", "NUL character (byte 0x00)"),
        ("a.json", b'["one", "tw\\u0000o"]', "NUL character (\\u0000)"),
        ("a.jsonl", b'{"text": "one\\u0000"}\n', "NUL character (\\u0000)"),
        ("a.json", b'{"p": {"prompt": "x\\u0000", "outputs": ["one"]}}', "NUL character"),
        ("a.json", b'["one", "\\udc00two"]', "lone surrogate"),
        ("a.json", b"[" * 100_000 + b"]" * 100_000, "cannot be read as JSON"),
        ("a.jsonl", b'{"text": ' + b"[" * 100_000 + b"\n", "cannot be read as JSON"),
    ],
)
def test_stimulus_import_refuses_nul_surrogates_and_deep_json(name, data, message):
    """NUL, lone surrogate escapes and over-deep JSON in an import raise OutputImportError."""
    with pytest.raises(OutputImportError, match=None) as info:
        read_outputs(file1=(name, data), file2=("b.txt", b"x\n"), options=ImportOptions())
    assert message in str(info.value)


@pytest.mark.django_db
def test_stimulus_import_view_shows_the_nul_message_and_stores_nothing(staff_client):
    """Through the import page, a JSON output with \\u0000 gives the message and stores nothing."""
    response = staff_client.post(
        "/stimuli/import/",
        {
            "title": "nul",
            "file1": SimpleUploadedFile("a.json", b'["one\\u0000"]'),
            "file2": SimpleUploadedFile("b.txt", b"two\n"),
            "format": "auto", "column": "text", "group1_value": "1", "group2_value": "2",
        },
    )
    assert response.status_code == 200
    assert "NUL character" in response.content.decode()
    assert StimulusSet.objects.count() == 0


@pytest.mark.django_db
def test_label_import_with_a_nul_is_refused_by_line_and_changes_nothing(demo_study, tmp_path):
    """A NUL in an imported label CSV is refused with its line; no label is stored (PostgreSQL too)."""
    complete(Walker(Client(), demo_study.slug))
    items_sync(study=demo_study)
    item = Item.objects.first()
    path = tmp_path / "labels.csv"
    path.write_text(
        "item,identified,surface_difference,no_difference,tags,exclusion,exclusion_note,annotator\n"
        f"{item.public_id},yes,no,no,,other,bad\x00note,sheet-a\n",
        encoding="utf-8",
    )
    with pytest.raises(CommandError, match="line 2: a NUL character"):
        call_command("import_labels", demo_study.slug, str(path))
    assert Annotation.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize("repeated", ["answer", "token", "client_events"])
def test_a_field_sent_twice_in_a_participant_form_is_refused(client, demo_study, repeated):
    """An answer, token or telemetry field sent twice is refused with a 400 page; nothing is stored."""
    w = _at_training(client, demo_study)
    name = answer_field(w) if repeated == "answer" else repeated
    fields = [("token", w.token()), (answer_field(w), "night and day"), ("client_events", "")]
    fields.append((name, "night" if repeated == "answer" else dict(fields)[name]))
    body = "&".join(f"{k}={v.replace(' ', '+')}" for k, v in fields).encode()
    response = _post_raw(client, w.step_url, body, FORM)
    assert response.status_code == 400
    assert "was sent more than once, so nothing was saved" in response.content.decode()
    assert TaskResponse.objects.get().answered_at is None


@pytest.mark.django_db
def test_a_consent_decision_sent_twice_is_refused(client, demo_study):
    """decision=agree&decision=decline: refused, the participant has not consented."""
    w = Walker(client, demo_study.slug)
    w.enter()
    w.page()
    body = f"token={w.token()}&decision=agree&decision=decline".encode()
    response = _post_raw(client, w.step_url, body, FORM)
    assert response.status_code == 400 and "was sent more than once" in response.content.decode()
    assert not Participant.objects.filter(consented_at__isnull=False).exists()
