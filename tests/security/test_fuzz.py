"""Property-based fuzzing (hypothesis) of the public inputs: never a 500, never a stray change.

Random bytes, random declared character sets and nested JSON are sent to the participant step
POST, the Prolific webhook, the stimulus import and the login. Every example runs in a
transaction that is rolled back, and compares the stored data (all tables but sessions and
login-attempt logs) before and after. Example counts are kept small so that each test takes a
few seconds; ``derandomize`` makes every run try the same examples.
"""
from __future__ import annotations

import json
import time
from urllib.parse import quote_from_bytes

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from spotlight_study.participation.models import TaskResponse
from spotlight_study.prolific import webhooks
from spotlight_study.prolific.models import WebhookEvent
from spotlight_study.stimuli.importers import ImportOptions, OutputImportError, read_outputs
from spotlight_study.stimuli.models import Output, StimulusSet

from ..conftest import make_staff, Walker
from .dbdump import rolled_back, stored_data
from .flow import answer_field, at_training

FUZZ = hypothesis_settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# --- strategies -------------------------------------------------------------------------------

CHARSETS = st.sampled_from(
    ["utf-8", "UTF8", "latin-1", "iso-8859-1", "windows-1252", "utf-16", "utf-32", "koi8-r",
     "shift_jis", "utf-7", "x-no-such", '"utf-8"', "", "utf-8 ", "ascii"]
) | st.text(st.characters(min_codepoint=33, max_codepoint=126), max_size=10)
MEDIA_TYPES = st.sampled_from(
    ["application/x-www-form-urlencoded", "multipart/form-data; boundary=zz", "multipart/form-data",
     "application/json", "text/plain", "application/octet-stream", ""]
)


@st.composite
def content_types(draw) -> str:
    """A media type, with a random ``charset`` parameter half of the time."""
    media = draw(MEDIA_TYPES)
    if draw(st.booleans()):
        return f"{media}; charset={draw(CHARSETS)}".lstrip("; ")
    return media


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(["\x00", "a\u0000b", "\ud800", "\udfff", "\ufffd", "=HYPERLINK(1)"]),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=16,
)
#: JSON text, including NaN/Infinity (json.dumps writes them) and escaped NUL and surrogates.
JSON_TEXT = JSON_VALUES.map(json.dumps) | st.integers(1, 3000).map(lambda n: "[" * n + "]" * n)


@st.composite
def form_bodies(draw, names: list[str]) -> bytes:
    """An urlencoded body of random fields (known names or not) with random byte values."""
    pairs = draw(
        st.lists(
            st.tuples(st.sampled_from(names).map(str.encode) | st.binary(max_size=6), st.binary(max_size=40)),
            max_size=5,
        )
    )
    encode = draw(st.booleans())
    parts = [
        (quote_from_bytes(k) + "=" + quote_from_bytes(v)).encode()
        if encode
        else k + b"=" + v
        for k, v in pairs
    ]
    return b"&".join(parts)


def bodies(names: list[str]):
    """Random bytes, a random form or random JSON text."""
    return st.binary(max_size=300) | form_bodies(names) | JSON_TEXT.map(lambda s: s.encode("utf-8", "surrogatepass"))


# --- the participant step POST ----------------------------------------------------------------


@pytest.fixture
def at_task(client, demo_study):
    """A participant on the training task page: ``(client, walker, token, answer field)``."""
    w = at_training(Walker(client, demo_study.slug))
    return client, w, w.token(), answer_field(w)


@pytest.mark.django_db
@FUZZ
@given(data=st.data())
def test_step_post_with_random_bodies_and_charsets_changes_nothing(at_task, data):
    """Random bytes/forms/JSON with random charsets to the step page: < 500, nothing stored."""
    client, w, token, field = at_task
    body = data.draw(bodies(["token", field, "client_events", "decision", "comment"]))
    content_type = data.draw(content_types())
    with rolled_back():
        before = stored_data()
        response = client.generic("POST", w.step_url, body, content_type=content_type)
        assert response.status_code < 500
        assert stored_data() == before


@pytest.mark.django_db
@FUZZ
@given(answer=st.binary(min_size=1, max_size=60).filter(lambda b: _not_utf8(b)))
def test_step_post_with_an_answer_that_is_not_utf8_is_refused(at_task, answer):
    """The right token with an answer that is not UTF-8: 400, nothing stored, no U+FFFD."""
    client, w, token, field = at_task
    body = f"token={token}&{field}=".encode() + quote_from_bytes(answer).encode()
    with rolled_back():
        before = stored_data()
        response = client.generic("POST", w.step_url, body, content_type="application/x-www-form-urlencoded")
        assert response.status_code == 400
        assert stored_data() == before


def _not_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


@pytest.mark.django_db
@FUZZ
@given(events=JSON_TEXT)
def test_step_post_with_random_client_events_saves_clean_telemetry(at_task, events):
    """Any client_events JSON (NUL, surrogates, NaN, deep nesting): the answer is saved, clean."""
    client, w, token, field = at_task
    with rolled_back():
        response = client.post(
            w.step_url, {"token": token, field: "By day and by night.", "client_events": events[:40_000]}
        )
        assert response.status_code == 302
        saved = TaskResponse.objects.get(position=0)
        assert saved.answered_at is not None
        text = json.dumps(saved.client_events)
        assert "\\u0000" not in text and "NaN" not in text and "Infinity" not in text
        assert not any(0xD800 <= ord(ch) <= 0xDFFF for ch in json.dumps(saved.client_events, ensure_ascii=False))


# --- the Prolific webhook ---------------------------------------------------------------------

SECRET = "whsec-fuzz-0123456789"


