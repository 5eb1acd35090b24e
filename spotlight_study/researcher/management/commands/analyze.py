"""``manage.py analyze SLUG --out DIR``: run the study statistics on the study's current data.

Exit status 0 on success; 2, with a one-line message and no traceback, when the data cannot be
analysed yet (no answers, answers without final labels, a condition group still empty); 1 for
other errors (unknown study, output directory not writable). The study's latest preregistered
plan (``manage.py preregister``), if any, is cited in the report with the deviations from it. When
the machine coder (``manage.py llm_annotate``) has labelled the study, the report gives its
agreement with the humans and the non-inferiority decision per label (``--margin``).
"""
from django.core.management.base import BaseCommand, CommandError

from spotlight_study.commands import study_for_command
from spotlight_study.researcher.services import analysis_run


class Command(BaseCommand):
    help = (
        "Export the study's current data and run the analysis (results.json, tables, figures, "
        "report). The researcher page links to the latest report."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--out", required=True, help="Directory to write into.")
        parser.add_argument(
            "--include-pilot",
            action="store_true",
            help="Analyse the pilot participants (manage.py pilot) too; left out by default.",
        )
        parser.add_argument(
            "--margin",
            type=float,
            default=None,
            help="Non-inferiority margin of the machine coder in kappa units, in [0, 1] (default "
            "0.1): it could replace a second human coder on a label if the lower 95%% bound of "
            "kappa(machine, final) >= kappa(human, human) - margin. See docs/analysis.md.",
        )
        parser.add_argument(
            "--no-plan",
            action="store_true",
            help="Ignore the study's preregistered plan (by default the latest version is used: the "
            "report cites its hash and lists the deviations from it).",
        )

    def handle(self, *args, slug, out, include_pilot=False, no_plan=False, margin=None, **options):
        from analysis import AnalysisInputError

        from spotlight_study.prereg.errors import PlanTamperedError
        from spotlight_study.prereg.selectors import plan_checked, plan_latest

        study = study_for_command(slug)
        latest = None if no_plan else plan_latest(study=study)
        try:
            # The report cites the plan's hash: only the plan exactly as it was frozen may be cited.
            plan = plan_checked(latest) if latest else None
        except PlanTamperedError as exc:
            raise CommandError(
                f"{exc} Nothing was analysed (--no-plan analyses without citing a plan)."
            ) from None
        try:
            results = analysis_run(study=study, out_dir=out, include_pilot=include_pilot,
                                   plan=plan, margin=margin)
        except AnalysisInputError as exc:
            # Status 2, like ``python -m analysis``: the input cannot be analysed (as opposed to 1,
            # the command itself failing).
            raise CommandError(f"The data cannot be analysed yet: {exc}", returncode=2) from None
        except OSError as exc:
            raise CommandError(f"Cannot write to {out}: {exc.strerror or exc}") from None
        self.stdout.write(f"Report: {out}/report.html (input SHA-256 {results['input_sha256']})")
        if include_pilot:
            self.stdout.write("  The data include the pilot participants.")
        if latest is not None and "preregistration" in results:
            count = results["preregistration"]["deviations"]["count"]
            self.stdout.write(f"  Preregistered plan v{latest.version} (SHA-256 {latest.plan_sha256}): "
                              f"{count} deviation(s), listed in the report.")
        if "design" not in results:  # a declared codebook's outcome that is not a proportion
            self._codebook_lines(results["codebook"])
            return
        self._machine_coder_lines(results.get("machine_coder"))
        self._identification_lines(results)
        if "codebook" in results:
            self._codebook_lines(results["codebook"])

    def _codebook_lines(self, codebook) -> None:
        """One line per test of the codebook's outcome (codebook_report.html has the rest)."""
        from analysis.document import fmt_p

        o = codebook["outcome"]
        self.stdout.write(f"  Outcome {o['label']} ({o['type']}): {o['test']}; codebook_report.html")
        if "deviations" in codebook:
            self.stdout.write(f"  Codebook: {len(codebook['deviations'])} deviation(s) from the "
                              "preregistered plan, listed in codebook_report.html.")
        for c in o["comparisons"]:
            self.stdout.write(f"  {c['setting']}: {c['treatment']} vs no_pattern, "
                              f"p={fmt_p(c['p'])}, p (Holm)={fmt_p(c.get('p_holm'))}")

    def _identification_lines(self, results) -> None:
        """One line per identification test, its z and p rounded as in the report; where they
        are undefined, why (the report's words); or the report's note that nothing is tested."""
        from analysis.document import fmt_num, fmt_p
        from analysis.report import NO_IDENTIFICATION_TEST, identification_undefined_reason

        if not results["design"]["compared"]:
            self.stdout.write(f"  Identification: {NO_IDENTIFICATION_TEST}")
        for section, treatment, words in (
            ("identification", "pattern", "pattern"),
            ("identification_with_distractors", "pattern_with_distractors", "pattern + distractors"),
        ):
            for setting, r in results[section].items():
                counts = (
                    f"  {setting}: identified {r['k_no_pattern']}/{r['n_no_pattern']} without vs "
                    f"{r[f'k_{treatment}']}/{r[f'n_{treatment}']} with {words}"
                )
                reason = identification_undefined_reason(r, treatment)
                if reason is not None:
                    self.stdout.write(f"{counts}, z and p undefined: {reason}")
                    continue
                p_holm = results["holm"][section][setting]["p_holm"]
                self.stdout.write(
                    f"{counts}, z={fmt_num(r['z'])}, p={fmt_p(r['p'])}, p (Holm)={fmt_p(p_holm)}"
                )

    def _machine_coder_lines(self, machine_coder) -> None:
        """One line per decision of the machine coder, or that there are no machine labels."""
        if not machine_coder or not machine_coder["models"]:
            self.stdout.write("  No machine labels: the report has no machine-coder agreement.")
            return
        for d in machine_coder["decisions"]:
            self.stdout.write(f"  Machine coder llm:{d['model']}: {d['statement']}")
