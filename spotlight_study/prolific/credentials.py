"""A study's Prolific credentials: encrypted at rest, and the ones in force for each study.

A study may have its own API token and webhook secret (another Prolific workspace); each one it
does not have falls back to the instance's environment (``PROLIFIC_API_TOKEN``,
``PROLIFIC_WEBHOOK_SECRET``), independently of the other. :func:`study_credentials` says which
values are in force for a study; the client (:func:`~.services.study.client_or_default`), the
webhook (``views.webhook``), the sync task and the review all ask it.

The values are encrypted with Fernet (AES-128-CBC and HMAC-SHA256, from the ``cryptography``
package) under the keys of ``PROLIFIC_CREDENTIALS_KEYS``: a :class:`~cryptography.fernet.MultiFernet`
encrypts with the first key and decrypts with any, so a new key is put first, the stored values
are re-encrypted (``manage.py study_prolific_credentials --rotate``), then the old key is
dropped (docs/security.md). Without a key nothing can be saved
(:class:`CredentialsEncryptionOff`); a stored value that no key opens is never replaced by the
instance's (that would call another workspace): the study's calls and webhooks stop with a
message instead (:class:`CredentialsUnreadable`).

Plain values are never logged, shown after saving, exported or put in an error message.
"""
from __future__ import annotations

from dataclasses import dataclass

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings

from .errors import ProlificNotConfigured, ProlificServiceError
from .models import ProlificCredentials

#: Where a credential in force comes from.
SOURCE_STUDY = "study"
SOURCE_ENVIRONMENT = "environment"
SOURCE_NONE = "none"

#: The two kinds of credential, by their field prefix, with their words and environment variable.
KINDS = {
    "api_token": ("API token", "PROLIFIC_API_TOKEN"),
    "webhook_secret": ("webhook secret", "PROLIFIC_WEBHOOK_SECRET"),
}

ENCRYPTION_OFF_MESSAGE = (
    "Per-study Prolific credentials are off on this server: set PROLIFIC_CREDENTIALS_KEYS "
    "(a Fernet key; docs/security.md, 'Per-study Prolific credentials'). Nothing was saved; "
    "until then the study uses the instance's PROLIFIC_API_TOKEN and PROLIFIC_WEBHOOK_SECRET."
)


class CredentialsEncryptionOff(ProlificServiceError):
    """``PROLIFIC_CREDENTIALS_KEYS`` is empty or not a list of Fernet keys: nothing can be saved."""


class CredentialsUnreadable(ProlificNotConfigured):
    """A study's stored credential cannot be decrypted by any key of ``PROLIFIC_CREDENTIALS_KEYS``
    (the key that saved it was removed or changed). The study's calls stop: nothing falls back."""


def _keys() -> MultiFernet | None:
    """The configured keys as one :class:`MultiFernet` (first key encrypts), or ``None`` if none
    is set. Raises :class:`CredentialsEncryptionOff` for a value that is not a Fernet key (the
    message names its position only, never the key)."""
    raw = [k.strip() for k in settings.PROLIFIC_CREDENTIALS_KEYS if k and k.strip()]
    if not raw:
        return None
    fernets = []
    for position, key in enumerate(raw, start=1):
        try:
            fernets.append(Fernet(key.encode()))
        except (ValueError, TypeError):
            raise CredentialsEncryptionOff(
                f"Key {position} of PROLIFIC_CREDENTIALS_KEYS is not a Fernet key (32 bytes, "
                "URL-safe base64; make one with manage.py study_prolific_credentials --new-key). "
                "Nothing was saved or read."
            ) from None
    return MultiFernet(fernets)


def encryption_available() -> bool:
    """Whether per-study credentials can be saved: at least one valid key is configured."""
    try:
        return _keys() is not None
    except CredentialsEncryptionOff:
        return False


def encrypt(value: str) -> str:
    """``value`` encrypted with the first key, as text. Raises :class:`CredentialsEncryptionOff`
    without a (valid) key."""
    keys = _keys()
    if keys is None:
        raise CredentialsEncryptionOff(ENCRYPTION_OFF_MESSAGE)
    return keys.encrypt(value.encode()).decode()


def decrypt(stored: str, *, what: str = "credential") -> str:
    """The plain value of an encrypted ``stored`` text. Raises :class:`CredentialsUnreadable`
    (its message names ``what``, never the value) when no configured key opens it."""
    try:
        keys = _keys()
    except CredentialsEncryptionOff as exc:
        raise CredentialsUnreadable(str(exc)) from None
    if keys is None:
        raise CredentialsUnreadable(
            f"This study's own Prolific {what} is stored encrypted, but PROLIFIC_CREDENTIALS_KEYS "
            "is not set: set the key it was saved with (or replace the credential). Nothing was "
            "sent, and the instance's credentials are not used in its place."
        )
    try:
        return keys.decrypt(stored.encode()).decode()
    except (InvalidToken, ValueError):
        raise CredentialsUnreadable(
            f"This study's own Prolific {what} cannot be decrypted with PROLIFIC_CREDENTIALS_KEYS "
            "(was the key it was saved with removed?): put that key back, or replace the "
            "credential. Nothing was sent, and the instance's credentials are not used in its place."
        ) from None


