"""The one spelling of Prolific's identifiers and of the export pseudonym (plain Python, no Django).

Prolific IDs (``PROLIFIC_PID``, ``STUDY_ID``, ``SESSION_ID``, a submission's id, a bulk bonus
payment's id) are MongoDB ObjectIds: 24 hexadecimal digits, which Prolific writes in lower case
(Prolific API reference, "Participant", "Study", "Submission" objects). The export pseudonym of
a participant is ``p_`` + 16 lowercase hex digits
(:func:`spotlight_study.participation.selectors.participant_pseudonym`).

Every module that checks or finds one of these uses the patterns below: the entry form and the
assignment service (participation), the study link and the bonus CSV (prolific), the erasure
(privacy) and the log scrubbing (:mod:`spotlight_study.log_scrubbing`).
"""
from __future__ import annotations

import re

# 24 lowercase hex digits, without anchors: the building block of the patterns below.
PROLIFIC_ID_PATTERN = "[0-9a-f]{24}"

# A whole value that is a Prolific ID. Anchored with ``\Z`` (not ``$``), so ``.match``,
# ``.search`` (Django's ``RegexValidator``) and ``.fullmatch`` all refuse a trailing newline.
PROLIFIC_ID_RE = re.compile(rf"^{PROLIFIC_ID_PATTERN}\Z")

# A Prolific ID inside free text (a log line, a traceback), in either case, not part of a longer
# run of letters or digits. For scrubbing, so it errs on the side of finding one.
PROLIFIC_ID_IN_TEXT_RE = re.compile(
    rf"(?<![0-9A-Za-z]){PROLIFIC_ID_PATTERN}(?![0-9A-Za-z])", re.IGNORECASE
)

# A whole value that is an export pseudonym: ``p_`` + 16 lowercase hex digits.
PSEUDONYM_RE = re.compile(r"^p_[0-9a-f]{16}\Z")


def is_prolific_id(value: object) -> bool:
    """Whether ``value`` is a string of exactly 24 lowercase hex digits (a Prolific ID)."""
    return isinstance(value, str) and PROLIFIC_ID_RE.match(value) is not None


def is_pseudonym(value: object) -> bool:
    """Whether ``value`` is an export pseudonym (``p_`` + 16 lowercase hex digits)."""
    return isinstance(value, str) and PSEUDONYM_RE.match(value) is not None
