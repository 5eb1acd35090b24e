"""``manage.py preregister SLUG --out DIR``: freeze the study's analysis plan (or ``--list`` versions).

Exit status 0 on success; 1 with a one-line message for an unknown study, missing or invalid
options, an edit of a live study's plan without ``--reason``, or an unwritable directory.
"""
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from spotlight_study.commands import study_for_command
from spotlight_study.prereg.errors import PlanInputError, PreregError
from spotlight_study.prereg.plan import SampleSizeInput, plan_build
from spotlight_study.prereg.render import plan_markdown, plan_osf_text
from spotlight_study.prereg.selectors import plan_versions
from spotlight_study.prereg.services import plan_register


class Command(BaseCommand):
    help = (
        "Freeze the study's analysis plan (hypotheses, tests, exclusion rules, planned N, hash of "
        "the study definition) into DIR/plan.json and DIR/plan.md and store it with its SHA-256. "
        "Once the study is live a new version needs --reason; every version is kept (--list)."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--out", metavar="DIR", help="Directory for plan.json, plan.md (and plan_osf.txt).")
        parser.add_argument("--list", dest="list_versions", action="store_true", help="List the study's plan versions and stop.")
        parser.add_argument("--reason", default="", help="Why this version replaces the previous one.")
        parser.add_argument("--osf", action="store_true",
                            help="Also write plan_osf.txt under the OSF Preregistration template's headings.")
        parser.add_argument("--planned-n", type=int, metavar="N", help="Planned number of participants.")
        parser.add_argument("--p-control", type=float, metavar="P0",
                            help="Planner: expected identification rate without the pattern.")
        parser.add_argument("--p-treatment", type=float, metavar="P1",
                            help="Planner: expected identification rate with the pattern.")
        parser.add_argument("--power", type=float, default=0.8, help="Planner: power (default 0.8).")
        parser.add_argument("--dropout", type=float, default=0.0,
                            help="Planner: expected share lost or excluded (default 0).")
        parser.add_argument("--alpha", type=float, default=0.05, help="Alpha of every test (default 0.05).")

    def handle(self, *args, slug, out=None, list_versions=False, reason="", osf=False, planned_n=None,
               p_control=None, p_treatment=None, power=0.8, dropout=0.0, alpha=0.05, **options):
        study = study_for_command(slug, with_settings=True)
        if list_versions:
            self._list(study)
            return
        if not out:
            raise CommandError("Give --out DIR (where plan.json and plan.md are written), or --list.")
        sample = SampleSizeInput(planned_n=planned_n, p_control=p_control, p_treatment=p_treatment,
                                 power=power, dropout=dropout)
        try:
            plan = plan_build(study=study, sample_size=sample, alpha=alpha)
            registration = plan_register(study=study, plan=plan, reason=reason)
        except (PlanInputError, PreregError) as exc:
            raise CommandError(str(exc)) from None
        version = registration.version
        target = Path(out)
        try:
            target.mkdir(parents=True, exist_ok=True)
            # plan.json holds the canonical bytes, so ``sha256sum plan.json`` prints the plan's hash.
            (target / "plan.json").write_text(version.canonical_json, encoding="utf-8")
            (target / "plan.md").write_text(plan_markdown(version.plan, version.plan_sha256), encoding="utf-8")
            if osf:
                (target / "plan_osf.txt").write_text(plan_osf_text(version.plan, version.plan_sha256),
                                                     encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"Cannot write to {out}: {exc.strerror or exc}") from None
        state = "Registered" if registration.created else "Unchanged: already registered as"
        self.stdout.write(f"{state} plan version {version.version} of {slug} "
                          f"({version.created_at:%Y-%m-%d %H:%M:%S %Z}).")
        self.stdout.write(f"Plan SHA-256 {version.plan_sha256} (SHA-256 of the canonical JSON: sorted "
                          "keys, UTF-8, no whitespace; the bytes of plan.json)")
        self.stdout.write(f"Study definition SHA-256 {version.definition_sha256}; planned N {version.planned_n}")
        self.stdout.write(f"Wrote plan.json, plan.md{', plan_osf.txt' if osf else ''} to {out}")

    def _list(self, study):
        versions = list(plan_versions(study=study))
        if not versions:
            self.stdout.write(f"No preregistered plan for {study.slug}.")
            return
        for v in versions:
            note = f" reason: {v.reason}" if v.reason else ""
            self.stdout.write(f"v{v.version}  {v.created_at:%Y-%m-%d %H:%M:%S %Z}  {v.plan_sha256}  "
                              f"N {v.planned_n}  study {v.study_status}{note}")
