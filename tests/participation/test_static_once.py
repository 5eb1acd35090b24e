"""``{% static_once %}`` gives exactly what ``{% static %}`` gives, and does not keep failures."""
from __future__ import annotations

import pytest
from django.template import engines
from django.templatetags.static import static

from spotlight_study.participation.templatetags import static_once


def _render(source: str) -> str:
    return engines["django"].from_string(source).render({})


def test_static_once_matches_static(db):
    once = _render("{% load static_once %}{% static_once 'css/study.css' %}|{% static_once 'js/flow.js' %}")
    plain = _render("{% load static %}{% static 'css/study.css' %}|{% static 'js/flow.js' %}")
    assert once == plain == f"{static('css/study.css')}|{static('js/flow.js')}"


def test_a_failed_lookup_is_raised_and_not_kept(settings):
    static_once._url.cache_clear()
    settings.STORAGES = {**settings.STORAGES, "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.ManifestStaticFilesStorage"}}
    settings.STATIC_ROOT = "/nonexistent-static-root"
    from django.contrib.staticfiles.storage import staticfiles_storage
    from django.utils.functional import empty

    staticfiles_storage._wrapped = empty  # re-read STORAGES (a LazyObject) for this test
    try:
        with pytest.raises(ValueError):
            static_once.static_once("css/never-collected.css")
        assert static_once._url.cache_info().currsize == 0
    finally:
        staticfiles_storage._wrapped = empty
        static_once._url.cache_clear()
