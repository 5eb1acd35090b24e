"""The launch check: a go/no-go list a researcher reads before publishing a study on Prolific.

One function, :func:`launch_check`, returns plain data used by ``manage.py launch_check`` and by
the researcher study page. :func:`file_check` does the part that needs no database for a study
file that is not imported yet. Each item is ``go``, ``warning`` (worth reading, does not block),
``no-go`` (blocks) or ``unchecked`` (not run here, so it may still block: the study URL on the
researcher page unless asked); the study is ready when no item is ``no-go`` or ``unchecked``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from django.conf import settings
from django.contrib.auth import get_user_model
from django.urls import reverse

from spotlight_study.accounts.roles import ANNOTATOR
from spotlight_study.participation.models import Participant
from spotlight_study.prolific.credentials import SOURCE_ENVIRONMENT, SOURCE_STUDY, study_credentials
from spotlight_study.prolific.errors import ProlificError
from spotlight_study.prolific.models import ProlificStudy
from spotlight_study.stimuli.mining import premise_problem_here
from spotlight_study.studies.content import pattern_problems
from spotlight_study.studies.definition_check import stored_definition_problems
from spotlight_study.studies.design import design_warnings
from spotlight_study.studies.freeze import study_freeze_reason
from spotlight_study.studies.models import Study
from spotlight_study.studies.rules import abandonment_timeout_too_short, completion_code_clashes
from spotlight_study.studies.errors import StudyFileError
from spotlight_study.studies.schema import parse_study_file, validate_study_data
from spotlight_study.studies.selectors import study_design_warnings

from .public_address import address_problems
from .launch_prolific import balance_item, reward_item

GO = "go"
WARNING = "warning"
NO_GO = "no-go"
UNCHECKED = "unchecked"


@dataclass(frozen=True)
class LaunchItem:
    """One line of the check: ``check`` names it, ``status`` is go/warning/no-go, ``detail`` says
    what was found and, if it is not ``go``, what to do."""

    check: str
    status: str
    detail: str

    @property
    def label(self) -> str:
        """The status for people: as is, except ``unchecked`` reads ``not checked here``."""
        return "not checked here" if self.status == UNCHECKED else self.status


@dataclass
class LaunchReport:
    """The whole check. ``items`` in a fixed order; ``go`` is true when none is ``no-go``."""

    subject: str
    items: list[LaunchItem] = field(default_factory=list)

    @property
    def go(self) -> bool:
        """True when no item is ``no-go`` (an ``unchecked`` item may still be one)."""
        return all(item.status != NO_GO for item in self.items)

    @property
    def unchecked(self) -> list[str]:
        """Names of the checks that were not run, in report order."""
        return [item.check for item in self.items if item.status == UNCHECKED]

    @property
    def verdict(self) -> str:
        """``"no-go"``; ``"go"``; or, with no no-go but checks not run, ``"go, except
        unchecked: study URL"`` (never a plain ``"go"`` while a check is unchecked)."""
        if not self.go:
            return NO_GO
        if self.unchecked:
            return f"{GO}, except unchecked: {', '.join(self.unchecked)}"
        return GO

    def add(self, check: str, status: str, detail: str) -> None:
        """Append one item."""
        self.items.append(LaunchItem(check=check, status=status, detail=detail))


def _definition_items(report: LaunchReport, study: Study) -> None:
    """The stored definition checked as ``import_study`` would check its file
    (:func:`~spotlight_study.studies.definition_check.stored_definition_problems`): one no-go
    per path, as :func:`file_check` reports a file; and a no-go for a study without a main
    setting (no cells, no task for anyone)."""
    problems = stored_definition_problems(study)
    for where, messages in sorted(problems.items()):
        report.add(f"Study definition: {where}", NO_GO, " ".join(messages))
    if not problems:
        report.add(
            "Study definition",
            GO,
            "The stored definition would import as it is (its `export_study` file passes "
            "`import_study`'s validation).",
        )
    n_main = sum(1 for s in study.settings.all() if s.kind == s.Kind.MAIN)
    if n_main:
        report.add("Main settings", GO, f"{n_main} main setting(s).")
    else:
        report.add(
            "Main settings",
            NO_GO,
            "The study has no main setting, so it has no cells and no participant would see a "
            "task. Add one to the study file (`export_study`, edit, `import_study --replace`) or "
            "build one on the Stimuli pages.",
        )


