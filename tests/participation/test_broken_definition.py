"""A stored definition broken outside the import (as the admin's JSON boxes once allowed): the
launch check says no-go naming the path, and no participant page answers with a 500.

Each corruption writes the database directly (``QuerySet.update()``, as a shell or an old admin
form would) and then changes the definition's version, as every edit does. Participants are
parked at every step before the corruption: a new arrival, consent, instructions, the training
task, a main task, the survey and the end page.
"""
from __future__ import annotations

import re

import pytest
from django.db import transaction
from django.db.models import F
from django.test import Client

from spotlight_study.researcher.launch import NO_GO, launch_check
from spotlight_study.studies.definition_check import stored_definition_problems
from spotlight_study.studies.models import Setting, Study, TokenPattern
from spotlight_study.studies.plan import plan_cache_clear, study_definition_changed
from spotlight_study.studies.selectors import study_get_with_settings

from ..conftest import Walker, new_id


def _study(study: Study, **fields) -> None:
    Study.objects.filter(pk=study.pk).update(**fields)


def _setting(study: Study, setting_key: str, **fields) -> None:
    Setting.objects.filter(study=study, key=setting_key).update(**fields)


def _pattern(study: Study, key: str, **fields) -> None:
    TokenPattern.objects.filter(setting__study=study, setting__key=key, is_distractor=False).update(**fields)


def _survey(study: Study, change) -> None:
    survey = Study.objects.get(pk=study.pk).survey
    change(survey)
    _study(study, survey=survey)


