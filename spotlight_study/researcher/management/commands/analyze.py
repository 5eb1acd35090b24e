"""``manage.py analyze SLUG [--out DIR]``: run the study statistics on the study's current data.

The run is recorded like one started on the study page (an ``AnalysisRun`` whose starter is
"command line") and its outputs are stored in the ``analysis`` storage, where every server's
researcher page shows them; ``--out`` also writes them, with the analysed export, to a directory.
Exit status 0 on success; 2, with a one-line message and no traceback, when the data cannot be
analysed yet (no answers, answers without final labels, a condition group still empty); 1 for
other errors (unknown study, output directory not writable, a run of the study already going). The study's latest preregistered
plan (``manage.py preregister``), if any, is cited in the report with the deviations from it. When
the machine coder (``manage.py llm_annotate``) has labelled the study, the report gives its
agreement with the humans and the non-inferiority decision per label (``--margin``).
"""
from django.core.management.base import BaseCommand, CommandError

import uuid

from spotlight_study.commands import study_for_command
from spotlight_study.researcher.analysis_execution import analysis_job_run
from spotlight_study.researcher.analysis_jobs import analysis_job_create
from spotlight_study.researcher.errors import AnalysisBusyError
from spotlight_study.researcher.models import AnalysisRun


class Command(BaseCommand):
    help = (
        "Export the study's current data and run the analysis (results.json, tables, figures, "
        "report), stored and listed like a run from the study page, which links to the report."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--out", default=None,
                            help="Also write the outputs and the analysed export (data/) here.")
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

    def handle(self, *args, slug, out=None, include_pilot=False, no_plan=False, margin=None, **options):
        from analysis import AnalysisInputError

        from spotlight_study.prereg.errors import PlanTamperedError

        study = study_for_command(slug)
        try:
            run = analysis_job_create(study=study, origin=AnalysisRun.Origin.COMMAND_LINE,
                                      include_pilot=include_pilot, use_plan=not no_plan,
                                      margin=margin, dispatch=False)
        except AnalysisInputError as exc:  # a margin outside [0, 1]: nothing recorded
            raise CommandError(f"The data cannot be analysed yet: {exc}", returncode=2) from None
        except AnalysisBusyError as exc:
            raise CommandError(str(exc)) from None
        try:
            results = analysis_job_run(job_id=run.pk, run_id=uuid.uuid4().hex, out_dir=out,
                                       reraise=True)
        except AnalysisInputError as exc:
            # Status 2, like ``python -m analysis``: the input cannot be analysed (as opposed to 1,
            # the command itself failing).
            raise CommandError(f"The data cannot be analysed yet: {exc}", returncode=2) from None
        except PlanTamperedError as exc:
            # The report cites the plan's hash: only the plan exactly as it was frozen may be cited.
            raise CommandError(
                f"{exc} Nothing was analysed (--no-plan analyses without citing a plan)."
            ) from None
        except OSError as exc:
            where = out if out is not None else "the analysis storage"
            raise CommandError(f"Cannot write to {where}: {exc.strerror or exc}") from None
        run.refresh_from_db()
        where = f"{out}/report.html, and " if out is not None else ""
        self.stdout.write(f"Report: {where}analysis run {run.pk} in the analysis storage "
                          f"(input SHA-256 {results['input_sha256']})")
        if include_pilot:
            self.stdout.write("  The data include the pilot participants.")
        if run.plan_sha256 and "preregistration" in results:
            count = results["preregistration"]["deviations"]["count"]
            self.stdout.write(f"  Preregistered plan v{run.plan_version} (SHA-256 {run.plan_sha256}): "
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
