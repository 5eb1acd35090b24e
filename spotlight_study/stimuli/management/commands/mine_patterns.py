"""``manage.py mine_patterns A_FILE [B_FILE] [--method premise|ctfidf] --out patterns.json``.

Mines token patterns between two groups of outputs without the UI or the database: A_FILE is
group 1, B_FILE group 2 (omit B_FILE when A_FILE holds both groups). Progress goes to stderr.
The output is the stable JSON shape documented in ``docs/stimuli.md``.
"""
from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from spotlight_study.stimuli.errors import MiningError, OutputImportError, TokenizerError
from spotlight_study.stimuli.importers import FORMATS, ImportOptions, read_outputs
from spotlight_study.stimuli.mining import METHODS, mine_ctfidf, mine_premise
from spotlight_study.stimuli.tokenize import pipeline_label, tokenize_texts


class ProgressBar:
    """A one-line text progress bar on a stream (stderr), e.g. ``tokenizing [#####-----] 50/100``."""

    def __init__(self, stream, label: str, total: int, width: int = 30):
        self.stream, self.label, self.total, self.width = stream, label, max(total, 1), width

    def update(self, done: int) -> None:
        """Redraw the bar at ``done`` of ``total``."""
        filled = int(self.width * done / self.total)
        self.stream.write(f"\r{self.label} [{'#' * filled}{'-' * (self.width - filled)}] {done}/{self.total}")
        self.stream.flush()

    def finish(self, note: str = "") -> None:
        """Draw the full bar and end the line."""
        self.update(self.total)
        self.stream.write(f" {note}\n")
        self.stream.flush()


class Command(BaseCommand):
    """``mine_patterns``: see the module docstring."""

    help = (
        "Mine token patterns between two groups of LLM outputs (A_FILE = group 1, B_FILE = group 2) "
        "with Premise or c-TF-IDF and write them as JSON."
    )

    def add_arguments(self, parser):
        parser.add_argument("a_file", help="Outputs of group 1 (or of both groups, without B_FILE).")
        parser.add_argument("b_file", nargs="?", help="Outputs of group 2.")
        parser.add_argument("--method", choices=METHODS, default="premise")
        parser.add_argument(
            "--format", choices=FORMATS, default="auto", help="Input format (default: by extension)."
        )
        parser.add_argument("--column", default="text", help="CSV column or JSONL field with the text.")
        parser.add_argument(
            "--group-column", default="", help="One CSV/JSONL file with both groups: the group column."
        )
        parser.add_argument("--group1-value", default="1")
        parser.add_argument("--group2-value", default="2")
        parser.add_argument(
            "--pipeline",
            default=None,
            help='spaCy pipeline (default: the STIMULI_SPACY_PIPELINE setting, else spacy.blank("en")).',
        )
        parser.add_argument("--fisher-p", type=float, default=0.01, help="Premise: Fisher p-value threshold.")
        parser.add_argument("--clause-max-overlap", type=float, default=0.05, help="Premise parameter.")
        parser.add_argument("--min-overlap", type=float, default=0.3, help="Premise parameter.")
        parser.add_argument("--top-k", type=int, default=25, help="c-TF-IDF: tokens per group.")
        parser.add_argument("--out", required=True, help="Where to write the patterns (JSON); '-' for stdout.")

    def handle(self, *args, **opts):
        err = self.stderr._out if hasattr(self.stderr, "_out") else sys.stderr
        options = ImportOptions(
            format=opts["format"],
            column=opts["column"],
            group_column=opts["group_column"],
            group1_value=opts["group1_value"],
            group2_value=opts["group2_value"],
            max_bytes=settings.STIMULI_MAX_UPLOAD_BYTES,
            max_lines=settings.STIMULI_MAX_UPLOAD_LINES,
        )
        try:
            file1 = (Path(opts["a_file"]).name, Path(opts["a_file"]).read_bytes())
            file2 = (Path(opts["b_file"]).name, Path(opts["b_file"]).read_bytes()) if opts["b_file"] else None
        except OSError as exc:
            raise CommandError(f"Cannot read {exc.filename}: {exc.strerror}.") from None
        try:
            groups = read_outputs(file1=file1, file2=file2, options=options)
        except OutputImportError as exc:
            raise CommandError(str(exc)) from None
        pipeline = settings.STIMULI_SPACY_PIPELINE if opts["pipeline"] is None else opts["pipeline"]
        texts = groups.group1 + groups.group2
        n1 = len(groups.group1)
        bar = ProgressBar(err, f"tokenizing with {pipeline_label(pipeline)}", len(texts))
        try:
            tokens = tokenize_texts(texts, pipeline=pipeline, on_progress=bar.update)
        except TokenizerError as exc:
            raise CommandError(str(exc)) from None
        bar.finish()
        g1 = [t for t in tokens[:n1] if t]
        g2 = [t for t in tokens[n1:] if t]
        if len(g1) + len(g2) < len(tokens):
            err.write(f"{len(tokens) - len(g1) - len(g2)} output(s) without any token left out.\n")

        start = time.perf_counter()
        try:
            if opts["method"] == "premise":
                results = self._with_ticker(
                    err,
                    "mining with Premise",
                    lambda: mine_premise(
                        g1,
                        g2,
                        fisher_p_value=opts["fisher_p"],
                        clause_max_overlap=opts["clause_max_overlap"],
                        min_overlap=opts["min_overlap"],
                    ),
                )
            else:
                results = mine_ctfidf(g1, g2, top_k=opts["top_k"])
        except MiningError as exc:
            raise CommandError(str(exc)) from None
        err.write(f"{len(results)} patterns ({opts['method']}) in {time.perf_counter() - start:.1f} s.\n")

        payload = json.dumps([r.to_dict() for r in results], ensure_ascii=False, indent=2)
        if opts["out"] == "-":
            self.stdout.write(payload)
        else:
            Path(opts["out"]).write_text(payload + "\n", encoding="utf-8")
            err.write(f"Wrote {opts['out']}.\n")

    @staticmethod
    def _with_ticker(stream, label: str, fn):
        """Run ``fn`` while showing the elapsed seconds (Premise reports no progress of its own)."""
        stop = threading.Event()
        start = time.perf_counter()

        def tick():
            while not stop.wait(0.5):
                stream.write(f"\r{label}... {time.perf_counter() - start:.0f} s")
                stream.flush()

        ticker = threading.Thread(target=tick, daemon=True)
        ticker.start()
        try:
            return fn()
        finally:
            stop.set()
            ticker.join()
            stream.write(f"\r{label}... {time.perf_counter() - start:.1f} s\n")
            stream.flush()