#: (name, corruption, the path launch_check must name). Each part of a stored definition.
CORRUPTIONS = [
    # the survey
    ("survey empty", lambda s: _study(s, survey={}), "survey.likert_scale"),
    ("survey not a mapping", lambda s: _study(s, survey="ease, effort"), "survey"),
    ("survey item without text", lambda s: _survey(s, lambda v: v["condition_items"][0].pop("text")),
     "survey.condition_items[0].text"),
    ("survey items not a list", lambda s: _survey(s, lambda v: v.update(condition_items="ease")),
     "survey.condition_items"),
    ("survey items none", lambda s: _survey(s, lambda v: v.update(condition_items=[])), "survey.condition_items"),
    ("survey scale of 3", lambda s: _survey(s, lambda v: v.update(likert_scale=["a", "b", "c"])),
     "survey.likert_scale"),
    ("survey item not a mapping", lambda s: _survey(s, lambda v: v["background_items"].append("x")),
     "survey.background_items[4]"),
    ("survey intro missing", lambda s: _survey(s, lambda v: v["condition_intros"].pop("pattern")),
     "survey.condition_intros"),
    ("survey item keys repeat", lambda s: _survey(s, lambda v: v["background_items"][1].update(key="llm_use")),
     "survey"),
    # the conditions
    ("unknown condition", lambda s: _study(s, conditions=["no_pattern", "highlight"]), "conditions[1]"),
    ("no condition", lambda s: _study(s, conditions=[]), "conditions"),
    ("conditions not a list", lambda s: _study(s, conditions="pattern"), "conditions"),
    ("conditions repeat", lambda s: _study(s, conditions=["pattern", "pattern"]), "conditions"),
    ("distractors missing", lambda s: (
        _study(s, conditions=["no_pattern", "pattern_with_distractors"]),
        TokenPattern.objects.filter(setting__key="doctor", is_distractor=True).delete(),
    ), "settings[0].distractor_patterns"),
    # the groups of texts
    ("empty group", lambda s: _setting(s, "doctor", group1_texts=[]), "settings[0].group1"),
    ("empty text", lambda s: _setting(s, "doctor", group2_texts=[""] * 10), "settings[0].group2[0]"),
    ("text not a string", lambda s: _setting(s, "farming", group1_texts=[{"a": 1}]), "settings[1].group1[0]"),
    ("group not a list", lambda s: _setting(s, "farming", group2_texts={"a": "b"}), "settings[1].group2"),
    ("group a number", lambda s: _setting(s, "doctor", group1_texts=7), "settings[0].group1"),
    ("training group empty", lambda s: _setting(s, "angler", group1_texts=[]), "training.group1"),
    # the token patterns
    ("token absent", lambda s: _pattern(s, "farming", tokens=["banana"]), "settings[1].patterns[0]"),
    ("no tokens", lambda s: _pattern(s, "doctor", tokens=[]), "settings[0].patterns[0].tokens"),
    ("tokens a string", lambda s: _pattern(s, "doctor", tokens="her"), "settings[0].patterns[0].tokens"),
    ("tokens numbers", lambda s: _pattern(s, "doctor", tokens=[1, 2]), "settings[0].patterns[0].tokens[0]"),
    ("false group claim", lambda s: _pattern(s, "farming", group=2), "settings[1].patterns[0]"),
    ("pattern removed", lambda s: TokenPattern.objects.filter(setting__key="doctor").delete(),
     "settings[0].patterns"),
    # the settings
    ("setting key not a slug", lambda s: _setting(s, "doctor", key="dr smith!"), "settings[0].key"),
    ("setting title empty", lambda s: _setting(s, "farming", title=""), "settings[1].title"),
    ("no main setting", lambda s: Setting.objects.filter(study=s, kind="main").update(kind="retired"), "settings"),
    ("no training setting", lambda s: _setting(s, "angler", kind="retired"), "training"),
    ("check keywords empty", lambda s: _setting(s, "angler", check_keywords=[]), "training.check_keywords"),
    ("check keywords a string", lambda s: _setting(s, "angler", check_keywords="night"), "training.check_keywords"),
    # the codebook tags
    ("tags repeat", lambda s: _setting(s, "doctor", annotation_tags=["age", "Age"]), "annotation.settings.doctor.tags"),
    ("tags not a list", lambda s: _setting(s, "doctor", annotation_tags="age"), "annotation.settings.doctor.tags"),
    # the texts
    ("consent empty", lambda s: _study(s, consent_text=""), "consent_text"),
    ("instructions empty", lambda s: _study(s, instructions_text=""), "instructions_text"),
    ("task prompt empty", lambda s: _study(s, task_prompt=""), "task_prompt"),
    # (A study's title is only text on the participant pages: a broken one is a no-go but keeps
    # the pages open, tests/studies/test_visible_title.py.)
    ("example answer empty", lambda s: _study(s, example_answer=""), "example_answer"),
    # completion codes
    ("completion code empty", lambda s: _study(s, completion_code=""), "completion_codes.completed"),
    ("completion codes shared", lambda s: _study(s, no_consent_code=F("completion_code")), "completion_codes.no_consent"),
    # answer rules, timing, flags, language
    ("no answer fits", lambda s: _study(s, min_answer_chars=600, max_answer_chars=500), "min_answer_chars"),
    ("max answer zero", lambda s: _study(s, max_answer_chars=0), "max_answer_chars"),
    ("unknown policy", lambda s: _study(s, failed_check_policy="shrug"), "failed_check_policy"),
    ("seven attempts", lambda s: _study(s, instruction_check_attempts=7), "instruction_check_attempts"),
    ("unknown holding flag", lambda s: _study(s, holding_flags=["bogus"]), "holding_flags"),
    ("holding flags a string", lambda s: _study(s, holding_flags="mass_paste"), "holding_flags"),
    ("flag threshold a word", lambda s: _study(s, answer_flag_thresholds={"typed_chars_per_minute_max": "fast"}),
     "answer_flags.typed_chars_per_minute_max"),
    ("unknown language", lambda s: _study(s, language="zz-nope"), "language"),
    ("timeout below maximum", lambda s: _study(s, abandonment_timeout_minutes=1), "abandonment_timeout_minutes"),
    ("estimate zero", lambda s: _study(s, estimated_minutes=0), "estimated_minutes"),
    ("sample size zero", lambda s: _study(s, target_sample_size=0), "target_sample_size"),
]


class _Rollback(Exception):
    """Undoes one corruption (the savepoint around it rolls back)."""


def _parked(slug: str) -> dict[str, Walker]:
    """One participant at each step of the flow, each in a browser (client) of its own."""
    walkers = {}

    def at(name: str, *steps) -> None:
        walker = Walker(Client(), slug)
        walker.enter()
        for step in steps:
            step(walker)
        walker.page()
        walkers[name] = walker

    at("consent")
    at("instructions", Walker.consent)
    at("training task", Walker.consent, Walker.instructions)
    at("main task", Walker.consent, Walker.instructions, lambda w: w.answer("By day and at night."))
    at("survey", Walker.consent, Walker.instructions, lambda w: w.answer("By day and at night."),
       lambda w: w.answer("Group 2 has women."), lambda w: w.answer("Maize in group 1."))
    done = Walker(Client(), slug)
    done.complete()
    done.page()
    walkers["end"] = done
    return walkers


