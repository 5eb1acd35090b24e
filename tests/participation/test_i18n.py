"""The platform's own words on participant pages come in the study's language (``language:``).

The catalogs (``locale/<lang>/LC_MESSAGES/django.po``) are complete and their committed ``.mo``
files are fresh; every participant page, rendered for a German, Spanish and French study, holds
no platform text that the same page of an English study shows too, apart from the study's own
texts, which stay exactly as the researcher wrote them.
"""
from __future__ import annotations

import re
from html.parser import HTMLParser

import polib
import pytest
from django.template.loader import render_to_string
from django.test import Client, RequestFactory
from django.utils import translation

from spotlight_study.participation.models import Participant
from spotlight_study.participation.services import participant_prolific_status_set
from spotlight_study.participation.views import csrf_failure
from spotlight_study.studies.languages import SHIPPED_LANGUAGES, language_warning
from spotlight_study.studies.plan import study_plan_for_slug
from spotlight_study.studies.selectors import study_design_warnings, study_get_with_settings
from spotlight_study.studies.services import study_import

from ..conftest import REPO, Walker, new_id

LOCALE = REPO / "locale"
TRANSLATED = [code for code in SHIPPED_LANGUAGES if code != "en"]
#: Attributes whose text a participant meets (read aloud, shown by a script).
_TEXT_ATTRIBUTES = ("aria-label", "title", "placeholder", "alt", "data-counter", "data-place-saved",
                    "data-place-here", "data-place-note")


# --- the catalogs ----------------------------------------------------------------------------


def _catalog(entries) -> dict:
    return {
        (e.msgctxt, e.msgid): tuple(e.msgstr_plural[k] for k in sorted(e.msgstr_plural)) if e.msgid_plural else e.msgstr
        for e in entries
        if e.msgid
    }


@pytest.mark.parametrize("code", TRANSLATED)
def test_catalog_is_complete_and_its_mo_file_is_fresh(code):
    """Every message of the catalog is translated (none fuzzy or empty) and the committed .mo
    file holds exactly the .po file's translations (recompile with ./scripts/messages.sh)."""
    po = polib.pofile(str(LOCALE / code / "LC_MESSAGES" / "django.po"))
    assert po.metadata["Language"] == code
    assert [e.msgid for e in po.untranslated_entries()] == []
    assert [e.msgid for e in po.fuzzy_entries()] == []
    mo = polib.mofile(str(LOCALE / code / "LC_MESSAGES" / "django.mo"))
    assert _catalog(mo) == _catalog(po.translated_entries()), "stale .mo: run ./scripts/messages.sh"


@pytest.mark.parametrize("code", TRANSLATED)
def test_translations_keep_every_placeholder_and_tag(code):
    """A translation keeps its message's %(name)s and {name} placeholders and its HTML tags."""
    po = polib.pofile(str(LOCALE / code / "LC_MESSAGES" / "django.po"))

    def marks(text: str) -> list[str]:
        return sorted(re.findall(r"%\(\w+\)s|\{\w+\}|</?\w+[^>]*>", text))

    for entry in po:
        translations = entry.msgstr_plural.values() if entry.msgid_plural else [entry.msgstr]
        for text in translations:
            assert marks(text) == marks(entry.msgid), entry.msgid


def test_shipped_languages_are_the_catalogs_in_locale():
    """SHIPPED_LANGUAGES (English and the translated ones) names exactly the catalogs shipped."""
    shipped = sorted(p.name for p in LOCALE.iterdir() if (p / "LC_MESSAGES" / "django.po").exists())
    assert shipped == sorted(TRANSLATED)


# --- the study file's language -----------------------------------------------------------------


def test_language_defaults_to_english_and_round_trips(db, demo_data):
    """Without ``language`` a study is English; a code is stored lower case and exported."""
    from spotlight_study.studies.export import study_file_data

    demo_data.pop("language", None)
    assert study_import(data=demo_data).language == "en"
    study = study_import(data={**demo_data, "language": "DE"}, replace=True)
    assert study.language == "de"
    assert study_file_data(study)["language"] == "de"


def test_unknown_language_code_is_refused_with_its_field(db, demo_data):
    """A code Django does not know is refused, naming the field; nothing is imported."""
    from spotlight_study.studies.errors import StudyFileError

    with pytest.raises(StudyFileError) as caught:
        study_import(data={**demo_data, "language": "klingon"})
    assert "language" in caught.value.errors
    assert "klingon" in " ".join(caught.value.errors["language"])


