"""The site's own favicon: linked from every page of base.html, and /favicon.ico is no 404."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from django.test import Client

from .conftest import REPO

ICON_URL = "/static/img/favicon.svg"


def _body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def test_favicon_ico_redirects_to_the_svg_icon(client):
    """/favicon.ico (asked for by browsers on every page) redirects to the SVG, which is served."""
    response = client.get("/favicon.ico")
    assert response.status_code == 302 and response["Location"] == ICON_URL
    icon = client.get(ICON_URL)
    assert icon.status_code == 200 and icon["Content-Type"] == "image/svg+xml"
    root = ET.fromstring(_body(icon))
    assert root.tag == "{http://www.w3.org/2000/svg}svg" and root.get("viewBox") == "0 0 32 32"


def test_the_icon_is_a_small_self_contained_svg():
    """The SVG loads nothing else (no script, no external reference) and stays small."""
    text = (REPO / "static" / "img" / "favicon.svg").read_text(encoding="utf-8")
    assert len(text.encode()) < 2048
    assert "<script" not in text and "href" not in text and "url(" not in text


@pytest.mark.django_db
def test_pages_of_base_html_link_the_icon(staff_client):
    """Staff pages and the login page (both built on base.html) carry ``<link rel="icon">``."""
    link = f'<link rel="icon" href="{ICON_URL}" type="image/svg+xml">'.encode()
    assert link in staff_client.get("/researcher/").content
    assert link in Client().get("/accounts/login/").content
