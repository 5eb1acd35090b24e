"""The item page's progress, skip, error summary, conflict check, and adjudication pre-fill."""

import re

import pytest
from django.test import Client

from spotlight_study.annotation.errors import InvalidLabel, ReservationLost, StaleLabel
from spotlight_study.annotation.label_import.importer import labels_import
from spotlight_study.annotation.models import Annotation, AnnotationRevision, Assignment, Item
from spotlight_study.annotation.selectors import annotator_progress
from spotlight_study.annotation.services.labels import label_save
from spotlight_study.annotation.services.queue import (
    assignment_next,
    assignment_skip,
    item_open,
    items_sync,
)

from .conftest import label

VALID = {
    "identified": "1",
    "surface_difference": "0",
    "no_difference": "0",
    "exclusion": "none",
    "exclusion_note": "",
    "new_tags": "",
}


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _url(study, pid, suffix=""):
    return f"/annotate/{study.slug}/items/{pid}/{suffix}"


def test_skip_frees_the_place_and_the_item_comes_back_last(demo_study, answered, annotators):
    """A skipped item goes to others at once and returns to its annotator after all the rest."""
    a, b, _ = annotators
    first = assignment_next(study=demo_study, annotator=a)
    assert assignment_skip(study=demo_study, annotator=a, public_id=first.public_id)
    assert Assignment.objects.get(item=first, annotator=a).state == Assignment.State.SKIPPED
    seen = []
    while (item := assignment_next(study=demo_study, annotator=a)) is not None:
        label_save(study=demo_study, annotator=a, public_id=item.public_id, label=label())
        seen.append(item.public_id)
    assert len(seen) == 6 and seen[-1] == first.public_id
    assert Annotation.objects.filter(annotator=a).count() == 6
    assert Assignment.objects.get(item=first, annotator=a).state == Assignment.State.SUBMITTED


def test_skip_does_not_block_other_annotators(demo_study, answered, annotators):
    """With k=2, a skip leaves the place free: two other annotators can still label the item."""
    a, b, c = annotators
    first = assignment_next(study=demo_study, annotator=a)
    assignment_skip(study=demo_study, annotator=a, public_id=first.public_id)
    for user in (b, c):
        while (item := assignment_next(study=demo_study, annotator=user)) is not None:
            label_save(
                study=demo_study, annotator=user, public_id=item.public_id, label=label()
            )
    assert set(first.annotations.values_list("annotator__username", flat=True)) == {"ann2", "ann3"}
    assert assignment_next(study=demo_study, annotator=a) is None  # full now
    with pytest.raises(ReservationLost):
        item_open(study=demo_study, annotator=a, public_id=first.public_id)


def test_skipping_a_labeled_item_keeps_the_label(demo_study, answered, annotators):
    """Skipping an item one has labeled moves on and keeps the label and the place."""
    a = annotators[0]
    item = assignment_next(study=demo_study, annotator=a)
    label_save(study=demo_study, annotator=a, public_id=item.public_id, label=label())
    assert not assignment_skip(study=demo_study, annotator=a, public_id=item.public_id)
    assert Assignment.objects.get(item=item, annotator=a).state == Assignment.State.SUBMITTED


def test_skip_button_opens_another_item(demo_study, answered, annotators):
    """POST to the skip URL redirects to a different item; an item not theirs answers 404."""
    a = annotators[0]
    client = _client(a)
    first = assignment_next(study=demo_study, annotator=a)
    response = client.post(_url(demo_study, first.public_id, "skip/"))
    assert response.status_code == 302
    assert "/items/" in response.url and first.public_id not in response.url
    untouched = Item.objects.exclude(assignments__annotator=a).first()
    assert client.post(_url(demo_study, untouched.public_id, "skip/")).status_code == 404
    assert client.post(_url(demo_study, "no-such-item", "skip/")).status_code == 404


def test_item_page_shows_progress(demo_study, answered, annotators):
    """The item page shows 'labeled / total' for the annotator, e.g. 0 / 6 then 1 / 6."""
    a = annotators[0]
    client = _client(a)
    item = assignment_next(study=demo_study, annotator=a)
    page = client.get(_url(demo_study, item.public_id))
    assert re.search(r'id="progress">0 / 6<', page.content.decode())
    client.post(_url(demo_study, item.public_id), {**VALID, "base_revision": "0", "save": "1"})
    page = client.get(_url(demo_study, item.public_id))
    assert re.search(r'id="progress">1 / 6<', page.content.decode())
    assert annotator_progress(study=demo_study, annotator=a) == {"labeled": 1, "total": 6}


def test_validation_error_gives_a_linked_summary_at_the_top(demo_study, answered, annotators):
    """A save without answers lists each problem at the top, linked to the field's id."""
    a = annotators[0]
    item = assignment_next(study=demo_study, annotator=a)
    page = _client(a).post(
        _url(demo_study, item.public_id), {"exclusion": "other", "base_revision": "0"}
    )
    html = page.content.decode()
    assert page.status_code == 400
    for name in ("identified", "surface_difference", "no_difference"):
        assert f'href="#field-{name}"' in _summary(html)
        assert f'id="field-{name}"' in html
    assert html.index('id="error-summary"') < html.index('id="answer-text"')
    checked = _client(a).post(
        _url(demo_study, item.public_id), {**VALID, "exclusion": "other", "base_revision": "0"}
    )
    assert checked.status_code == 400  # the service's check of the note, shown the same way
    assert 'href="#field-exclusion_note"' in _summary(checked.content.decode())
    assert not Annotation.objects.exists()


