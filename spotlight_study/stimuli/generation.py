"""Asking an OpenAI-compatible Chat Completions API for outputs (no database access).

Any server speaking the OpenAI API works (OpenAI, vLLM, Ollama, llama.cpp server, ...): the base
URL is the ``OPENAI_BASE_URL`` setting, the key comes from the ``OPENAI_API_KEY`` environment
variable. Retries with exponential backoff on 429, 408, 409 and 5xx (honouring ``Retry-After``)
are the ``openai`` client's own, bounded by ``max_retries``. The key is never logged, and
:func:`safe_error_message` removes it from any message that is stored or shown.
"""
from __future__ import annotations

import openai

from .errors import GenerationError

# Errors that may go away if the whole job is tried again later (after the client's own retries).
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    openai.APIConnectionError,  # includes APITimeoutError
    openai.RateLimitError,
    openai.InternalServerError,
)


def make_client(*, base_url: str, api_key: str, max_retries: int, timeout_s: float) -> openai.OpenAI:
    """An ``openai.OpenAI`` client for ``base_url``.

    ``api_key`` may be empty for local servers that need none; a placeholder is sent then,
    because the client refuses an empty key. ``max_retries`` is the client's retry budget per
    request; ``timeout_s`` the timeout per request in seconds.
    """
    return openai.OpenAI(
        base_url=base_url,
        api_key=api_key or "no-key",
        max_retries=max_retries,
        timeout=timeout_s,
    )


def complete(
    client: openai.OpenAI,
    *,
    model: str,
    prompt: str,
    temperature: float,
    top_p: float,
    max_tokens: int,
    seed: int | None,
) -> str:
    """One Chat Completion for a single user message; returns the assistant's text.

    Raises
    ------
    GenerationError
        If the answer has no text.
    openai.APIError
        Whatever the client raises once its own retries are spent (see :data:`TRANSIENT_ERRORS`).
    """
    kwargs = {}
    if seed is not None:
        kwargs["seed"] = seed
    response = client.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": prompt}],
        temperature=temperature,
        top_p=top_p,
        max_tokens=max_tokens,
        n=1,
        **kwargs,
    )
    if not response.choices or response.choices[0].message.content is None:
        raise GenerationError("The server answered without any text.")
    return response.choices[0].message.content


def safe_error_message(exc: BaseException, *, secret: str) -> str:
    """A one-line description of ``exc`` for pages and logs, with ``secret`` removed.

    Servers sometimes echo the key they received (e.g. "Incorrect API key provided: ..."), so the
    key is replaced by ``[redacted]`` wherever it appears.
    """
    if isinstance(exc, openai.APIStatusError):
        text = f"The server answered {exc.status_code}: {exc.message}"
    elif isinstance(exc, openai.APITimeoutError):
        text = "The request to the server timed out."
    elif isinstance(exc, openai.APIConnectionError):
        text = "Could not connect to the server (check OPENAI_BASE_URL)."
    else:
        text = str(exc) or type(exc).__name__
    if secret:
        text = text.replace(secret, "[redacted]")
    return " ".join(text.split())[:1000]
