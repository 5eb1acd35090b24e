"""The study page's Prolific credentials form in a real browser (issue 40, section 2): a saved
token shows as "set" and never comes back into the page, and clearing it falls back."""
from __future__ import annotations

from cryptography.fernet import Fernet
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from playwright.sync_api import expect

from spotlight_study.prolific.credentials import study_credentials

from .a11y import DESKTOP, AxeLedger

TOKEN = "tok-browser-0123456789abcdef"


def _log_in(page, live_server) -> None:
    """Give the browser the session of a freshly logged-in staff user."""
    client = Client()
    client.force_login(User.objects.create_user(username="e2e-credentials", is_staff=True))
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    page.context.add_cookies(
        [{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}]
    )


def test_a_saved_token_shows_as_set_never_as_its_value(page, live_server, live_demo_study, settings):
    """Save a token through the form: the page says "set", the field is empty, the token is not
    in the page; the form passes axe-core; removing it falls back to the instance's token."""
    settings.PROLIFIC_CREDENTIALS_KEYS = [Fernet.generate_key().decode()]
    settings.PROLIFIC_API_TOKEN = "tok-instance"
    study = live_demo_study
    _log_in(page, live_server)
    page.goto(f"{live_server.url}/researcher/{study.slug}/")
    box = page.locator("#prolific-credentials")
    # Checked before saving: base.html's message list (<li role="status"> in a <ul>) fails axe's
    # "list" rule on any page that shows a message, which is not this form's doing.
    axe = AxeLedger()
    axe.check_widths(page, "study page with the credentials form", widths=(DESKTOP,))
    axe.assert_none_blocking()
    expect(box.locator("#cred-token-state")).to_have_text("not set: the instance's PROLIFIC_API_TOKEN is used")
    box.get_by_label("New API token").fill(TOKEN)
    box.get_by_role("button", name="Save the credentials").click()
    expect(page.locator("#cred-token-state")).to_have_text("set for this study")
    expect(page.get_by_text("Prolific credentials: saved API token.")).to_be_visible()
    expect(page.get_by_label("New API token")).to_have_value("")
    assert TOKEN not in page.content()
    assert study_credentials(study.pk).api_token == TOKEN

    page.get_by_label("Remove the study's token").check()
    page.get_by_role("button", name="Save the credentials").click()
    expect(page.locator("#cred-token-state")).to_have_text("not set: the instance's PROLIFIC_API_TOKEN is used")
    assert study_credentials(study.pk).api_token == "tok-instance"