def _malformed_guard(report: LaunchReport, check: str, add_items) -> None:
    """Run ``add_items()``; a stored value of a shape it cannot read (already a no-go of the
    Study definition items) makes ``check`` a no-go that says so, instead of failing the check."""
    try:
        add_items()
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        report.add(
            check,
            NO_GO,
            f"Cannot be checked: the stored definition holds a value of the wrong shape "
            f"({type(exc).__name__}); see the Study definition items.",
        )


def _content_items(report: LaunchReport, study: Study) -> None:
    problems = []
    for setting in study.settings.all():
        for pattern in setting.patterns.all():
            if pattern.unchecked_reason:
                continue
            for message in pattern_problems(
                tokens=list(pattern.tokens),
                group=pattern.group,
                group1_texts=list(setting.group1_texts),
                group2_texts=list(setting.group2_texts),
            ):
                kind = "distractor pattern" if pattern.is_distractor else "pattern"
                problems.append(f"setting '{setting.key}', {kind} {pattern.position + 1}: {message}")
    if problems:
        report.add("Token patterns", NO_GO, " ".join(problems))
    else:
        report.add(
            "Token patterns",
            GO,
            "Every pattern's tokens occur in its setting's texts and its group claim holds there.",
        )


def _design_items(report: LaunchReport, warnings: list[str]) -> None:
    if warnings:
        for warning in warnings:
            report.add("Design", WARNING, warning)
    else:
        report.add("Design", GO, "As many main settings as conditions; the sample fills every cell equally.")


def _codes_item(report: LaunchReport, completed: str, failed_check: str, no_consent: str) -> None:
    codes = {
        "completed": completed.strip(),
        "failed instruction check": failed_check.strip(),
        "no consent": no_consent.strip(),
    }
    missing = [name for name, code in codes.items() if not code]
    if missing:
        report.add("Completion codes", NO_GO, f"Not set: {', '.join(missing)}.")
    elif completion_code_clashes(codes):
        report.add(
            "Completion codes",
            NO_GO,
            "Two outcomes share a completion code, so Prolific cannot tell them apart: "
            + ", ".join(f"{name} {code}" for name, code in codes.items())
            + ".",
        )
    else:
        report.add("Completion codes", GO, "Set and distinct for completed, failed check and no consent.")


def _prolific_items(report: LaunchReport, study: Study) -> None:
    ps = ProlificStudy.objects.filter(study=study).first()
    entry = reverse("participation:entry", kwargs={"slug": study.slug})
    if ps is None or not ps.prolific_id:
        report.add(
            "Prolific link",
            WARNING,
            "Not linked to a Prolific study: set it up with `manage.py prolific_study "
            f"{study.slug} configure` and `create`, or by hand in Prolific's app with the study "
            "URL shown on this page (then statuses are not synced).",
        )
    elif ps.external_study_url and urlsplit(ps.external_study_url).path != entry:
        report.add(
            "Prolific link",
            NO_GO,
            f"Prolific study {ps.prolific_id} sends participants to {urlsplit(ps.external_study_url).path}, "
            f"not to this study's {entry}.",
        )
    else:
        report.add("Prolific link", GO, f"Linked to Prolific study {ps.prolific_id}.")
    if ps is not None:
        _failed_check_review_item(report, study, ps)
    try:
        secret_source = study_credentials(study.pk).secret_source
    except ProlificError as exc:
        report.add("Webhook secret", NO_GO, str(exc))
        return
    if secret_source == SOURCE_STUDY:
        report.add("Webhook secret", GO, "The study has its own webhook secret (its webhook URL: "
                   f"{reverse('prolific:study_webhook', args=[study.slug])}).")
    elif secret_source == SOURCE_ENVIRONMENT:
        report.add("Webhook secret", GO, "PROLIFIC_WEBHOOK_SECRET is set.")
    else:
        report.add(
            "Webhook secret",
            WARNING,
            "PROLIFIC_WEBHOOK_SECRET is not set: the webhook refuses every delivery, so "
            "statuses (returned, timed out) arrive only with the periodic sync.",
        )