def _summary(html: str) -> str:
    start = html.index('id="error-summary"')
    return html[start : html.index("</div>", start)]


def test_save_from_an_older_page_warns_and_keeps_the_saved_label(
    demo_study, answered, annotators
):
    """Two tabs: the second save, based on revision 0, is refused with both versions shown."""
    a = annotators[0]
    client = _client(a)
    item = assignment_next(study=demo_study, annotator=a)
    url = _url(demo_study, item.public_id)
    assert client.post(url, {**VALID, "base_revision": "0", "save": "1"}).status_code == 302
    stale = client.post(
        url, {**VALID, "identified": "0", "exclusion": "duplicate", "base_revision": "0"}
    )
    html = stale.content.decode()
    assert stale.status_code == 409
    assert 'id="conflict"' in html and "Saved (save 1)" in html
    assert re.search(r'<tr class="differs"><th scope="row">Target identified<span class="differs-mark">differs</span></th><td>yes</td><td>no</td>', html)
    assert re.search(r'<tr class="differs"><th scope="row">Exclusion<span class="differs-mark">differs</span></th><td>none</td><td>duplicate</td>', html)
    assert 'name="base_revision" value="1"' in html  # saving this page again is deliberate
    saved = Annotation.objects.get(item=item, annotator=a)
    assert (saved.identified, saved.revision) == (True, 1)
    again = client.post(
        url, {**VALID, "identified": "0", "exclusion": "duplicate", "base_revision": "1"}
    )
    assert again.status_code == 302
    saved.refresh_from_db()
    assert (saved.identified, saved.exclusion, saved.revision) == (False, "duplicate", 2)
    assert AnnotationRevision.objects.filter(annotation=saved).count() == 2


def test_label_save_checks_the_base_revision(demo_study, answered, annotators):
    """label_save with an outdated base_revision raises StaleLabel and saves nothing."""
    a = annotators[0]
    item = assignment_next(study=demo_study, annotator=a)
    kw = dict(study=demo_study, annotator=a, public_id=item.public_id)
    label_save(**kw, label=label(), base_revision=0)
    with pytest.raises(StaleLabel) as caught:
        label_save(**kw, label=label(identified=False), base_revision=0)
    assert caught.value.revision == 1 and caught.value.current["identified"] is True
    with pytest.raises(StaleLabel):
        label_save(**kw, label=label(), base_revision=7)
    other = assignment_next(study=demo_study, annotator=a)
    with pytest.raises(InvalidLabel):  # a revision that never existed
        label_save(
            study=demo_study, annotator=a, public_id=other.public_id, label=label(), base_revision=3
        )
    label_save(**kw, label=label(identified=False), base_revision=1)
    label_save(**kw, label=label(), base_revision=None)  # no check: last save wins
    assert Annotation.objects.get(item=item, annotator=a).revision == 3


def test_api_refuses_a_label_saved_since_base_revision(demo_study, answered, annotators):
    """The annotator API answers 409 with the saved label when base_revision is outdated."""
    a = annotators[0]
    client = _client(a)
    item = assignment_next(study=demo_study, annotator=a)
    url = f"/annotate/api/{demo_study.slug}/items/{item.public_id}/label/"
    body = {"identified": True, "surface_difference": False, "no_difference": False}
    first = client.put(url, {**body, "base_revision": 0}, content_type="application/json")
    assert first.status_code == 200
    conflict = client.put(
        url, {**body, "identified": False, "base_revision": 0}, content_type="application/json"
    )
    assert conflict.status_code == 409
    assert conflict.json()["current"]["identified"] is True and conflict.json()["revision"] == 1
    assert Annotation.objects.get(item=item).identified is True


def test_adjudication_is_prefilled_where_the_annotators_agree(demo_study, answered, adjudicator):
    """Agreed fields start filled in; the disagreeing one starts blank and is marked."""
    items_sync(study=demo_study)
    item = Item.objects.filter(study=demo_study).order_by("pk").first()
    labels_import(
        study=demo_study,
        text=(
            "item,annotator,identified,surface_difference,no_difference,exclusion\n"
            f"{item.public_id},ann_a,1,0,0,duplicate\n"
            f"{item.public_id},ann_b,0,0,0,duplicate\n"
        ),
    )
    page = _client(adjudicator).get(f"/annotate/{demo_study.slug}/adjudicate/{item.public_id}/")
    assert page.status_code == 200
    form = page.context["form"]
    assert form["identified"].value() is None
    assert form["surface_difference"].value() == "0"
    assert form["no_difference"].value() == "0"
    assert form["exclusion"].value() == "duplicate"
    assert form["tags"].value() == []
    html = page.content.decode()
    assert '<tr class="differs"><th scope="row">Target identified<span class="differs-mark">differs</span></th>' in html
    assert '<tr class="differs"><th scope="row">Exclusion' not in html and '<th scope="row">Exclusion</th>' in html
    assert 'id="prefill-note"' in html


def test_skipping_the_last_open_item_says_it_comes_straight_back(demo_study, answered, annotators):
    """When nothing else is open, skip returns the same item and says why."""
    a = annotators[0]
    for _ in range(5):
        item = assignment_next(study=demo_study, annotator=a)
        label_save(study=demo_study, annotator=a, public_id=item.public_id, label=label())
    last = assignment_next(study=demo_study, annotator=a)
    response = _client(a).post(_url(demo_study, last.public_id, "skip/"), follow=True)
    assert response.request["PATH_INFO"] == _url(demo_study, last.public_id)
    assert "here is the skipped item again" in response.content.decode()