def _token(walker: Walker) -> str:
    """The page token of the walker's parked page ("" on the end page, which has no form)."""
    found = re.search(r'name="token" value="([^"]+)"', walker.last_page.content.decode())
    return found.group(1) if found else ""


def _answers(walkers: dict[str, Walker], slug: str, *, submit: bool) -> dict[str, int]:
    """The status of every participant page: a new arrival, each parked participant's page and
    its resumed entry and, with ``submit``, a POST of that page's form and a typed draft. A 500
    raises (the test client re-raises the view's exception)."""
    statuses = {"entry (new arrival)": Walker(Client(), slug).enter().status_code}
    for name, walker in walkers.items():
        statuses[f"{name}: GET"] = walker.client.get(walker.step_url).status_code
        statuses[f"{name}: entry again"] = walker.client.get(f"/s/{slug}/").status_code
        if submit:
            token = _token(walker)
            data = {"decision": "agree", "answer_0": "x", "answer_1": "x"}
            statuses[f"{name}: POST"] = walker.client.post(walker.step_url, {"token": token, **data}).status_code
            statuses[f"{name}: draft"] = walker.client.post(f"/s/{slug}/draft/", {"token": token}).status_code
    return statuses


@pytest.mark.django_db
def test_every_broken_part_is_a_no_go_and_no_participant_page_fails(demo_study):
    """Each corruption makes launch_check a no-go naming its path, and every participant page
    answers 503 "not open at the moment", never a 500."""
    slug = demo_study.slug
    walkers = _parked(slug)
    before = _answers(walkers, slug, submit=False)
    assert 503 not in before.values() and 500 not in before.values(), before
    assert stored_definition_problems(study_get_with_settings(slug=slug)) == {}
    failures = []
    for name, corrupt, path in CORRUPTIONS:
        try:
            with transaction.atomic():
                corrupt(demo_study)
                study_definition_changed(study_id=demo_study.pk)
                report = launch_check(study=study_get_with_settings(slug=slug), check_url=False)
                no_go = {item.check: item.detail for item in report.items if item.status == NO_GO}
                named = any(
                    check == f"Study definition: {path}" or check.startswith((f"Study definition: {path}[",
                                                                              f"Study definition: {path}."))
                    for check in no_go
                ) or (path == "settings" and "Main settings" in no_go)
                if not named:
                    failures.append(f"{name}: launch_check names no {path}: {sorted(no_go)}")
                statuses = _answers(walkers, slug, submit=True)
                # A typed draft reads the plan of the last 5 s (views.draft) and shows nothing:
                # it need only not fail.
                wrong = {page: code for page, code in statuses.items() if code != 503 and "draft" not in page}
                if wrong:
                    failures.append(f"{name}: pages not 503: {wrong}")
                raise _Rollback
        except _Rollback:
            pass
        plan_cache_clear()
    assert not failures, "\n".join(failures)
    # Undone, the study takes participants again.
    after = _answers(walkers, slug, submit=False)
    assert after == before


@pytest.mark.django_db
def test_the_unavailable_page_speaks_the_study_language_and_hides_the_problems(demo_data):
    """A participant of a broken German study gets the German "not open" page (503), with no
    path or message of the definition's problems in it."""
    from spotlight_study.studies.services import study_import

    demo_data.update(slug="kaputt", language="de")
    study = study_import(data=demo_data)
    _study(study, consent_text="")
    study_definition_changed(study_id=study.pk)
    response = Walker(Client(), "kaputt").enter()
    html = response.content.decode()
    assert response.status_code == 503 and response["Retry-After"]
    assert 'lang="de"' in html and "consent_text" not in html
    assert "Diese Studie" in html, html


@pytest.mark.django_db
def test_a_broken_definition_is_refused_before_any_row_is_written(demo_study):
    """A new arrival at a broken study gets 503 and no participant row is created."""
    _study(demo_study, survey={})
    study_definition_changed(study_id=demo_study.pk)
    pid = new_id()
    response = Walker(Client(), demo_study.slug, pid=pid).enter()
    assert response.status_code == 503
    assert not demo_study.participants.filter(prolific_pid=pid).exists()