def _failed_check_review_item(report: LaunchReport, study: Study, ps: ProlificStudy) -> None:
    """A warning when review rejects failed instruction checks: Prolific's guidance is to
    reject only with clear evidence and to ask for a return when a participant fails a check."""
    attempts = "after two attempts" if study.instruction_check_attempts == 2 else "after one attempt"
    if ps.failed_check_review == ProlificStudy.FailedCheckReview.REJECT:
        report.add(
            "Failed checks",
            WARNING,
            f"Failed instruction checks ({attempts}) are rejected (category "
            f"{ps.rejection_category or 'not set'}). Prolific asks researchers to reject only with "
            "clear evidence and to prefer asking for a return when a participant fails a check: "
            f"`manage.py prolific_study {study.slug} configure --failed-check-review request_return`.",
        )
    else:
        report.add(
            "Failed checks", GO,
            f"Failed instruction checks ({attempts}): {ps.get_failed_check_review_display().lower()}.",
        )


def _annotators_item(report: LaunchReport, study: Study) -> None:
    k = study.annotators_per_item
    n = (
        get_user_model()
        .objects.filter(
            is_active=True, study_memberships__study=study, study_memberships__role=ANNOTATOR
        )
        .distinct()
        .count()
    )
    if n >= k:
        report.add("Annotators", GO, f"{n} annotator(s) for k = {k} annotators per answer.")
    else:
        report.add(
            "Annotators",
            NO_GO,
            f"{n} active annotator(s) of this study, but each answer needs k = {k} "
            f"annotators. Add {k - n} more (the study's team page, or manage.py study_members "
            f"{study.slug} add USERNAME --role annotator) or lower annotation.annotators_per_item.",
        )


def _url_item(report: LaunchReport, study: Study, base_url: str | None, timeout_s: float) -> None:
    entry = reverse("participation:entry", kwargs={"slug": study.slug})
    if not base_url:
        report.add(
            "Study URL",
            NO_GO,
            "No public address to check: set PROLIFIC_STUDY_BASE_URL (or pass --base-url) to "
            "this server's public origin, e.g. https://study.example.org.",
        )
        return
    url = f"{base_url.rstrip('/')}{entry}"
    try:
        # Without Prolific's parameters the entry explains them (400); that page is proof enough
        # that this server serves this study there. Redirects are not followed: a redirect to a
        # login or another host is not the study.
        response = httpx.get(url, timeout=timeout_s, follow_redirects=False)
    except httpx.HTTPError as exc:
        report.add("Study URL", NO_GO, f"{url} cannot be reached: {exc.__class__.__name__}: {exc}.")
        return
    if response.status_code in (200, 400):
        report.add("Study URL", GO, f"{url} answers (HTTP {response.status_code}).")
    else:
        report.add(
            "Study URL",
            NO_GO,
            f"{url} answers HTTP {response.status_code}, not the study's entry page.",
        )


def _address_item(report: LaunchReport, base_url: str) -> None:
    # Read from the address alone: a loopback or private base passes the fetch from this server
    # (the Study URL item) while no participant could open it.
    problems = address_problems(base_url)
    if problems:
        report.add(
            "Study address",
            WARNING,
            f"{base_url}: " + " ".join(problems) + " Set PROLIFIC_STUDY_BASE_URL (or --base-url) "
            "to this server's public https origin before publishing on Prolific.",
        )
    else:
        report.add("Study address", GO, f"{base_url} is a public https address.")


def _timeout_item(report: LaunchReport, timeout: int, maximum: int) -> None:
    if abandonment_timeout_too_short(timeout_minutes=timeout, maximum_minutes=maximum):
        report.add(
            "Abandonment timeout",
            NO_GO,
            f"abandonment_timeout_minutes ({timeout}) is shorter than maximum_minutes ({maximum}): "
            "a participant still within Prolific's time limit would lose their place, and the "
            "cell would be filled twice. Make the timeout at least maximum_minutes.",
        )
    else:
        report.add(
            "Abandonment timeout",
            GO,
            f"{timeout} min, not shorter than Prolific's maximum time of {maximum} min.",
        )


def _pilot_item(report: LaunchReport, study: Study) -> None:
    completed = Participant.objects.filter(
        study=study, is_pilot=True, status=Participant.Status.COMPLETED
    ).count()
    if completed:
        report.add("Pilot", GO, f"{completed} pilot participant(s) completed the study.")
    else:
        report.add(
            "Pilot",
            NO_GO,
            "No completed pilot participant: run a pilot (`manage.py pilot "
            f"{study.slug} --participants 10`, or the button on the researcher page) and check "
            "its data before paying anyone.",
        )


