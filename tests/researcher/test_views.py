"""Researcher pages: staff only, live figures, and a preview that records nothing."""
import re

from spotlight_study.participation.models import Participant, TaskResponse

from ..conftest import Walker


def test_researcher_pages_need_staff(client, demo_study):
    """Anonymous visitors are sent to the login page."""
    for url in ("/researcher/", f"/researcher/{demo_study.slug}/", f"/researcher/{demo_study.slug}/preview/"):
        response = client.get(url)
        assert response.status_code == 302 and "login" in response["Location"]


def test_dashboard_shows_cells_times_and_flags(client, staff_client, demo_study):
    """The dashboard counts participants per cell by state and lists flags by pseudonym."""
    from django.test import Client

    for _ in range(2):
        Walker(Client(), demo_study.slug).complete(training="fishing")
    Walker(Client(), demo_study.slug).enter()
    html = staff_client.get(f"/researcher/{demo_study.slug}/").content.decode()
    totals = re.search(r"<th colspan=\"2\">Total</th><th>(\d+)</th><th>(\d+)</th>", html)
    assert totals.groups() == ("1", "2")
    flagged = re.search(r'<table id="flagged-participants">(.*?)</table>', html, re.S).group(1)
    assert flagged.count("failed instruction check") == 2
    assert "Median time per task" in html and "doctor" in html
    for p in Participant.objects.all():
        assert p.prolific_pid not in html
    assert "{{%PROLIFIC_PID%}}" in html


def test_preview_walks_every_page_and_records_nothing(staff_client, demo_study):
    """Following the preview's forms from consent to done renders every page and stores nothing."""
    url = f"/researcher/{demo_study.slug}/preview/2/consent/"
    visited = []
    while url:
        response = staff_client.get(url)
        assert response.status_code == 200, url
        html = response.content.decode()
        assert "nothing is recorded" in html
        visited.append(url.rstrip("/").rsplit("/", 1)[1])
        match = re.search(r'<form method="get" action="([^"]+)"', html)
        url = match.group(1) if match else None
    assert visited == ["consent", "instructions", "training", "task-1", "task-2", "survey", "done"]
    assert not Participant.objects.exists() and not TaskResponse.objects.exists()


def test_preview_of_unknown_cell_is_404(staff_client, demo_study):
    """A cell index outside the design is a 404."""
    assert staff_client.get(f"/researcher/{demo_study.slug}/preview/9/consent/").status_code == 404