def test_a_language_without_translation_is_accepted_with_a_warning(db, demo_data):
    """``ar`` imports, and the study's design warnings say its platform words stay English."""
    study = study_import(data={**demo_data, "language": "ar"})
    warnings = study_design_warnings(study_get_with_settings(slug=study.slug))
    assert [w for w in warnings if w.startswith("language `ar`")], warnings
    assert all(language_warning(code) is None for code in SHIPPED_LANGUAGES)


def test_default_task_prompt_is_in_the_study_language(db, demo_data):
    """A study file without ``task_prompt`` gets the platform's prompt in its language; a
    researcher's prompt stays exactly as written."""
    demo_data.pop("task_prompt")
    assert study_import(data={**demo_data, "language": "de"}).task_prompt.startswith("Beschreiben Sie")
    written = "Wie unterscheiden sich die Gruppen?"
    again = study_import(data={**demo_data, "task_prompt": written, "language": "fr"}, replace=True)
    assert again.task_prompt == written


# --- every participant page, in each language ------------------------------------------------

#: What the participant types into refused forms (shown again as typed, in any language).
TOO_LONG = "x" * 5001
COMMENT = "kept"


class _Segments(HTMLParser):
    """The text a participant meets on a page: text nodes and text attributes, trimmed."""

    def __init__(self):
        super().__init__()
        self.segments: list[str] = []
        self.skip = 0
        self.lang = self.dir = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "html":
            self.lang, self.dir = attrs.get("lang"), attrs.get("dir")
        if tag in ("script", "style"):
            self.skip += 1
        # The researcher's preview banner is English on purpose (staff words), marked lang="en".
        for name in _TEXT_ATTRIBUTES:
            if attrs.get(name):
                self.segments.append(_norm(attrs[name]))

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self.skip -= 1

    def handle_data(self, data):
        if not self.skip and data.strip():
            self.segments.append(_norm(data))


def _norm(text: str) -> str:
    return " ".join(text.split())


def _segments(html: str) -> _Segments:
    parser = _Segments()
    parser.feed(html)
    return parser


def _study_strings(data) -> set[str]:
    """Every string of the study file, whole and as its paragraphs, lines and list items."""
    out: set[str] = set()
    if isinstance(data, dict):
        for value in data.values():
            out |= _study_strings(value)
    elif isinstance(data, (list, tuple)):
        for value in data:
            out |= _study_strings(value)
    elif isinstance(data, str):
        out.add(_norm(data))
        for part in re.split(r"\n\s*\n|\n", data):
            out.add(_norm(part))
            out.add(_norm(part.lstrip("-* ")))
    return out


def _not_words(segment: str) -> bool:
    """Numbers, codes, punctuation and a script's {placeholders}, the same in every language."""
    segment = re.sub(r"\{\w+\}", "", segment)
    return not re.search(r"[^\W\d_]{2,}", segment) or re.fullmatch(r"[A-Z0-9]{6,}", segment) is not None


