"""Ending a stalled participant in Chromium, as a researcher would: from the monitor's row, by
keyboard only, at phone width; the participant who comes back sees the ended page. axe-core finds
no serious violation on the monitor, the confirmation and the ended page, at 1280 and 390 px."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from playwright.sync_api import expect

from spotlight_study.participation.models import Participant

from .a11y import PHONE, AxeLedger
from .contexts import close_context
from .participant import enter
from .staff import log_in

pytestmark = pytest.mark.browser

PASSWORD = "ending-e2e-password"


def test_a_stalled_participant_is_ended_from_the_monitor_by_keyboard(page, browser, live_server, live_demo_study):
    """Filter by idle time, open "End…" on the row, give a reason and confirm with the keyboard;
    the participant's next page is the ended page asking for a return on Prolific."""
    study = live_demo_study
    base = live_server.url
    axe = AxeLedger()
    pid = enter(page, base, study.slug)  # the participant's own browser context
    Participant.objects.filter(prolific_pid=pid).update(updated_at=timezone.now() - timedelta(minutes=40))

    User.objects.create_user(username="ending-staff", password=PASSWORD, is_staff=True)
    staff = log_in(browser, base, "ending-staff", PASSWORD)
    staff.set_viewport_size(PHONE)
    staff.goto(f"{base}/researcher/{study.slug}/monitor/")
    staff.get_by_label("Idle for more than (minutes)").fill("30")
    staff.get_by_label("Idle for more than (minutes)").press("Enter")
    expect(staff.locator("#monitor-rows tr.status-in_progress")).to_have_count(1)
    expect(staff.locator("#end-filtered")).to_be_visible()
    axe.check_widths(staff, "monitor: idle filter")

    end_link = staff.get_by_role("link", name="End participant")
    end_link.focus()
    staff.keyboard.press("Enter")
    expect(staff.get_by_role("heading", name="End 1 participant?")).to_be_visible()
    axe.check_widths(staff, "end: confirmation")
    staff.get_by_label("Reason (kept with the decision)").focus()
    staff.keyboard.type("No activity for 40 minutes.")
    staff.keyboard.press("Tab")  # to the confirm button (no Prolific box: the study is not linked)
    staff.keyboard.press("Enter")
    expect(staff.locator(".messages")).to_contain_text("Ended 1 participant(s); their places are free.")
    expect(staff.locator("#monitor-rows tr.status-in_progress")).to_have_count(0)
    close_context(staff.context)

    assert Participant.objects.get(prolific_pid=pid).status == Participant.Status.ENDED_BY_RESEARCHER
    page.reload()
    expect(page.get_by_role("heading", name="This session has ended")).to_be_visible()
    expect(page.get_by_text("Please return this submission on Prolific")).to_be_visible()
    axe.check_widths(page, "ended: by the researcher")
    axe.assert_none_blocking()
