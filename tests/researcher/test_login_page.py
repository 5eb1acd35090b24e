"""The login page used by researchers and annotators."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import User


@pytest.mark.django_db
def test_wrong_password_message_is_shown_once(client, settings):
    """One wrong password shows "Please enter a correct username and password" once."""
    User.objects.create_user("rita", password="the-right-one-1234", is_staff=True)
    response = client.post("/accounts/login/", {"username": "rita", "password": "wrong-one"})
    assert response.status_code == 200
    assert response.content.decode().count("Please enter a correct username and password") == 1
