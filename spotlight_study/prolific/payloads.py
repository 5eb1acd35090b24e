"""What the Prolific client sends and receives: the API's constants and typed records.

Source: Prolific's API reference (https://docs.prolific.com/api-reference), the objects named
below. ``reward`` is in minor currency units (pence, cents); ``estimated_completion_time`` and
``maximum_allowed_time`` are in minutes. Plain Python, no Django, no network: the records are
built from and turned into JSON by :class:`~.client.ProlificClient`.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from .errors import ProlificValidationError

# Submission statuses (Prolific: "Submission object").
SUBMISSION_STATUSES = (
    "RESERVED",
    "ACTIVE",
    "TIMED-OUT",
    "AWAITING REVIEW",
    "APPROVED",
    "RETURNED",
    "REJECTED",
    "SCREENED OUT",
    "PARTIALLY APPROVED",
)
# Study transitions (Prolific: "Transition a study's status").
STUDY_ACTIONS = ("PUBLISH", "PAUSE", "START", "STOP")
# Rejection categories (Prolific: "Approve or reject a submission", ``rejection_category``).
REJECTION_CATEGORIES = (
    "TOO_QUICKLY",
    "TOO_SLOWLY",
    "FAILED_INSTRUCTIONS",
    "INCOMP_LONGITUDINAL",
    "FAILED_CHECK",
    "LOW_EFFORT",
    "MALINGERING",
    "NO_CODE",
    "BAD_CODE",
    "NO_DATA",
    "UNSUPP_DEVICE",
    "OTHER",
)
REJECTION_MESSAGE_MIN_CHARS = 100
# Prolific's smallest screen-out payment, in minor units (0.10 GBP; Prolific: "in-study screening").
SCREEN_OUT_MIN_MINOR_UNITS = 10
# Prolific recommends at most 1,000 ids per bulk-approve request.
BULK_APPROVE_MAX_IDS = 1000


@dataclass(frozen=True)
class SubmissionRecord:
    """One submission as Prolific reports it.

    ``id`` is the submission id, which Prolific also passes to the study URL as
    ``SESSION_ID``; ``participant_id`` is the ``PROLIFIC_PID``. ``status`` is one of
    :data:`SUBMISSION_STATUSES` (an unknown value is kept as sent). Times are ISO 8601 strings as
    sent, or ``None``.
    """

    id: str
    participant_id: str
    status: str
    study_id: str = ""
    started_at: str | None = None
    completed_at: str | None = None
    study_code: str | None = None

    @classmethod
    def from_api(cls, data: dict[str, Any], *, study_id: str = "") -> "SubmissionRecord":
        """Build from a list item (``participant_id``) or a detail (``participant``)."""
        return cls(
            id=str(data["id"]),
            participant_id=str(data.get("participant_id") or data.get("participant") or ""),
            status=str(data.get("status") or ""),
            study_id=str(data.get("study_id") or study_id or ""),
            started_at=data.get("started_at"),
            completed_at=data.get("completed_at"),
            study_code=data.get("study_code") or data.get("entered_code"),
        )


@dataclass(frozen=True)
class BonusSetup:
    """Prolific's answer to a bonus set-up: ``id`` is the bulk bonus payment to pay later.

    ``amount``, ``fees``, ``vat`` and ``total_amount`` are in minor units as Prolific returns
    them (``"amount": 850`` for two bonuses of 4.25).
    """

    id: str
    amount: Decimal
    fees: Decimal
    vat: Decimal
    total_amount: Decimal
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CompletionCode:
    """One ``completion_codes`` item of a study: ``code``, ``code_type`` and ``actions``.

    ``code_type`` e.g. ``COMPLETED``, ``FAILED_ATTENTION_CHECK``, ``NO_CONSENT``; ``actions`` a
    list of ``{"action": "MANUALLY_REVIEW"}``-like objects (``ADD_TO_PARTICIPANT_GROUP`` also
    has ``participant_group``).
    """

    code: str
    code_type: str
    actions: tuple[dict[str, str], ...]

    def as_payload(self) -> dict[str, Any]:
        """The JSON object Prolific expects."""
        return {"code": self.code, "code_type": self.code_type, "actions": [dict(a) for a in self.actions]}


@dataclass(frozen=True)
class StudyDraft:
    """The fields of a new Prolific study (``POST /studies/``).

    ``reward`` is in minor units (pence/cents); ``estimated_completion_time`` and
    ``maximum_allowed_time`` in minutes. ``external_study_url`` must contain
    ``{{%PROLIFIC_PID%}}``, ``{{%STUDY_ID%}}`` and ``{{%SESSION_ID%}}``.
    """

    name: str
    internal_name: str
    description: str
    external_study_url: str
    estimated_completion_time: int
    maximum_allowed_time: int
    reward: int
    total_available_places: int
    completion_codes: tuple[CompletionCode, ...]
    device_compatibility: tuple[str, ...] = ("desktop",)
    filters: tuple[dict[str, Any], ...] = ()
    prolific_id_option: str = "url_parameters"

    def validate(self) -> None:
        """Raise :class:`ProlificValidationError` naming the first bad field."""
        for placeholder in ("{{%PROLIFIC_PID%}}", "{{%STUDY_ID%}}", "{{%SESSION_ID%}}"):
            if placeholder not in self.external_study_url:
                raise ProlificValidationError(f"external_study_url must contain {placeholder}.")
        if not self.external_study_url.startswith(("https://", "http://")):
            raise ProlificValidationError("external_study_url must be an http(s) URL.")
        if self.reward <= 0:
            raise ProlificValidationError("reward must be positive (minor currency units).")
        if self.estimated_completion_time <= 0:
            raise ProlificValidationError("estimated_completion_time must be positive (minutes).")
        if self.maximum_allowed_time < self.estimated_completion_time:
            raise ProlificValidationError("maximum_allowed_time must be at least the estimate.")
        if self.total_available_places <= 0:
            raise ProlificValidationError("total_available_places must be positive.")
        if not self.description.strip():
            raise ProlificValidationError("description must not be empty.")
        if not self.completion_codes:
            raise ProlificValidationError("At least one completion code is required.")

    def as_payload(self) -> dict[str, Any]:
        """The JSON body of ``POST /studies/``."""
        return {
            "name": self.name,
            "internal_name": self.internal_name,
            "description": self.description,
            "external_study_url": self.external_study_url,
            "prolific_id_option": self.prolific_id_option,
            "completion_codes": [c.as_payload() for c in self.completion_codes],
            "estimated_completion_time": self.estimated_completion_time,
            "maximum_allowed_time": self.maximum_allowed_time,
            "reward": self.reward,
            "total_available_places": self.total_available_places,
            "device_compatibility": list(self.device_compatibility),
            "filters": [dict(f) for f in self.filters],
        }


def validate_rejection(*, rejection_category: str, message: str) -> None:
    """Check a rejection before it is sent; raises :class:`ProlificValidationError`.

    Prolific requires a ``rejection_category`` from :data:`REJECTION_CATEGORIES` and a message
    to the participant of at least 100 characters.
    """
    problems = []
    if rejection_category not in REJECTION_CATEGORIES:
        problems.append(
            "Choose a rejection category (rejection_category): one of "
            f"{', '.join(REJECTION_CATEGORIES)}."
        )
    if len((message or "").strip()) < REJECTION_MESSAGE_MIN_CHARS:
        problems.append(
            f"The rejection message must be at least {REJECTION_MESSAGE_MIN_CHARS} characters "
            f"(it has {len((message or '').strip())})."
        )
    if problems:
        # Both at once, so that a researcher does not fix one only to be told of the other.
        raise ProlificValidationError(" ".join(problems))


# --- the demographic export ----------------------------------------------------------------

# Values Prolific writes where a participant's answer is not available (expired or withdrawn).
DEMOGRAPHIC_MISSING_VALUES = frozenset({"", "DATA_EXPIRED", "CONSENT_REVOKED", "NONE", "N/A"})
# Fields of the demographic export (Prolific: "Export demographic data", basic data) that the
# platform keeps, by their normalised header; the first header found wins. ``Language`` is the
# export's name for the first language.
DEMOGRAPHIC_FIELDS: dict[str, tuple[str, ...]] = {
    "age": ("age",),
    "sex": ("sex",),
    "country_of_residence": ("country_of_residence", "current_country_of_residence"),
    "first_language": ("first_language", "language"),
    "nationality": ("nationality",),
    "country_of_birth": ("country_of_birth",),
    "ethnicity": ("ethnicity_simplified", "ethnicity"),
    "student_status": ("student_status",),
    "employment_status": ("employment_status",),
}
# Columns of the export that are about the submission, not the participant: not kept (the
# platform measures times itself, by its own clock).
DEMOGRAPHIC_SUBMISSION_COLUMNS = frozenset({
    "submission_id", "participant_id", "status", "submission_status", "custom_study_tncs_accepted_at",
    "started_at", "completed_at", "reviewed_at", "archived_at", "time_taken", "time_taken_seconds",
    "completion_code", "entered_code", "total_approvals",
})


def demographic_header(name: str) -> str:
    """A column name of the export normalised: ``"Country of residence"`` ->
    ``"country_of_residence"`` (lower case, runs of other characters as one ``_``)."""
    return "_".join("".join(c if c.isalnum() else " " for c in name.strip().lower()).split())


@dataclass(frozen=True)
class DemographicRecord:
    """One row of a study's demographic export.

    ``submission_id`` and ``participant_id`` (the PID) identify it; the caller turns the PID into
    a pseudonym and does not keep it. ``age`` is in whole years or ``None``; the other fields of
    :data:`DEMOGRAPHIC_FIELDS` are text as Prolific wrote it, ``""`` when missing
    (:data:`DEMOGRAPHIC_MISSING_VALUES`). ``extra`` holds every other column Prolific returned
    (the answers to screeners that were requested), keyed by normalised header.
    """

    submission_id: str
    participant_id: str
    age: int | None = None
    sex: str = ""
    country_of_residence: str = ""
    first_language: str = ""
    nationality: str = ""
    country_of_birth: str = ""
    ethnicity: str = ""
    student_status: str = ""
    employment_status: str = ""
    extra: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_row(cls, row: dict[str, str]) -> "DemographicRecord":
        """Build from one CSV row keyed by the export's headers (any case or spacing).

        Raises :class:`ProlificValidationError` if the row has no submission id; an age that is
        not a whole number of years in 0-130 is kept as ``None``.
        """
        cells = {demographic_header(k): clean_demographic(v) for k, v in row.items() if k is not None}
        submission_id = cells.get("submission_id", "")
        if not submission_id:
            raise ProlificValidationError("A row of the demographic export has no submission id.")
        values: dict[str, Any] = {}
        used = set(DEMOGRAPHIC_SUBMISSION_COLUMNS)
        for name, headers in DEMOGRAPHIC_FIELDS.items():
            found = next((h for h in headers if h in cells), None)
            used.update(headers)
            values[name] = cells.get(found, "") if found else ""
        age = values.pop("age")
        return cls(
            submission_id=submission_id,
            participant_id=cells.get("participant_id", ""),
            age=int(age) if age.isdigit() and int(age) <= 130 else None,
            extra={k: v for k, v in cells.items() if k not in used and k},
            **values,
        )


def clean_demographic(value: Any) -> str:
    """A cell of the export as stripped text, ``""`` for Prolific's missing-value markers."""
    text = "" if value is None else str(value).strip()
    return "" if text.upper() in DEMOGRAPHIC_MISSING_VALUES else text


def parse_demographic_export(text: str) -> list[DemographicRecord]:
    """The rows of a demographic export (CSV text with a header row), in file order.

    A row repeated for the same submission keeps its last occurrence. Raises
    :class:`ProlificValidationError` if the text has no submission id column or a row lacks one.
    """
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff"), newline=""))
    headers = [demographic_header(h) for h in (reader.fieldnames or [])]
    if "submission_id" not in headers:
        raise ProlificValidationError(
            "The demographic export has no 'Submission id' column; Prolific answered something else."
        )
    records: dict[str, DemographicRecord] = {}
    for row in reader:
        if not any((v or "").strip() for v in row.values() if isinstance(v, str)):
            continue
        record = DemographicRecord.from_row(row)
        records[record.submission_id] = record
    return list(records.values())
