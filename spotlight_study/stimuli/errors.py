"""The errors of the stimuli app: one base, :class:`StimuliError`, and its kinds.

Every error the stimuli modules raise on purpose derives from :class:`StimuliError`, which
derives from :class:`spotlight_study.exceptions.DomainError`, so one handler can answer with
``code`` and ``http_status`` (see that module). ``str(error)`` is the message for the researcher
and never contains the API key.

Plain Python, no Django: the pure modules (``importers``, ``mining``, ``tokenize``,
``generation``) raise these too.

The codes and statuses of :class:`StimuliError` (409 ``conflict``) and :class:`OutputImportError`
(400 ``invalid``) are the ones the researcher API answered with before this module existed.
"""
from __future__ import annotations

from spotlight_study.exceptions import DomainError


class StimuliError(DomainError):
    """An action the researcher asked for that cannot be done; the message says why."""

    code = "conflict"
    http_status = 409


class JobStateError(StimuliError):
    """A job cannot be cancelled or resumed in its current state (finished, or still running)."""

    code = "conflict"
    http_status = 409


class SettingBuildError(StimuliError):
    """A setting cannot be built (study has participants, key taken, too few outputs, ...)."""

    code = "conflict"
    http_status = 409


class OutputImportError(StimuliError):
    """A file of outputs that cannot be imported; the message says what and where."""

    code = "invalid"
    http_status = 400


class MiningError(StimuliError):
    """The inputs cannot be mined (an empty group, an output without tokens) or Premise failed."""

    code = "mining_failed"
    http_status = 409


class TokenizerError(StimuliError):
    """The named spaCy pipeline cannot be loaded (not installed, unknown language)."""

    code = "tokenizer_unavailable"
    http_status = 409


class GenerationError(StimuliError):
    """An LLM request the server refused for good (bad model, key or parameters) or an empty
    answer."""

    code = "generation_failed"
    http_status = 502


class TransientGenerationError(GenerationError):
    """An LLM request failed for a reason that may pass (429, 5xx, connection), after the
    client's own retries; the job is retried later (see :mod:`.jobs.retry`).

    Raised by every LLM job (generation here, machine coding in ``annotation``). The message is
    safe to log: it never contains the API key.
    """

    code = "generation_unavailable"
    http_status = 502
