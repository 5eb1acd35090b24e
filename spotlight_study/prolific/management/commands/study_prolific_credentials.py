"""``manage.py study_prolific_credentials``: a study's own Prolific credentials, from the shell.

::

    study_prolific_credentials SLUG                                  # show: set / not set, never values
    study_prolific_credentials SLUG --token-from-env VAR             # save the token read from $VAR
    study_prolific_credentials SLUG --webhook-secret-from-env VAR    # save the webhook secret from $VAR
    study_prolific_credentials SLUG --clear | --clear-token | --clear-webhook-secret
    study_prolific_credentials --rotate                              # re-encrypt all with the first key
    study_prolific_credentials --new-key                             # print a new Fernet key

A value is never taken as an argument (it would show in ``ps`` and the shell's history): it is
read from the named environment variable, which the command never prints.
"""
from __future__ import annotations

import os

from django.core.management.base import BaseCommand, CommandError

from spotlight_study.commands import study_for_command
from spotlight_study.prolific.credentials import KINDS, credentials_status, new_key
from spotlight_study.prolific.errors import ProlificError, ProlificServiceError
from spotlight_study.prolific.services.credentials import (
    credentials_clear,
    credentials_rotate,
    credentials_save,
)


class Command(BaseCommand):
    """Show, save (from environment variables) or clear a study's own Prolific credentials."""

    help = (
        "Show, save or clear a study's own Prolific API token and webhook secret (encrypted with "
        "PROLIFIC_CREDENTIALS_KEYS). Values come from environment variables, never arguments."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug", nargs="?", help="The study (not with --rotate or --new-key).")
        parser.add_argument("--token-from-env", metavar="VAR", help="Save the API token held by $VAR.")
        parser.add_argument(
            "--webhook-secret-from-env", metavar="VAR", help="Save the webhook secret held by $VAR."
        )
        parser.add_argument("--clear", action="store_true", help="Remove both: fall back to the environment.")
        parser.add_argument("--clear-token", action="store_true", help="Remove the study's own token.")
        parser.add_argument(
            "--clear-webhook-secret", action="store_true", help="Remove the study's own webhook secret."
        )
        parser.add_argument(
            "--rotate", action="store_true",
            help="Re-encrypt every study's credentials with the first key of PROLIFIC_CREDENTIALS_KEYS.",
        )
        parser.add_argument("--new-key", action="store_true", help="Print a new key for PROLIFIC_CREDENTIALS_KEYS.")

    def handle(self, *args, slug: str | None, **o) -> None:
        if o["new_key"] or o["rotate"]:
            if slug or o["token_from_env"] or o["webhook_secret_from_env"] or o["clear"] \
                    or o["clear_token"] or o["clear_webhook_secret"] or (o["new_key"] and o["rotate"]):
                raise CommandError("--rotate and --new-key take no study and no other option.")
            if o["new_key"]:
                self.stdout.write(new_key())
                return
            try:
                count = credentials_rotate()
            except (ProlificServiceError, ProlificError) as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write(f"Re-encrypted {count} credential(s) with the first key.")
            return
        if not slug:
            raise CommandError("Name the study (its slug), or use --rotate or --new-key.")
        study = study_for_command(slug)
        saving = o["token_from_env"] or o["webhook_secret_from_env"]
        clearing = o["clear"] or o["clear_token"] or o["clear_webhook_secret"]
        if saving and clearing:
            raise CommandError("Save or clear, not both in one run. Nothing was changed.")
        try:
            if saving:
                saved = credentials_save(
                    study=study, api_token=self._from_env(o["token_from_env"]),
                    webhook_secret=self._from_env(o["webhook_secret_from_env"]), via="command",
                )
                self.stdout.write(f"Saved, encrypted: {', '.join(KINDS[k][0] for k in saved)}.")
            elif clearing:
                cleared = credentials_clear(
                    study=study, api_token=o["clear"] or o["clear_token"],
                    webhook_secret=o["clear"] or o["clear_webhook_secret"], via="command",
                )
                self.stdout.write(
                    f"Cleared: {', '.join(KINDS[k][0] for k in cleared)}." if cleared
                    else "Nothing to clear: the study has no credentials of its own."
                )
        except (ProlificServiceError, ProlificError) as exc:
            raise CommandError(str(exc)) from None
        for status in credentials_status(study.pk).values():
            what = str(status["what"])
            self.stdout.write(f"{what[0].upper()}{what[1:]}: {status['label']}.")

    @staticmethod
    def _from_env(variable: str | None) -> str | None:
        """The value of ``$variable`` (``None`` when no variable was named). Raises
        ``CommandError`` naming the variable, never a value, when it is unset or empty."""
        if variable is None:
            return None
        value = os.environ.get(variable, "")
        if not value.strip():
            raise CommandError(f"The environment variable {variable} is not set or empty. Nothing was saved.")
        return value