@pytest.mark.django_db
@FUZZ
@given(
    body=st.binary(max_size=300) | JSON_TEXT.map(lambda s: s.encode("utf-8", "surrogatepass")),
    signature=st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=60),
    content_type=content_types(),
)
def test_webhook_with_random_unsigned_bodies_stores_nothing(client, settings, body, signature, content_type):
    """Random bodies with garbage signatures and charsets: 4xx, no event stored."""
    settings.PROLIFIC_WEBHOOK_SECRET = SECRET
    with rolled_back():
        before = stored_data()
        response = client.generic(
            "POST", "/prolific/webhook/", body, content_type=content_type,
            HTTP_X_PROLIFIC_REQUEST_SIGNATURE=signature,
            HTTP_X_PROLIFIC_REQUEST_TIMESTAMP=str(int(time.time())),
        )
        assert 400 <= response.status_code < 500
        assert stored_data() == before


@pytest.mark.django_db
@FUZZ
@given(payload=JSON_VALUES | st.fixed_dictionaries(
    {"event_type": st.sampled_from(["submission.status.change", "study.status.change", "\u0000"]),
     "resource_id": st.text(max_size=30), "status": st.text(max_size=12) | st.sampled_from(["APPROVED", "returned"]),
     "participant_id": st.text(max_size=30)},
    optional={"extra": JSON_VALUES},
))
def test_webhook_with_random_signed_payloads_never_500_and_stores_only_clean_text(client, settings, payload):
    """Signed random (nested) JSON: 200 or 400, and whatever is stored has no NUL or surrogate."""
    settings.PROLIFIC_WEBHOOK_SECRET = SECRET
    body = json.dumps(payload).encode()
    timestamp = str(int(time.time()))
    with rolled_back():
        response = client.post(
            "/prolific/webhook/", body, content_type="application/json",
            HTTP_X_PROLIFIC_REQUEST_SIGNATURE=webhooks.signature(secret=SECRET, timestamp=timestamp, body=body),
            HTTP_X_PROLIFIC_REQUEST_TIMESTAMP=timestamp,
        )
        assert response.status_code in (200, 400)
        for event in WebhookEvent.objects.all():
            text = json.dumps(event.payload, ensure_ascii=False) + event.event_id + event.event_type
            assert "\x00" not in text and "\\u0000" not in text
            assert not any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)


# --- the stimulus import ----------------------------------------------------------------------

NAMES = st.sampled_from(["a.json", "a.jsonl", "a.csv", "a.txt", "a.bin"])
FILE_BYTES = (
    st.binary(max_size=200)
    | JSON_TEXT.map(lambda s: s.encode("utf-8", "surrogatepass"))
    | st.lists(JSON_VALUES.map(lambda v: json.dumps({"text": v})), max_size=4).map(lambda ls: "\n".join(ls).encode("utf-8", "surrogatepass"))
    | st.lists(st.text(max_size=10), max_size=4).map(lambda ls: ("text\n" + "\n".join(ls)).encode("utf-8", "surrogatepass"))
)


@FUZZ
@given(name=NAMES, data=FILE_BYTES, both=st.booleans())
def test_stimulus_reader_returns_storable_text_or_a_clear_error(name, data, both):
    """read_outputs either raises OutputImportError or returns texts without NUL or surrogates."""
    file2 = None if both else ("b.txt", b"second\n")
    try:
        groups = read_outputs(file1=(name, data), file2=file2, options=ImportOptions(group_column="g" if both else ""))
    except OutputImportError as exc:
        assert str(exc)
        return
    for text in [*groups.group1, *groups.group2, groups.group1_label, groups.group2_label]:
        assert "\x00" not in text and not any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)


@pytest.mark.django_db
@hypothesis_settings(FUZZ, max_examples=20)
@given(name=NAMES, data=FILE_BYTES, title=st.text(max_size=20))
def test_stimulus_import_page_never_500_and_stores_only_on_success(staff_client, name, data, title):
    """Random files through the import page: < 500; a refused import stores nothing."""
    client = staff_client
    with rolled_back():
        before = stored_data()
        response = client.post(
            "/stimuli/import/",
            {
                "title": title,
                "file1": SimpleUploadedFile(name, data),
                "file2": SimpleUploadedFile("b.txt", b"second\n"),
                "format": "auto", "column": "text", "group1_value": "1", "group2_value": "2",
            },
        )
        assert response.status_code < 500
        if response.status_code != 302:
            assert stored_data() == before
        else:
            for text in Output.objects.values_list("text", flat=True):
                assert "\x00" not in text
            assert StimulusSet.objects.count() == 1


# --- the login --------------------------------------------------------------------------------


@pytest.fixture
def fuzz_staff(db, settings):
    """A staff user whose login the fuzzing tries (many attempts)."""
    return make_staff(username="fuzz-staff")


@pytest.mark.django_db
@FUZZ
@given(
    username=st.binary(max_size=30), password=st.binary(max_size=30),
    content_type=content_types(), csrf=st.booleans(), path=st.sampled_from(["/accounts/login/", "/admin/login/"]),
)
def test_login_with_random_bytes_and_charsets_never_500_and_changes_no_user(
    fuzz_staff, username, password, content_type, csrf, path
):
    """Random credentials, charsets and bodies on both login pages: < 500, users unchanged."""
    client = Client(enforce_csrf_checks=csrf)
    body = b"username=" + quote_from_bytes(username).encode() + b"&password=" + quote_from_bytes(password).encode()
    with rolled_back():
        before = stored_data()
        response = client.generic("POST", path, body, content_type=content_type)
        assert response.status_code < 500
        assert "_auth_user_id" not in client.session
        assert stored_data() == before
