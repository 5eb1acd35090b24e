"""Fixtures of the annotation tests: users with roles, answered responses, labels."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from spotlight_study.annotation.services.labels import LabelInput

from ..conftest import Walker


def make_user(username: str, *groups: str, staff: bool = False) -> User:
    """A user in ``groups`` (created here: transactional tests flush the migration's groups)."""
    user = User.objects.create_user(username=username, password="pw-for-tests-only", is_staff=staff)
    for name in groups:
        user.groups.add(Group.objects.get_or_create(name=name)[0])
    return user


def complete_participants(slug: str, n: int) -> list[Walker]:
    """``n`` participants who complete the demo study (3 answers each: training + 2 main)."""
    walkers = []
    for _ in range(n):
        w = Walker(Client(), slug)
        w.complete()
        walkers.append(w)
    return walkers


def label(**overrides) -> LabelInput:
    """A valid label: target identified, nothing else; ``overrides`` change fields."""
    data = dict(identified=True, surface_difference=False, no_difference=False)
    data.update(overrides)
    return LabelInput(**data)


@pytest.fixture
def annotators(db) -> list[User]:
    """Three members of ``annotators``."""
    return [make_user(f"ann{i}", "annotators") for i in range(1, 4)]


@pytest.fixture
def adjudicator(db) -> User:
    """A member of ``adjudicators``."""
    return make_user("adj", "adjudicators")


@pytest.fixture
def answered(demo_study) -> list[Walker]:
    """Two participants who completed the demo study: 6 answers to annotate."""
    return complete_participants(demo_study.slug, 2)
