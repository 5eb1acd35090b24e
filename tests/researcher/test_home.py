"""The researcher home: counts per study (in progress, completed, labeled) and the site navigation."""
import re

from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.db import connection

from spotlight_study.annotation.models import FinalLabel
from spotlight_study.annotation.services.final_labels import final_label_resolve
from spotlight_study.annotation.services.labels import label_save
from spotlight_study.annotation.services.queue import assignment_next
from spotlight_study.participation.models import TaskResponse
from spotlight_study.participation.pilot import pilot_run
from spotlight_study.studies.services import study_import

from ..annotation.conftest import complete_participants, label, make_user
from ..conftest import Walker


def row_of(html: str, slug: str) -> list[str]:
    """The cells of the home table row of study ``slug``."""
    row = re.search(rf"<tr><td><a href=\"/researcher/{slug}/\">.*?</tr>", html, re.S).group(0)
    return re.findall(r"<td>(.*?)</td>", row, re.S)


def test_home_counts_in_progress_completed_and_labeled(staff_client, demo_study):
    """Pilots are left out; labeled counts the answers with a final label out of all saved answers."""
    complete_participants(demo_study.slug, 2)
    Walker(Client(), demo_study.slug).enter()
    pilot_run(study=demo_study, participants=2, seed=1)
    a1, a2 = make_user("a1", "annotators"), make_user("a2", "annotators")
    real = TaskResponse.objects.filter(participant__is_pilot=False).count()
    # a1 labels every answer, a2 one: exactly one answer has its k = 2 agreeing labels.
    while (item := assignment_next(study=demo_study, annotator=a1)) is not None:
        label_save(study=demo_study, annotator=a1, public_id=item.public_id, label=label())
    item = assignment_next(study=demo_study, annotator=a2)
    label_save(study=demo_study, annotator=a2, public_id=item.public_id, label=label())
    final_label_resolve(item=item)
    pilot_labeled = FinalLabel.objects.filter(item__response__participant__is_pilot=True).count()
    cells = row_of(staff_client.get("/researcher/").content.decode(), demo_study.slug)
    assert cells[3:6] == ["1", "2", f"{1 - pilot_labeled} / {real}"]


def test_home_queries_do_not_grow_with_studies(staff_client, demo_study, demo_data):
    """The home issues the same number of queries for one study as for three."""
    with CaptureQueriesContext(connection) as one:
        staff_client.get("/researcher/")
    for i in (2, 3):
        study_import(data={**demo_data, "slug": f"copy-{i}", "title": f"Copy {i}"})
    complete_participants("copy-2", 1)
    with CaptureQueriesContext(connection) as three:
        html = staff_client.get("/researcher/").content.decode()
    assert "copy-3" in html
    assert len(three.captured_queries) == len(one.captured_queries)


def test_nav_is_on_every_staff_area_and_not_for_participants(staff_client, demo_study):
    """Researcher, annotation, stimuli and Prolific pages share the nav; the Admin link is real."""
    slug = demo_study.slug
    for url in ("/researcher/", f"/researcher/{slug}/", "/researcher/team/", f"/annotate/{slug}/overview/",
                "/stimuli/", f"/prolific/{slug}/"):
        html = staff_client.get(url).content.decode()
        nav = re.search(r'<nav class="site-nav".*?</nav>', html, re.S)
        assert nav, url
        for href in ("/researcher/", "/researcher/team/", "/stimuli/", "/annotate/", "/admin/", "/accounts/logout/"):
            assert f'href="{href}"' in nav.group(0) or f'action="{href}"' in nav.group(0), (url, href)
    assert "Admin</a> · <form" not in staff_client.get("/researcher/").content.decode()
    participant = Walker(Client(), slug)
    participant.enter()
    consent = participant.page()
    assert consent.status_code == 200 and b"Consent" in consent.content
    assert b'class="site-nav"' not in consent.content


def test_annotator_nav_shows_only_annotation(client, demo_study):
    """An annotator's nav has the annotation home and log out, no researcher, stimuli or admin links."""
    client.force_login(make_user("ann", "annotators"))
    nav = re.search(r'<nav class="site-nav".*?</nav>', client.get("/annotate/").content.decode(), re.S).group(0)
    assert 'href="/annotate/"' in nav and 'action="/accounts/logout/"' in nav
    for href in ("/researcher/", "/stimuli/", "/admin/"):
        assert f'href="{href}"' not in nav
