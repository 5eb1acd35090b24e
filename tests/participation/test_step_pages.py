"""The step pages (``participation/templates/participation/``, framed by ``step_base.html``)
escape what a study file says, and share the staff and error pages' ``<head>``."""
from __future__ import annotations

import re
from html import unescape

import pytest
from django.template.loader import render_to_string
from django.test import Client
from django.test.html import parse_html

from spotlight_study.studies.services import study_import

from ..conftest import Walker

MARKUP = '<b id="x">bold</b> & "quoted" \'single\''


@pytest.fixture
def marked_up_study(db, demo_data):
    """The demo study with markup in every text a step page shows."""
    for key in ("title", "consent_text", "instructions_text", "example_answer", "pattern_intro_text", "task_prompt"):
        demo_data[key] = f"{key} {MARKUP}"
    for setting in [demo_data["training"], *demo_data["settings"]]:
        setting["group1"] = [f"{text} {MARKUP}" for text in setting["group1"]]
    demo_data["survey"]["comment_prompt"] = f"comment {MARKUP}"
    study = study_import(data=demo_data)
    # Group 1's texts as the pages show them: the training's on the instructions and the
    # training page, each main setting's on its task page.
    study.group1_shown = 2 * len(demo_data["training"]["group1"]) + sum(
        len(setting["group1"]) for setting in demo_data["settings"]
    )
    return study


def _pages(slug: str) -> list[str]:
    """Every step page of one participant: consent, instructions, training, the tasks, the
    survey, a refused survey and the end page."""
    walker = Walker(Client(), slug)
    walker.enter()
    pages = [walker.page().content.decode()]
    walker.consent()
    pages.append(walker.page().content.decode())
    walker.instructions()
    for text in ("The first group fishes by day, the second at night.", "one", "two"):
        pages.append(walker.page().content.decode())
        walker.answer(text)
    pages.append(walker.page().content.decode())
    walker.post({"comment": MARKUP})  # no question answered: shown again with the comment kept
    pages.append(walker.page().content.decode())
    walker.survey()
    pages.append(walker.page().content.decode())
    return pages


def test_step_pages_escape_every_text_of_the_study_file(marked_up_study):
    """A study file's markup shows as text on every step page, never as an element."""
    pages = _pages(marked_up_study.slug)
    assert "Thank you" in pages[-1] and "Please check the questions marked below" in pages[-2]
    shown = 0
    for html in pages:
        assert '<b id="x">' not in html and "<b " not in html
        # Counted as text: the count does not depend on how an escape is spelled.
        shown += unescape(html).count(MARKUP)
    # The title on every page and as the consent's heading; the consent; the instructions and
    # the example answer; the training's intro; the task prompt on the training and both task
    # pages; group 1's texts; the comment prompt twice, and the refused comment in its box.
    assert shown == len(pages) + 1 + 1 + 2 + 1 + 3 + marked_up_study.group1_shown + 2 + 1
    refused = parse_html(pages[-2])
    assert parse_html(f'<textarea name="comment" cols="40" rows="4" autocomplete="off" maxlength="5000" '
                      f'id="id_comment">{MARKUP.replace("&", "&amp;").replace("<", "&lt;")}</textarea>') in refused


def _head(html: str) -> str:
    return re.search(r"<head>.*</head>", html, re.S).group(0)


def test_step_pages_have_the_head_of_the_other_pages(db):
    """The step pages' frame (``participation/step_base.html``) and ``base.html`` write the
    same ``<head>``."""
    context = {"study": {"title": 'A "study" & more'}}
    step = render_to_string("participation/step_base.html", context)
    other = render_to_string("base.html", context)
    assert parse_html(_head(step)) == parse_html(_head(other))
    untitled = render_to_string("participation/step_base.html", {})
    assert "<title>Study</title>" in untitled
