"""axe-core checks of the pages the browser tests visit (docs/accessibility.md).

axe-core comes from the ``axe-playwright-python`` package, which ships ``axe.min.js``; the
package's wrapper injects it into the page with Playwright and runs ``axe.run``. The rules run are
those tagged WCAG 2.0/2.1 A and AA plus axe's best practices (:data:`AXE_TAGS`).

:class:`AxeLedger` keeps one row per checked page and width, so a test fails once, at its end,
with the whole table (page, width, counts by impact, rule ids) instead of at the first page. A
page fails on any serious or critical violation, and on a minor or moderate one whose rule is not
in :data:`ACCEPTED` (each accepted rule is listed with its reason in docs/accessibility.md).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page

#: axe-core rule tags run on every page: WCAG 2.1 levels A and AA (2.0's included) and axe's
#: best practices (landmarks, heading order, ...), whose findings are at most "moderate".
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
#: axe-core's impact levels, mildest first.
IMPACTS = ("minor", "moderate", "serious", "critical")
#: The impacts that fail a test (issue 25: none may remain).
BLOCKING = ("serious", "critical")
#: The widths (CSS px) every participant page is checked at: a desktop and a phone.
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}

#: Minor or moderate axe-core rules accepted on these pages, with the reason (the same list as
#: docs/accessibility.md). Empty: every page passes every rule run.
ACCEPTED: dict[str, str] = {}

_AXE = Axe()


@dataclass
class AxeRow:
    """One page checked at one width: counts by impact (failing elements) and the ids of the
    rules that failed, each with its impact (``{"region": "moderate"}``)."""

    page: str
    width: int
    counts: Counter
    rules: dict[str, str]
    #: Rules axe-core could not decide on this page ("incomplete": a person must look).
    review: list[str] = field(default_factory=list)

    def blocking(self) -> dict[str, str]:
        """The failed rules that fail the page: serious or critical, or not in :data:`ACCEPTED`."""
        return {
            rule: impact
            for rule, impact in self.rules.items()
            if impact in BLOCKING or rule not in ACCEPTED
        }


@dataclass
class AxeLedger:
    """The axe-core results of the pages a test checked, in the order they were checked."""

    rows: list[AxeRow] = field(default_factory=list)

    def check(self, page: Page, name: str) -> AxeRow:
        """Run axe-core on ``page`` as it is now and record the result under ``name``.

        The width is the page's viewport width (CSS px). Returns the new row.
        """
        options = {
            "runOnly": {"type": "tag", "values": AXE_TAGS},
            "resultTypes": ["violations", "incomplete"],
        }
        results = _AXE.run(page, options=options)
        violations = results.response["violations"]
        counts = Counter()
        rules = {}
        for violation in violations:
            impact = violation.get("impact") or "minor"
            # One count per failing element, as axe-core's own summaries count them.
            counts[impact] += len(violation["nodes"])
            rules[violation["id"]] = impact
        review = sorted(v["id"] for v in results.response["incomplete"])
        row = AxeRow(
            page=name, width=page.viewport_size["width"], counts=counts, rules=rules, review=review
        )
        self.rows.append(row)
        return row

    def check_widths(self, page: Page, name: str, widths: tuple[dict, ...] = (DESKTOP, PHONE)) -> None:
        """Run :meth:`check` on ``page`` as it is now at each of ``widths`` (viewport sizes, CSS
        px), then give the page its first width back. The layout follows each width at once (the
        stylesheet's media queries), so one walk through the pages checks them all at both
        widths; the page is measured after its load event, when its stylesheet applies."""
        page.wait_for_load_state("load")
        for viewport in widths:
            page.set_viewport_size(viewport)
            self.check(page, name)
        page.set_viewport_size(widths[0])

    def table(self) -> str:
        """The rows as a plain-text table: page, width, one column per impact, the failed rules,
        then the rules left for a person to review."""
        head = f"{'page':<38}{'width':>6}" + "".join(f"{i:>10}" for i in IMPACTS) + "  rules"
        lines = [head]
        for r in self.rows:
            rules = ", ".join(f"{rule} ({impact})" for rule, impact in sorted(r.rules.items()))
            review = f"  [review: {', '.join(r.review)}]" if r.review else ""
            lines.append(
                f"{r.page:<38}{r.width:>6}"
                + "".join(f"{r.counts.get(i, 0):>10}" for i in IMPACTS)
                + f"  {rules}{review}"
            )
        return "\n".join(lines)

    def assert_none_blocking(self) -> None:
        """Fail with the whole table when any checked page has a serious or critical violation,
        or a minor or moderate one not in :data:`ACCEPTED`.

        The table is printed in any case (``pytest -rP`` shows it for a passing test).
        """
        print(self.table())
        bad = [r for r in self.rows if r.blocking()]
        assert not bad, (
            f"{len(bad)} page(s) with serious or critical axe-core violations, or minor or "
            f"moderate ones not accepted in docs/accessibility.md:\n{self.table()}"
        )