def _pages(slug: str, *, plan_slug: str) -> dict[str, str]:
    """Every participant page of the study ``slug`` by name: the step pages of a participant
    who completes it (with its refused forms and a stale-page message), the decline pages, the
    failed-check and the ended pages, the arrival refusals and the error pages."""
    pages: dict[str, str] = {}
    walker = Walker(Client(), slug)
    walker.enter()
    pages["consent"] = walker.page().content.decode()
    pages["consent_confirm_decline"] = walker.client.get(f"{walker.step_url}?confirm=decline").content.decode()
    old_token = walker.token()
    walker.consent()
    pages["instructions"] = walker.page().content.decode()
    walker.post({"decision": "agree"}, token=old_token)  # an old consent page: not recorded
    pages["stale_consent_message"] = walker.page().content.decode()
    walker.instructions()
    pages["training"] = walker.page().content.decode()
    walker.answer("")
    pages["training_refused"] = walker.page().content.decode()
    walker.answer("The first group fishes by day, the second at night.")
    pages["task_1"] = walker.page().content.decode()
    walker.answer(TOO_LONG)
    pages["task_1_refused"] = walker.page().content.decode()
    walker.answer("Group 2 describes the doctor as a woman more often.")
    pages["task_2"] = walker.page().content.decode()
    walker.answer("Group 1 grows maize and beans, group 2 wheat.")
    pages["survey"] = walker.page().content.decode()
    walker.post({"comment": COMMENT})
    pages["survey_refused"] = walker.page().content.decode()
    walker.survey()
    pages["done"] = walker.page().content.decode()

    decliner = Walker(Client(), slug)
    decliner.enter()
    decliner.consent(agree=False)
    pages["done_no_consent"] = decliner.page().content.decode()

    ended = Walker(Client(), slug)
    ended.enter()
    ended.consent()
    participant = Participant.objects.get(prolific_pid=ended.pid)
    participant_prolific_status_set(participant_id=participant.pk, status="returned")
    pages["ended"] = ended.page().content.decode()

    failing = Walker(Client(), f"{slug}-strict")
    failing.enter()
    failing.consent()
    failing.instructions()
    failing.answer("Both groups are about fish.")
    pages["done_failed_check"] = failing.page().content.decode()

    client = Client()
    pages["entry_error"] = client.get(f"/s/{slug}/", {"PROLIFIC_PID": "nope"}).content.decode()
    session = new_id()
    Walker(Client(), slug).enter(SESSION_ID=session)
    pages["session_in_use"] = Walker(Client(), slug).enter(SESSION_ID=session).content.decode()
    pages["no_session"] = Client().get(f"/s/{slug}/step/").content.decode()
    pages["not_open"] = Walker(Client(), f"{slug}-draft").enter().content.decode()
    pages["study_full"] = Walker(Client(), f"{slug}-full").enter().content.decode()

    plan = study_plan_for_slug(plan_slug)
    request = RequestFactory().post(f"/s/{plan_slug}/step/")
    pages["csrf_failure"] = csrf_failure(request).content.decode()
    with translation.override(plan.language):
        for seconds in (1, 30, 60, 600):
            pages[f"rate_limited_{seconds}"] = render_to_string(
                "participation/rate_limited.html", {"study": plan, "retry_after_s": seconds}
            )
        for status in (400, 403, 404, 500):
            pages[f"error_{status}"] = render_to_string(f"{status}.html", {"area": "participant"})
    return pages


def _import_variants(data: dict, slug: str) -> None:
    """The study at ``slug`` and its variants: failed checks end the study, a draft, a full one."""
    study_import(data={**data, "slug": slug})
    study_import(data={**data, "slug": f"{slug}-strict", "failed_check_policy": "end"})
    study_import(data={**data, "slug": f"{slug}-draft", "status": "draft"})
    study_import(data={**data, "slug": f"{slug}-full", "stop_at_target": True, "target_sample_size": 1})
    Walker(Client(), f"{slug}-full").enter()  # takes the one place


@pytest.fixture
def english_pages(db, demo_data):
    """Every participant page of the demo study in English."""
    _import_variants({**demo_data, "language": "en"}, "english")
    return _pages("english", plan_slug="english")


@pytest.mark.parametrize("code", TRANSLATED)
def test_every_participant_page_speaks_the_study_language(code, demo_data, english_pages):
    """On every participant page of a study in ``code``, <html lang> is the code and no text
    is the same as on the English study's page, except the study's own texts (kept as written)."""
    _import_variants({**demo_data, "language": code}, code)
    pages = _pages(code, plan_slug=code)
    assert pages.keys() == english_pages.keys()
    own = _study_strings(demo_data) | {TOO_LONG, COMMENT}
    leftovers = {}
    for name, html in pages.items():
        page = _segments(html)
        assert page.lang == code, name
        assert page.dir is None, name
        english = set(_segments(english_pages[name]).segments)
        same = [s for s in page.segments if s in english and s not in own and not _not_words(s)]
        if same:
            leftovers[name] = same
    assert leftovers == {}
    # The English pages really are English (the comparison above compares something).
    assert _segments(english_pages["consent"]).lang == "en"


def test_study_texts_stay_exactly_as_written_in_every_language(db, demo_data):
    """The consent, instructions and survey texts of a German study are shown as written."""
    _import_variants({**demo_data, "language": "de"}, "de")
    pages = _pages("de", plan_slug="de")
    consent = _segments(pages["consent"]).segments
    first_paragraph = _norm(demo_data["consent_text"].split("\n\n")[0])
    assert first_paragraph in consent
    survey = _segments(pages["survey"]).segments
    assert _norm(demo_data["survey"]["condition_items"][0]["text"]) in survey
    assert _norm(demo_data["survey"]["likert_scale"][0]) in survey


