"""Exception types raised by the analysis package."""


class AnalysisInputError(ValueError):
    """The exported study data, or an argument, cannot be analysed as given.

    Raised for every problem the researcher can fix in the input: missing
    columns, unknown condition values, non-binary or unannotated outcomes,
    empty condition groups, duplicate rows and out-of-range arguments. The
    message names the file, row, participant, setting or column concerned.

    Notes
    -----
    Subclasses :class:`ValueError`, so callers that only expect
    ``ValueError`` still catch it.

    Examples
    --------
    >>> from analysis import AnalysisInputError
    >>> try:
    ...     raise AnalysisInputError("responses.csv is missing column(s): setting")
    ... except ValueError as exc:
    ...     print(exc)
    responses.csv is missing column(s): setting
    """


class PlanIntegrityError(ValueError):
    """A stored preregistered plan does not match the SHA-256 recorded when it was frozen.

    Raised by :func:`analysis.plan_hash.plan_verified`; the message names the plan and gives
    the recorded and the actual hash. Not an :class:`AnalysisInputError`: the data may be fine,
    but the plan a report would cite is not the one that was preregistered.
    """
