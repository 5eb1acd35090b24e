"""Blinding and roles: nothing about the participant or other annotators reaches an annotator."""

import re

import pytest
from django.test import Client

from spotlight_study.annotation.models import Item
from spotlight_study.annotation.services.labels import label_save
from spotlight_study.annotation.services.queue import assignment_next
from spotlight_study.participation.flags import WRITING_FLAG_KEYS
from spotlight_study.participation.models import Participant, TaskResponse
from spotlight_study.participation.selectors import participant_pseudonym

from .conftest import complete_participants, label, make_user

CANARY_PID = "canarypidq7z3x9w2v"
CANARY_STUDY = "canarystudyk2j8h4"
CANARY_SESSION = "canarysessm5n1b6"
CANARY_CONDITION = "canarycondition_x41r"
CANARY_NOTE = "canary-note-of-another-annotator-p0o9"
CANARY_MS = 987654321


@pytest.fixture
def canary_study(demo_study):
    """One participant whose identifying and condition fields hold canary strings, k=2."""
    (walker,) = complete_participants(demo_study.slug, 1)
    p = Participant.objects.get(prolific_pid=walker.pid)
    p.prolific_pid, p.prolific_study_id, p.prolific_session_id = (
        CANARY_PID,
        CANARY_STUDY,
        CANARY_SESSION,
    )
    p.cell_plan = [{**t, "condition": CANARY_CONDITION} for t in p.cell_plan]
    p.save()
    TaskResponse.objects.filter(participant=p).update(
        condition=CANARY_CONDITION, time_on_task_ms=CANARY_MS
    )
    return demo_study


def _canaries(study):
    return [
        CANARY_PID,
        CANARY_STUDY,
        CANARY_SESSION,
        CANARY_CONDITION,
        CANARY_NOTE,
        str(CANARY_MS),
        participant_pseudonym(study=study, prolific_pid=CANARY_PID),
        "no_pattern",
        "more often in group",
    ]


class Recorder:
    """A test client that keeps every response body and redirect target it saw."""

    def __init__(self, user):
        self.client = Client()
        self.client.force_login(user)
        self.seen: list[tuple[str, str]] = []

    def _keep(self, what, response):
        self.seen.append((what, response.content.decode(errors="replace")))
        if response.has_header("Location"):
            self.seen.append((f"{what} -> Location", response["Location"]))
        return response

    def get(self, url, **kw):
        return self._keep(f"GET {url}", self.client.get(url, **kw))

    def post(self, url, data=None, **kw):
        return self._keep(f"POST {url}", self.client.post(url, data or {}, **kw))

    def put(self, url, data, **kw):
        return self._keep(
            f"PUT {url}", self.client.put(url, data, content_type="application/json", **kw)
        )


def _item_ids(html):
    return re.findall(r"/annotate/[\w-]+/items/([\w-]+)/", html)


def test_canary_never_reaches_an_annotator(canary_study, annotators):
    """Canary PID, pseudonym, condition, timing and another annotator's note appear nowhere an annotator can reach."""
    study = canary_study
    a, b, _ = annotators
    # b labels every item first, with a canary note: a must never see it.
    while (item := assignment_next(study=study, annotator=b)) is not None:
        label_save(
            study=study,
            annotator=b,
            public_id=item.public_id,
            label=label(exclusion="other", exclusion_note=CANARY_NOTE),
        )
    r = Recorder(a)
    slug = study.slug
    r.get("/annotate/")
    r.get(f"/annotate/{slug}/")
    r.get("/researcher/")  # the login redirect target sends annotators on
    first = r.post(f"/annotate/{slug}/next/")
    assert first.status_code == 302
    item_url = first["Location"]
    page = r.get(item_url)
    assert page.status_code == 200
    r.post(item_url, {"identified": "maybe"})  # invalid form: the page comes back with errors
    r.post(
        item_url,
        {"identified": "1", "surface_difference": "0", "no_difference": "1", "exclusion": "none"},
    )
    saved = r.post(
        item_url,
        {
            "identified": "1",
            "surface_difference": "0",
            "no_difference": "0",
            "exclusion": "other",
            "exclusion_note": "too short",
            "save_next": "1",
        },
    )
    assert saved.status_code == 302
    r.get(saved["Location"])
    r.get(f"/annotate/{slug}/")
    for item_id in set(_item_ids("".join(body for _, body in r.seen))):
        r.get(f"/annotate/{slug}/items/{item_id}/")
        r.get(f"/annotate/api/{slug}/items/{item_id}/")
        r.put(f"/annotate/api/{slug}/items/{item_id}/label/", {"identified": "x"})
    api_next = r.post(f"/annotate/api/{slug}/next/", content_type="application/json")
    assert api_next.status_code == 200
    api_item = api_next.json()["item"]
    assert set(api_item) == {
        "id",
        "setting",
        "setting_title",
        "group1",
        "group2",
        "target_description",
        "surface_difference",
        "answer",
        "quality",
        "codebook",
    }
    assert set(api_item["quality"]) == {
        "paste_chars", "very_short_time", "long_time_hidden", "identical_answer", "writing_flags",
    }
    assert set(api_item["quality"]["writing_flags"]) <= set(WRITING_FLAG_KEYS)
    the_item = Item.objects.get(public_id=api_item["id"])
    # The setting's definition order, not the participant's shuffled order.
    assert api_item["group1"] == the_item.setting.group1_texts
    assert api_item["group2"] == the_item.setting.group2_texts
    r.put(f"/annotate/api/{slug}/items/{api_item['id']}/label/", {**label().__dict__})
    r.put(
        f"/annotate/api/{slug}/items/{api_item['id']}/label/",
        {
            "identified": True,
            "surface_difference": False,
            "no_difference": False,
            "tags": ["no such tag"],
        },
    )
    # Items of others, unknown ids, forbidden pages and exports.
    b_only = make_user("ann-b-only", "annotators")
    hidden = assignment_next(study=study, annotator=b_only)
    for url in (
        f"/annotate/{slug}/items/does-not-exist/",
        f"/annotate/api/{slug}/items/does-not-exist/",
        f"/annotate/{slug}/adjudicate/",
        f"/annotate/{slug}/overview/",
        f"/annotate/{slug}/export/annotations.csv",
        f"/annotate/{slug}/export/final_labels.csv",
        f"/annotate/{slug}/export/agreement.csv",
        f"/researcher/{slug}/",
        f"/researcher/{slug}/preview/",
        "/admin/",
        "/admin/annotation/item/",
        "/admin/participation/participant/",
    ):
        r.get(url)
    if hidden is not None:
        assert r.get(f"/annotate/{slug}/items/{hidden.public_id}/").status_code == 404
        assert r.get(f"/annotate/api/{slug}/items/{hidden.public_id}/").status_code == 404
    r.get(f"/annotate/{slug}/items/{the_item.public_id}/", follow=True)

    canaries = _canaries(study)
    assert len(r.seen) >= 35
    for what, text in r.seen:
        for canary in canaries:
            assert canary not in text, f"{canary!r} leaked in {what}"


