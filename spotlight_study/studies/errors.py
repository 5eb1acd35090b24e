"""The errors of study definitions: one base, :class:`StudyError`, and its kinds.

Both derive from :class:`spotlight_study.exceptions.DomainError`, so one handler answers them with
``code`` and ``http_status``: an invalid study file is bad input (400 ``invalid_study_file``,
with every bad field in ``fields``); a valid file that cannot be applied (the slug exists, or the
study is frozen) is a conflict (409 ``study_exists``). The codes are those the researcher API has
always answered with (``docs/api.md``).
"""
from __future__ import annotations

from spotlight_study.exceptions import DomainError


class StudyError(DomainError):
    """Base class of the studies app's errors (message for the researcher)."""

    code = "study_error"
    http_status = 409


class StudyImportError(StudyError):
    """A valid study file that cannot be applied to the database in its current state."""

    code = "study_exists"
    http_status = 409


class StudyFileError(StudyError):
    """A study file that cannot be imported. ``errors`` (also ``fields``) maps a field path
    (``settings[1].group2``) to its messages.

    ``str()`` lists every error, one per line, for the command line (``import_study``);
    :attr:`message`, which the API answers with beside ``fields``, is the one-line summary.
    """

    code = "invalid_study_file"
    http_status = 400

    def __init__(self, errors: dict[str, list[str]]):
        self.errors = errors
        lines = [f"{path}: {' '.join(msgs)}" for path, msgs in sorted(errors.items())]
        super().__init__("Invalid study file:\n  " + "\n  ".join(lines), fields=errors)

    @property
    def message(self) -> str:
        """The one-line summary for an error body (the fields carry the details)."""
        return "The study file is invalid."


class StudyUnavailable(StudyError):
    """A stored study definition that ``import_study`` would refuse: participants get a "not
    available" page (503), never the study. ``problems`` are ``"path: message"`` lines for the
    researcher (``manage.py launch_check`` names the same paths); the participant sees none."""

    code = "study_unavailable"
    http_status = 503

    def __init__(self, *, slug: str, problems: tuple[str, ...] | list[str], language: str = "en"):
        self.slug = slug
        self.problems = tuple(problems)
        #: The study's language, for the participant's page (as a plan's ``language``).
        self.language = language
        super().__init__(
            f"Study '{slug}' is not available: its definition would not import "
            f"({'; '.join(self.problems)}). Run `manage.py launch_check {slug}`."
        )


class StudyMemberError(StudyError):
    """A change of a study's team that cannot be made (unknown user or role, a role held twice,
    an annotator who could see conditions); nothing was changed."""

    code = "study_member_invalid"
    http_status = 400
