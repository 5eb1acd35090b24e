"""Staff helpers of the e2e tests: a researcher, annotator or adjudicator logged in."""
from __future__ import annotations

from playwright.sync_api import Browser, Page, expect


def log_in(browser: Browser, base_url: str, username: str, password: str) -> Page:
    """A page in a fresh browser context, logged in through the site's login form.

    Returns once the navigation shows ``username`` as the logged-in user; the page's actions
    wait up to 15 s.
    """
    context = browser.new_context()
    context.set_default_timeout(15_000)
    page = context.new_page()
    page.goto(f"{base_url}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator(".site-nav-user")).to_have_text(username)
    return page