def test_adjudicator_pages_are_blind_to_participant_and_condition(
    canary_study, annotators, adjudicator
):
    """The adjudicator sees the competing labels without names, and no participant or condition data."""
    study = canary_study
    a, b, _ = annotators
    for user, identified in ((a, True), (b, False)):
        while (item := assignment_next(study=study, annotator=user)) is not None:
            label_save(
                study=study,
                annotator=user,
                public_id=item.public_id,
                label=label(identified=identified),
            )
    r = Recorder(adjudicator)
    listing = r.get(f"/annotate/{study.slug}/adjudicate/")
    ids = re.findall(rf"/annotate/{study.slug}/adjudicate/([\w-]+)/", listing.content.decode())
    assert len(ids) == 3
    page = r.get(f"/annotate/{study.slug}/adjudicate/{ids[0]}/")
    html = page.content.decode()
    assert "Label A" in html and "Label B" in html
    assert a.username not in html and b.username not in html
    for what, text in r.seen:
        for canary in _canaries(study)[:7] + ["no_pattern"]:
            assert canary not in text, f"{canary!r} leaked in {what}"


@pytest.mark.parametrize(
    "url",
    [
        "/researcher/{slug}/",
        "/researcher/{slug}/preview/",
        "/researcher/{slug}/preview/0/consent/",
        "/annotate/{slug}/overview/",
        "/annotate/{slug}/export/annotations.csv",
        "/annotate/{slug}/export/final_labels.csv",
        "/annotate/{slug}/export/agreement.csv",
        "/annotate/{slug}/adjudicate/",
    ],
)
def test_annotators_are_refused_researcher_pages_and_exports(demo_study, annotators, url):
    """Researcher pages, exports and adjudication answer 403 to an annotator."""
    client = Client()
    client.force_login(annotators[0])
    assert client.get(url.format(slug=demo_study.slug)).status_code == 403


def test_annotators_cannot_use_the_admin(demo_study, annotators):
    """The admin sends an annotator (not staff) to its login page instead of showing data."""
    client = Client()
    client.force_login(annotators[0])
    response = client.get("/admin/participation/participant/")
    assert response.status_code == 302 and response["Location"].startswith("/admin/login/")


def test_researchers_cannot_annotate(demo_study, staff_client):
    """Staff are not blind, so they may not use the annotator queue or API."""
    assert staff_client.get(f"/annotate/{demo_study.slug}/").status_code == 403
    assert staff_client.post(f"/annotate/api/{demo_study.slug}/next/").status_code == 403


def test_anonymous_users_are_sent_to_login(demo_study):
    """Without a login every annotation page redirects to the login page."""
    client = Client()
    for url in (
        "/annotate/",
        f"/annotate/{demo_study.slug}/",
        f"/annotate/{demo_study.slug}/overview/",
    ):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert client.post(f"/annotate/api/{demo_study.slug}/next/").status_code == 403


def test_annotator_lands_on_annotation_home_after_login(demo_study, answered, annotators):
    """Logging in as an annotator ends on the annotation home, with the study's queue linked."""
    client = Client()
    response = client.post(
        "/accounts/login/", {"username": "ann1", "password": "pw-for-tests-only"}, follow=True
    )
    assert response.redirect_chain[-1][0] == "/annotate/"
    assert f"/annotate/{demo_study.slug}/" in response.content.decode()