def rotate(stored: str) -> str:
    """``stored`` re-encrypted with the first key (any configured key may open it). Raises
    :class:`CredentialsUnreadable` if none does."""
    keys = _keys()
    if keys is None:
        raise CredentialsEncryptionOff(ENCRYPTION_OFF_MESSAGE)
    try:
        return keys.rotate(stored.encode()).decode()
    except (InvalidToken, ValueError):
        raise CredentialsUnreadable(
            "A stored credential cannot be decrypted with any key of PROLIFIC_CREDENTIALS_KEYS."
        ) from None


def new_key() -> str:
    """A new random Fernet key (32 bytes from the OS, URL-safe base64) for
    ``PROLIFIC_CREDENTIALS_KEYS``."""
    return Fernet.generate_key().decode()


@dataclass(frozen=True)
class StudyCredentials:
    """The Prolific credentials in force for one study.

    ``api_token`` and ``webhook_secret`` are the plain values ("" when neither the study nor the
    instance has one); ``token_source`` and ``secret_source`` are :data:`SOURCE_STUDY`,
    :data:`SOURCE_ENVIRONMENT` or :data:`SOURCE_NONE`. ``repr`` hides the values.
    """

    api_token: str
    webhook_secret: str
    token_source: str
    secret_source: str

    def __repr__(self) -> str:
        return (f"StudyCredentials(token from {self.token_source}, "
                f"webhook secret from {self.secret_source})")

    __str__ = __repr__


def _stored(study_id: int | None) -> ProlificCredentials | None:
    if study_id is None:
        return None
    return ProlificCredentials.objects.filter(study_id=study_id).first()


def _in_force(row: ProlificCredentials | None, kind: str) -> tuple[str, str]:
    """``(value, source)`` of one kind (``api_token`` or ``webhook_secret``)."""
    stored = getattr(row, f"{kind}_encrypted", "") if row is not None else ""
    what, variable = KINDS[kind]
    if stored:
        return decrypt(stored, what=what), SOURCE_STUDY
    value = getattr(settings, variable)
    return value, (SOURCE_ENVIRONMENT if value else SOURCE_NONE)


def study_credentials(study_id: int | None) -> StudyCredentials:
    """The credentials in force for study ``study_id`` (``None``: the instance's alone).

    Each of the study's own values wins; each it lacks falls back to the environment. Raises
    :class:`CredentialsUnreadable` if the study has an own value that cannot be decrypted (never
    falls back then: the instance's token would act in another workspace).
    """
    row = _stored(study_id)
    token, token_source = _in_force(row, "api_token")
    secret, secret_source = _in_force(row, "webhook_secret")
    return StudyCredentials(token, secret, token_source, secret_source)


def study_api_token(study_id: int | None) -> str:
    """The API token in force for the study ("" if none; see :func:`study_credentials`)."""
    token, _ = _in_force(_stored(study_id), "api_token")
    return token


def study_webhook_secret(study_id: int | None) -> str:
    """The webhook secret in force for the study ("" if none; see :func:`study_credentials`)."""
    secret, _ = _in_force(_stored(study_id), "webhook_secret")
    return secret


def has_own_webhook_secret(study_id: int) -> bool:
    """Whether the study has a webhook secret of its own (then only its own webhook URL,
    ``/prolific/webhook/<slug>/``, may change it)."""
    return ProlificCredentials.objects.filter(study_id=study_id).exclude(webhook_secret_encrypted="").exists()


def studies_with_own_token():
    """The ids of the studies that have an API token of their own (a ``values_list`` query)."""
    return ProlificCredentials.objects.exclude(api_token_encrypted="").values_list("study_id", flat=True)


def credentials_status(study_id: int) -> dict[str, dict[str, str | bool]]:
    """What the study page shows of each credential, never its value: per kind (``api_token``,
    ``webhook_secret``) ``own`` (the study has one), ``environment`` (the instance has one) and
    ``label`` (e.g. "set for this study", "not set: the instance's PROLIFIC_API_TOKEN is used")."""
    row = _stored(study_id)
    status: dict[str, dict[str, str | bool]] = {}
    for kind, (what, variable) in KINDS.items():
        own = bool(getattr(row, f"{kind}_encrypted", "")) if row is not None else False
        environment = bool(getattr(settings, variable))
        if own:
            label = "set for this study"
        elif environment:
            label = f"not set: the instance's {variable} is used"
        else:
            label = f"not set, and the instance has no {variable}"
        status[kind] = {"own": own, "environment": environment, "label": label, "what": what}
    return status