def _status_item(report: LaunchReport, study: Study) -> None:
    if study.status == Study.Status.LIVE:
        report.add("Status", GO, "Live: arrivals are accepted.")
    else:
        report.add(
            "Status",
            WARNING,
            f"The study is {study.get_status_display().lower()}: set it live before publishing "
            "on Prolific, or every arrival sees 'not open'.",
        )


def launch_check(
    *, study: Study, base_url: str | None = None, check_url: bool = True, timeout_s: float = 5.0
) -> LaunchReport:
    """Run every launch check on a stored study.

    Parameters
    ----------
    study : Study
        Preferably fetched with ``study_get_with_settings`` (settings and patterns prefetched).
    base_url : str or None
        Public origin of this server for the URL check; default
        ``settings.PROLIFIC_STUDY_BASE_URL``.
    check_url : bool
        Fetch the study URL (an HTTP GET of its entry page, at most ``timeout_s`` seconds). The
        researcher page skips it unless asked, since the page would wait on the fetch; the item
        is then ``unchecked`` and the verdict says so.
    timeout_s : float
        Timeout of that GET in seconds.

    Returns
    -------
    LaunchReport
        Items in this order: the stored definition (one no-go per path ``import_study`` would
        refuse, :func:`_definition_items`), main settings, token patterns, design, completion codes, Prolific link, webhook
        secret, reward per hour and (with ``check_url``) the workspace balance
        (:mod:`.launch_prolific`), annotators, study URL, study address (loopback, private or
        plain-HTTP addresses warn; only with a base URL), abandonment timeout, pilot, status (and,
        if real participants have consented, a note that the study is frozen; on a platform where
        Premise cannot run, a warning naming c-TF-IDF).
    """
    report = LaunchReport(subject=study.slug)
    _definition_items(report, study)
    _malformed_guard(report, "Token patterns", lambda: _content_items(report, study))
    _malformed_guard(report, "Design", lambda: _design_items(report, study_design_warnings(study)))
    _codes_item(report, study.completion_code, study.failed_check_code, study.no_consent_code)
    _prolific_items(report, study)
    ps = ProlificStudy.objects.filter(study=study).first()
    for item in (reward_item(study, ps), balance_item(study, ps) if check_url else None):
        if item is not None:
            report.add(*item)
    _annotators_item(report, study)
    base = base_url or settings.PROLIFIC_STUDY_BASE_URL
    if check_url:
        _url_item(report, study, base, timeout_s)
    else:
        report.add(
            "Study URL",
            UNCHECKED,
            "Not fetched on this page, so it may still be a no-go: open the page with "
            f"?launch=full, or run `manage.py launch_check {study.slug}`.",
        )
    if base:
        _address_item(report, base)
    _timeout_item(report, study.abandonment_timeout_minutes, study.maximum_minutes)
    _pilot_item(report, study)
    _status_item(report, study)
    reason = study_freeze_reason(study=study)
    if reason:
        report.add("Frozen", WARNING, f"{reason} Its definition can no longer change.")
    problem = premise_problem_here()
    if problem:
        # Mining is not part of running the study, so it does not block the launch.
        report.add("Pattern mining", WARNING, problem)
    return report


def file_check(path: str | Path) -> LaunchReport:
    """The checks a study file allows before it is imported: validation (every error, each as a
    no-go item naming its path, including the pattern content checks), the design warnings, the
    completion codes and the abandonment timeout.

    The study-level checks (Prolific, annotators, URL, pilot) need the imported study, so the
    report says to import it and check it by slug.
    """
    report = LaunchReport(subject=str(path))
    try:
        clean = validate_study_data(parse_study_file(path))
    except StudyFileError as exc:
        for where, messages in sorted(exc.errors.items()):
            report.add(f"Study file: {where}", NO_GO, " ".join(messages))
        return report
    report.add("Study file", GO, "Valid, including the token-pattern content checks.")
    _design_items(
        report,
        design_warnings(
            setting_keys=[s["key"] for s in clean["settings"]],
            conditions=list(clean["conditions"]),
            target_sample_size=clean["target_sample_size"],
            language=clean["language"],
        ),
    )
    codes = clean["completion_codes"]
    _codes_item(report, codes["completed"], codes["failed_instruction_check"], codes["no_consent"])
    _timeout_item(report, clean["abandonment_timeout_minutes"], clean["maximum_minutes"])
    report.add(
        "Study checks",
        WARNING,
        "Import the file and run `manage.py launch_check <slug>` for the Prolific, annotator, "
        "URL and pilot checks.",
    )
    return report
