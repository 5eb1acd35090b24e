"""Asking an OpenAI-compatible Chat Completions API for outputs (no database access).

Any server speaking the OpenAI API works (OpenAI, vLLM, Ollama, llama.cpp server, ...): the base
URL is the ``OPENAI_BASE_URL`` setting, the key comes from the ``OPENAI_API_KEY`` environment
variable. Retries with exponential backoff on 429, 408, 409 and 5xx (honouring ``Retry-After``)
are the ``openai`` client's own, bounded by ``max_retries``. The key is never logged, and
:func:`safe_error_message` removes it from any message that is stored or shown.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import GenerationError

# The openai package takes about 0.5 s of CPU to import, and every process that loads the URLs
# (each server, each management command's checks) would pay it: it is imported here, by the
# functions that make a client or classify its errors, and nowhere else.
if TYPE_CHECKING:
    import openai


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` may go away if the whole job is tried again later (after the client's own
    retries): a connection error or timeout, a 429, or a 5xx from the server."""
    import openai

    return isinstance(exc, (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError))


def make_client(*, base_url: str, api_key: str, max_retries: int, timeout_s: float) -> openai.OpenAI:
    """An ``openai.OpenAI`` client for ``base_url``.

    ``api_key`` may be empty for local servers that need none; a placeholder is sent then,
    because the client refuses an empty key. ``max_retries`` is the client's retry budget per
    request; ``timeout_s`` the timeout per request in seconds.
    """
    import openai

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
        Whatever the client raises once its own retries are spent (see :func:`is_transient`).
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
    import openai

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
