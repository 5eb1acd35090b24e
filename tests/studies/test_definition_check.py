"""The stored definition checked as an import would check its file (studies/definition_check.py)."""
from __future__ import annotations

from spotlight_study.studies import content
from spotlight_study.studies.definition_check import problems_added, stored_definition_problems
from spotlight_study.studies.models import TokenPattern
from spotlight_study.studies.selectors import study_get_with_settings


def test_a_study_using_every_field_has_no_problem(built_study):
    """A study imported from a file with every field, with settings built on the Stimuli pages,
    passes the check."""
    assert stored_definition_problems(built_study) == {}


def test_a_stored_number_where_the_import_stores_text_is_named(demo_study):
    """A token stored as a number (the validation would read it as text) is named by its path:
    an import never stores one, and the pattern box cannot join it."""
    TokenPattern.objects.filter(setting__key="doctor", is_distractor=False).update(tokens=["her", 7])
    problems = stored_definition_problems(study_get_with_settings(slug=demo_study.slug))
    assert problems["settings[0].patterns[0].tokens[1]"] == [
        "Stored as int, not text: an import stores text here."
    ]


def test_problems_added_keeps_only_what_a_write_broke():
    """Messages already there at the same path are not counted again; new ones are."""
    before = {"survey": ["broken"], "title": ["long"]}
    after = {"survey": ["broken"], "title": ["long", "empty"], "slug": ["bad"]}
    assert problems_added(before, after) == {"title": ["empty"], "slug": ["bad"]}


def test_the_tokenizer_is_built_before_the_server_forks():
    """The studies app registers the tokenizer with the warm-up of the preloaded master, so a
    worker's first definition check does not build it."""
    from spotlight_study.middleware import warmup

    assert content.tokenizer_warm in warmup._HOOKS
    content._tokenizer.cache_clear()
    warmup._warmed = False
    warmup.warm_up()
    assert content._tokenizer.cache_info().currsize == 1
