"""The live monitor in a real browser: rows refresh in place and pause while the tab is hidden."""
from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from playwright.sync_api import expect

from spotlight_study.researcher import monitor as monitor_module

from ..conftest import Walker


def _log_in(page, live_server) -> None:
    """Give the browser the session of a freshly logged-in staff user."""
    client = Client()
    client.force_login(User.objects.create_user(username="e2e-monitor", is_staff=True))
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    page.context.add_cookies(
        [{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}]
    )


def test_rows_refresh_without_reload_and_pause_when_hidden(
    page, live_server, live_demo_study, monkeypatch
):
    """A new participant appears in the rows without a page load; no fetch while hidden.

    The page's timers run on Playwright's clock: while the tab is hidden the test moves that
    clock five refresh intervals on and counts the page's fetch calls, instead of sleeping and
    hoping a slow machine would have fetched by then."""
    monkeypatch.setattr(monitor_module, "REFRESH_SECONDS", 1)
    study = live_demo_study
    _log_in(page, live_server)
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.clock.install()  # the page's timers are Playwright's; time still flows until paused
    page.goto(f"{live_server.url}/researcher/{study.slug}/monitor/")
    expect(page.locator("#monitor-rows")).to_contain_text("No participant matches these filters.")
    page.evaluate("window.__sameDocument = true")
    # Count the page's fetch calls (monitor.js looks fetch up at each refresh).
    page.evaluate(
        """() => {
            const realFetch = window.fetch;
            window.__fetches = 0;
            window.fetch = (...args) => { window.__fetches += 1; return realFetch(...args); };
        }"""
    )

    Walker(Client(), study.slug).enter()
    expect(page.locator("#monitor-rows tr.status-in_progress")).to_have_count(1)
    expect(page.locator("#monitor-rows")).to_contain_text("consent")
    expect(page.locator("#monitor-summary")).to_contain_text("1 participant.")
    assert page.evaluate("window.__sameDocument") is True  # replaced in place, not reloaded

    # Hidden tab: the script must stop fetching until the tab is shown again.
    page.clock.pause_at(page.evaluate("Date.now()") / 1_000 + 1)  # Python's Playwright: seconds
    # A refresh under way when the tab is hidden would make the one on showing it a no-op (the
    # script runs one at a time), so wait until none is; no timer can start one while paused.
    expect(page.locator("#monitor")).not_to_have_attribute("aria-busy", "true")
    fetches = []
    page.on("request", lambda r: fetches.append(r.url) if "/monitor/rows/" in r.url else None)
    page.evaluate(
        """() => {
            Object.defineProperty(document, "hidden", {configurable: true, get: () => true});
            document.dispatchEvent(new Event("visibilitychange"));
            window.__fetches = 0;  // a fetch already under way may finish; none may start
        }"""
    )
    Walker(Client(), study.slug).enter()
    page.clock.run_for(5_000)  # five refresh intervals of the page's clock, every timer due fired
    assert page.evaluate("window.__fetches") == 0
    expect(page.locator("#monitor-rows tr.status-in_progress")).to_have_count(1)
    fetches.clear()
    page.evaluate(
        """() => {
            Object.defineProperty(document, "hidden", {configurable: true, get: () => false});
            document.dispatchEvent(new Event("visibilitychange"));
        }"""
    )
    expect(page.locator("#monitor-rows tr.status-in_progress")).to_have_count(2)
    assert page.evaluate("window.__fetches") >= 1  # shown again: refreshed at once, no timer needed
    page.clock.resume()
    assert fetches and not [e for e in errors if "Content Security Policy" in e]


def test_on_a_phone_only_the_table_scrolls_sideways(page, live_server, live_demo_study):
    """At 375 px the monitor page itself does not scroll sideways; its table's wrapper does."""
    study = live_demo_study
    Walker(Client(), study.slug).complete()
    _log_in(page, live_server)
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(f"{live_server.url}/researcher/{study.slug}/monitor/")
    expect(page.locator("#monitor-rows tr.status-completed")).to_have_count(1)
    widths = page.evaluate(
        """() => {
            const wrap = document.querySelector("#monitor").parentElement;
            return {page: document.documentElement.scrollWidth, viewport: window.innerWidth,
                    wrapScroll: wrap.scrollWidth, wrapClient: wrap.clientWidth,
                    overflow: getComputedStyle(wrap).overflowX};
        }"""
    )
    assert widths["page"] <= widths["viewport"], widths
    assert widths["overflow"] == "auto" and widths["wrapScroll"] > widths["wrapClient"], widths
