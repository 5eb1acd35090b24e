"""``manage.py llm_agreement SLUG --model M [--margin 0.1]``: the machine coder's agreement
with the human annotators and the final labels, and the non-inferiority decision in words."""

from django.core.management.base import BaseCommand, CommandError

from spotlight_study.annotation.machine_agreement import (
    DEFAULT_MARGIN,
    machine_agreement,
    machine_models,
)
from spotlight_study.commands import study_for_command


class Command(BaseCommand):
    """``llm_agreement``: see the module docstring."""

    help = "Cohen's kappa (bootstrap 95% CI) of the machine coder vs humans and final labels."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--model", required=True)
        parser.add_argument(
            "--margin", type=float, default=DEFAULT_MARGIN,
            help="Non-inferiority margin in kappa units (default 0.1; see docs/annotation.md).",
        )
        parser.add_argument("--resamples", type=int, default=2000, help="Bootstrap resamples.")
        parser.add_argument("--seed", type=int, default=20260101, help="Bootstrap seed.")

    def handle(self, *args, slug, model, margin, resamples, seed, **options):
        study = study_for_command(slug)
        if model not in machine_models(study=study):
            raise CommandError(f"No machine labels from model '{model}' in study '{slug}'.")
        try:
            rows, decisions = machine_agreement(
                study=study, models=[model], margin=margin, n_resamples=resamples, seed=seed
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        for r in rows:
            ci = r.ci
            interval = (
                f"[{ci.ci_low.value:.3f}, {ci.ci_high.value:.3f}]"
                if ci.ci_low.defined
                else f"no CI ({ci.ci_low.undefined_reason})"
            )
            self.stdout.write(
                f"{r.field:20} {r.comparison:17} {r.rater_a} x {r.rater_b}: n={ci.n_items} "
                f"kappa={ci.kappa.display()} 95% CI {interval}"
            )
        self.stdout.write("")
        for d in decisions:
            self.stdout.write(d.rule.statement)