def test_a_right_to_left_study_renders_rtl_with_platform_words_in_english(db, demo_data):
    """An ``ar`` study's pages carry lang="ar" dir="rtl"; its platform words stay English."""
    study_import(data={**demo_data, "slug": "arabic", "language": "ar"})
    walker = Walker(Client(), "arabic")
    walker.enter()
    page = _segments(walker.page().content.decode())
    assert (page.lang, page.dir) == ("ar", "rtl")
    assert "I agree and want to take part" in page.segments


def test_numbers_follow_the_study_language(db, demo_data):
    """The answer limits on a task page are written as the study's language writes numbers."""
    study_import(data={**demo_data, "slug": "deutsch", "language": "de"})
    walker = Walker(Client(), "deutsch")
    walker.enter()
    walker.consent()
    walker.instructions()
    html = walker.page().content.decode()
    assert "5.000" in html and "5,000" not in html


def test_staff_pages_stay_english_after_a_study_page(db, demo_data, client):
    """A German study's page does not leave German active for the next request in the thread."""
    study_import(data={**demo_data, "slug": "deutsch", "language": "de"})
    Walker(Client(), "deutsch").enter()
    assert translation.get_language() == "en-gb"
    response = client.get("/accounts/login/")
    assert _segments(response.content.decode()).lang == "en-gb"


def test_the_researcher_preview_shows_the_study_in_its_language(db, demo_data, staff_client):
    """The preview of a German study's pages is German, its banner for the researcher English."""
    study_import(data={**demo_data, "slug": "deutsch", "language": "de"})
    for name in ("consent", "instructions", "task_1", "survey"):
        response = staff_client.get(f"/researcher/deutsch/preview/0/{name}/")
        if response.status_code == 404:
            continue
        page = _segments(response.content.decode())
        assert page.lang == "de", name
    consent = staff_client.get("/researcher/deutsch/preview/0/consent/").content.decode()
    assert "Ich stimme zu und möchte teilnehmen" in consent
    assert '<div class="preview-banner" lang="en" dir="ltr">Preview of cell' in consent
    # The researcher's own pages stay English.
    assert _segments(staff_client.get("/researcher/deutsch/").content.decode()).lang == "en-gb"


def test_an_error_page_of_a_study_request_speaks_the_study_language(db, demo_data):
    """A 500 during a German study's request (the view noted its language) is in German."""
    from spotlight_study.errors import STUDY_LANGUAGE_ATTRIBUTE, server_error

    request = RequestFactory().get("/s/deutsch/step/")
    setattr(request, STUDY_LANGUAGE_ATTRIBUTE, "de")
    html = server_error(request).content.decode()
    assert _segments(html).lang == "de"
    assert "Bei uns ist etwas schiefgelaufen" in html
    english = server_error(RequestFactory().get("/s/deutsch/step/")).content.decode()
    assert "Something went wrong on our side" in english


def test_the_browser_language_does_not_choose_the_page_language(db, demo_data):
    """A browser asking for German gets an English study in English, a French one in French."""
    study_import(data={**demo_data, "slug": "english", "language": "en"})
    study_import(data={**demo_data, "slug": "french", "language": "fr"})
    for slug, expected in (("english", "en"), ("french", "fr")):
        walker = Walker(Client(HTTP_ACCEPT_LANGUAGE="de-DE,de;q=0.9"), slug)
        walker.enter()
        assert _segments(walker.page().content.decode()).lang == expected


@pytest.mark.parametrize("path", ["gibt-es-nicht/", "step/extra/", "a/b/c"])
def test_a_404_under_a_german_study_is_german(db, demo_data, path):
    """/s/<slug>/<an address no page has> of a German study: the 404 page is German
    (``<html lang="de">``, "Seite nicht gefunden"), for a participant with or without a session."""
    study_import(data={**demo_data, "slug": "deutsch", "language": "de"})
    walker = Walker(Client(), "deutsch")
    walker.enter()
    for client in (walker.client, Client()):
        response = client.get(f"/s/deutsch/{path}")
        assert response.status_code == 404
        html = response.content.decode()
        assert _segments(html).lang == "de"
        assert "Seite nicht gefunden" in html and "Page not found" not in html


def test_a_404_under_an_unknown_study_stays_in_the_default_language(db):
    """No study at the slug: the 404 page is in the site's default language."""
    response = Client().get("/s/gibt-es-nicht/irgendwo/")
    assert response.status_code == 404
    assert "Page not found" in response.content.decode()
