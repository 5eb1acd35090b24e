"""Writes of the stimuli app: importing outputs, creating, cancelling and resuming jobs, building
settings.

Jobs are created here and handed to :func:`~.jobs.runner.job_dispatch` after commit; what a job
runner then executes (the generation and mining runs) is in :mod:`.jobs`.
"""
from __future__ import annotations

import random
import secrets
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max

from spotlight_study.studies.definition_check import problem_lines, problems_added, stored_definition_problems
from spotlight_study.studies.models import Setting, Study, TokenPattern

from .errors import SettingBuildError, StimuliError
from .importers import ImportedGroups, ImportOptions, check_file, check_size, read_outputs
from .jobs.runner import job_dispatch
from .mining import premise_problem_here
from .jobs.state import job_cancel, job_reopen
from .provenance import provenance_record
from .models import (
    ACTIVE_STATUSES, GenerationJob, ImportJob, JobStatus, MinedPattern, MiningJob, Output, SettingSource,
    StimulusSet,
)
from .tasks import GENERATION, IMPORT, KINDS, MINING

# Same limits as a study file (spotlight_study/studies/schema.py), so that a built setting could
# also be written as a study file.
MAX_TEXT_CHARS = 2000
MAX_TEXTS_PER_GROUP = 100
MAX_PATTERN_TOKENS = 20


# --- importing ------------------------------------------------------------------------------


@transaction.atomic
def stimulus_set_import(
    *, title: str, groups: ImportedGroups, created_by=None
) -> StimulusSet:
    """Store two groups of outputs read by :mod:`spotlight_study.stimuli.importers`.

    Returns the new :class:`StimulusSet`; ``Output.index`` is the position in each group.
    Raises ``ValidationError`` for a bad title.
    """
    stimulus_set = StimulusSet(
        title=title,
        source=StimulusSet.Source.IMPORTED,
        group1_label=groups.group1_label,
        group2_label=groups.group2_label,
        source_detail=groups.detail[:500],
        created_by=created_by,
    )
    stimulus_set.full_clean()
    stimulus_set.save()
    Output.objects.bulk_create(
        [
            Output(stimulus_set=stimulus_set, group=group, index=i, text=text)
            for group, texts in ((1, groups.group1), (2, groups.group2))
            for i, text in enumerate(texts)
        ],
        batch_size=500,
    )
    return stimulus_set


def _read_upload(upload, *, max_bytes: int) -> tuple[str, bytes]:
    """``(name, bytes)`` of an uploaded file or a path, refusing it before reading if too big."""
    if isinstance(upload, (str, Path)):
        path = Path(upload)
        check_size(name=path.name, size=path.stat().st_size, max_bytes=max_bytes)
        return path.name, path.read_bytes()
    name = Path(upload.name or "upload").name
    check_size(name=name, size=upload.size, max_bytes=max_bytes)
    return name, upload.read()


def stimulus_set_import_files(
    *,
    title: str,
    file1: Any,
    file2: Any | None,
    options: ImportOptions | None = None,
    created_by=None,
) -> StimulusSet:
    """Read and store outputs from one or two files (uploads or paths).

    Parameters
    ----------
    title : str
    file1, file2 : UploadedFile or path
        Group 1 and group 2; ``file2`` is ``None`` when ``file1`` holds both groups.
    options : ImportOptions, optional
        Defaults to ``ImportOptions(max_bytes=settings.STIMULI_MAX_UPLOAD_BYTES)``.

    Raises
    ------
    OutputImportError
        For any problem with the files (nothing is stored).
    """
    options = options or _default_options()
    first = _read_upload(file1, max_bytes=options.max_bytes)
    second = _read_upload(file2, max_bytes=options.max_bytes) if file2 is not None else None
    groups = read_outputs(file1=first, file2=second, options=options)
    return stimulus_set_import(title=title, groups=groups, created_by=created_by)


def _default_options() -> ImportOptions:
    return ImportOptions(
        max_bytes=settings.STIMULI_MAX_UPLOAD_BYTES, max_lines=settings.STIMULI_MAX_UPLOAD_LINES
    )


def stimulus_set_import_start(
    *,
    title: str,
    file1: Any,
    file2: Any | None,
    options: ImportOptions | None = None,
    created_by=None,
) -> tuple[StimulusSet, ImportJob | None]:
    """Import outputs from uploaded files: small files now, large ones in a background job.

    Each file's size and line count are checked first (``options.max_bytes``,
    ``options.max_lines``: ``STIMULI_MAX_UPLOAD_BYTES`` and ``STIMULI_MAX_UPLOAD_LINES``) before
    anything is parsed. Files of at most ``STIMULI_INLINE_IMPORT_BYTES`` together are read and
    stored at once, as :func:`stimulus_set_import_files` does. Larger ones are kept in an
    :class:`~.models.ImportJob` on a new, empty stimulus set and read by the job runner after
    commit (:mod:`.jobs.import_run`), so no request parses a large file.

    Returns
    -------
    (StimulusSet, ImportJob or None)
        The set, and its import job if the files are read in the background.

    Raises
    ------
    OutputImportError
        A file over a limit, or (small files) any problem with the files; nothing is stored.
    ValidationError
        For a bad title.
    """
    options = options or _default_options()
    first = _read_upload(file1, max_bytes=options.max_bytes)
    second = _read_upload(file2, max_bytes=options.max_bytes) if file2 is not None else None
    for name, data in [first] + ([second] if second else []):
        check_file(name=name, data=data, options=options)
    if len(first[1]) + len(second[1] if second else b"") <= settings.STIMULI_INLINE_IMPORT_BYTES:
        groups = read_outputs(file1=first, file2=second, options=options)
        return stimulus_set_import(title=title, groups=groups, created_by=created_by), None
    with transaction.atomic():
        stimulus_set = StimulusSet(
            title=title,
            source=StimulusSet.Source.IMPORTED,
            source_detail=(f"{first[0]} | {second[0]}" if second else f"{first[0]} (both groups)")[:500],
            created_by=created_by,
        )
        stimulus_set.full_clean()
        stimulus_set.save()
        job = ImportJob.objects.create(
            stimulus_set=stimulus_set,
            file1_name=first[0][:255],
            file1_data=first[1],
            file2_name=second[0][:255] if second else "",
            file2_data=second[1] if second else None,
            options=asdict(options),
            stage="read",
            total=1,
            created_by=created_by,
        )
        job_dispatch(IMPORT, job_id=job.pk)
    return stimulus_set, job



# --- jobs ----------------------------------------------------------------------------------


def job_resume(*, kind: str, job_id: int):
    """Queue a failed, cancelled or stale job of ``kind`` (``"generation"`` or ``"mining"``)
    again; it continues where it stopped.

    Raises
    ------
    JobStateError
        If the job succeeded, or is still running and reporting.
    ValueError
        For an unknown kind.
    """
    try:
        job_kind = KINDS[kind]
    except KeyError:
        raise ValueError(f"Unknown job kind '{kind}'.") from None
    with transaction.atomic():
        job = job_reopen(job_kind.model, job_id=job_id)
        job_dispatch(job_kind, job_id=job.pk)
    return job


# --- generation ----------------------------------------------------------------------------


def generation_job_create(
    *,
    title: str,
    prompt_group1: str,
    prompt_group2: str,
    model: str,
    n_per_group: int,
    temperature: float = 1.0,
    top_p: float = 1.0,
    max_tokens: int = 256,
    seed: int | None = None,
    created_by=None,
) -> GenerationJob:
    """Create a stimulus set and a generation job for it, and queue the job after commit.

    ``n_per_group`` outputs are generated per group from one user message each
    (``prompt_group1``, ``prompt_group2``) on the server at ``settings.OPENAI_BASE_URL``.

    Raises ``ValidationError`` naming the bad field.
    """
    with transaction.atomic():
        stimulus_set = StimulusSet(
            title=title,
            source=StimulusSet.Source.GENERATED,
            group1_label=prompt_group1,
            group2_label=prompt_group2,
            source_detail=f"{model} at {settings.OPENAI_BASE_URL}"[:500],
            created_by=created_by,
        )
        stimulus_set.full_clean()
        stimulus_set.save()
        job = GenerationJob(
            stimulus_set=stimulus_set,
            base_url=settings.OPENAI_BASE_URL,
            model=model,
            prompt_group1=prompt_group1,
            prompt_group2=prompt_group2,
            n_per_group=n_per_group,
            temperature=temperature,
            top_p=top_p,
            max_tokens=max_tokens,
            seed=seed,
            stage="generate",
            total=2 * n_per_group if n_per_group and n_per_group > 0 else 0,
            created_by=created_by,
        )
        job.full_clean()
        job.save()
        job_dispatch(GENERATION, job_id=job.pk)
    return job


def generation_job_cancel(*, job_id: int) -> GenerationJob:
    """Cancel a queued or running generation job. Outputs stored so far are kept.

    A running job stops at its next report (requests already sent are completed and stored).
    Raises :class:`~.errors.JobStateError` if the job has finished.
    """
    return job_cancel(GenerationJob, job_id=job_id)


# --- mining --------------------------------------------------------------------------------

PREMISE_DEFAULTS = {"fisher_p_value": 0.01, "clause_max_overlap": 0.05, "min_overlap": 0.3}
CTFIDF_DEFAULTS = {"top_k": 25}


def _mining_params(method: str, params: dict | None) -> dict:
    params = dict(params or {})
    if method == MiningJob.Method.PREMISE:
        clean = {k: float(params.get(k, v)) for k, v in PREMISE_DEFAULTS.items()}
        if not 0 < clean["fisher_p_value"] <= 1:
            raise ValidationError({"fisher_p_value": "Must be in (0, 1]."})
        for k in ("clause_max_overlap", "min_overlap"):
            if not 0 <= clean[k] <= 1:
                raise ValidationError({k: "Must be between 0 and 1."})
        return clean
    if method == MiningJob.Method.CTFIDF:
        top_k = int(params.get("top_k", CTFIDF_DEFAULTS["top_k"]))
        if not 1 <= top_k <= 1000:
            raise ValidationError({"top_k": "Must be between 1 and 1000."})
        return {"top_k": top_k}
    raise ValidationError({"method": f"Unknown method '{method}'."})


def mining_job_create(
    *,
    stimulus_set: StimulusSet,
    method: str = MiningJob.Method.PREMISE,
    pipeline: str | None = None,
    params: dict | None = None,
    created_by=None,
) -> MiningJob:
    """Queue a mining job on a stimulus set (after commit).

    ``pipeline`` names the spaCy pipeline (``None``: the ``STIMULI_SPACY_PIPELINE`` setting; empty:
    ``spacy.blank("en")``). ``params`` are the
    method's parameters (defaults in ``PREMISE_DEFAULTS``/``CTFIDF_DEFAULTS``).

    Raises
    ------
    ValidationError
        For bad parameters.
    StimuliError
        If the set has no outputs in a group, or its outputs are still being generated; for
        Premise on a platform it cannot run on (the message names c-TF-IDF), before any job.
    """
    clean = _mining_params(method, params)
    problem = premise_problem_here() if method == MiningJob.Method.PREMISE else None
    if problem:
        raise StimuliError(problem)
    with transaction.atomic():
        generation_job = GenerationJob.objects.filter(stimulus_set=stimulus_set).first()
        if generation_job is not None and generation_job.status in ACTIVE_STATUSES:
            raise StimuliError("The outputs are still being generated; mine them when generation has finished.")
        import_status = ImportJob.objects.filter(stimulus_set=stimulus_set).values_list("status", flat=True).first()
        if import_status is not None and import_status != JobStatus.SUCCEEDED:
            raise StimuliError("The outputs are still being imported (or their import failed); mine them "
                               "once the import has succeeded.")
        counts = {
            g: Output.objects.filter(stimulus_set=stimulus_set, group=g).count() for g in (1, 2)
        }
        for g, count in counts.items():
            if count == 0:
                raise StimuliError(f"Group {g} has no outputs to mine.")
        job = MiningJob(
            stimulus_set=stimulus_set,
            method=method,
            pipeline=(settings.STIMULI_SPACY_PIPELINE if pipeline is None else pipeline).strip(),
            params=clean,
            stage="tokenize",
            total=counts[1] + counts[2],
            created_by=created_by,
        )
        job.full_clean()
        job.save()
        job_dispatch(MINING, job_id=job.pk)
    return job

# --- building a setting --------------------------------------------------------------------


@dataclass(frozen=True)
class SettingChoice:
    """What a researcher chose for a new setting (see :func:`setting_create_from_patterns`)."""

    key: str
    title: str
    target_pattern_id: int
    distractor_pattern_ids: tuple[int, ...] = ()
    target_description: str = ""
    selection: str = SettingSource.Selection.RANDOM
    n_per_group: int = 10
    seed: int | None = None
    max_chars: int | None = None
    picked_output_ids: tuple[int, ...] = ()


def _sample_outputs(outputs: list[Output], *, choice: SettingChoice, seed: int) -> dict[int, list[Output]]:
    limit = min(choice.max_chars or MAX_TEXT_CHARS, MAX_TEXT_CHARS)
    rng = random.Random(seed)
    chosen = {}
    for group in (1, 2):
        eligible = [o for o in outputs if o.group == group and o.text.strip() and len(o.text) <= limit]
        if len(eligible) < choice.n_per_group:
            raise SettingBuildError(
                f"Group {group} has only {len(eligible)} outputs of at most {limit} characters; "
                f"{choice.n_per_group} are needed."
            )
        chosen[group] = rng.sample(eligible, choice.n_per_group)
    return chosen


def _picked_outputs(outputs: list[Output], *, choice: SettingChoice) -> dict[int, list[Output]]:
    by_id = {o.pk: o for o in outputs}
    unknown = [pk for pk in choice.picked_output_ids if pk not in by_id]
    if unknown:
        raise SettingBuildError("Some picked outputs do not belong to this stimulus set.")
    limit = min(choice.max_chars or MAX_TEXT_CHARS, MAX_TEXT_CHARS)
    chosen = {1: [], 2: []}
    for pk in dict.fromkeys(choice.picked_output_ids):
        output = by_id[pk]
        if not output.text.strip():
            raise SettingBuildError(
                f"Output {output.index + 1} of group {output.group} is empty; a setting shows no empty text."
            )
        if len(output.text) > limit:
            raise SettingBuildError(
                f"Output {output.index + 1} of group {output.group} has {len(output.text)} "
                f"characters; the limit is {limit}."
            )
        chosen[output.group].append(output)
    return chosen


def setting_create_from_patterns(
    *, mining_job: MiningJob, study: Study, choice: SettingChoice, created_by=None
) -> Setting:
    """Add a main setting to ``study`` from a mining job's outputs and patterns.

    The target pattern (and the distractors, shown only in the ``pattern_with_distractors``
    condition) become the setting's token patterns: the tokens of all clauses, with the
    pattern's group. The texts are ``choice.n_per_group`` outputs per group sampled with
    ``random.Random(seed)`` (a new seed is drawn and recorded if none is given), or the outputs
    picked by hand. Outputs longer than ``max_chars`` (and than 2,000 characters, the study-file
    limit) and empty outputs are not used; texts are stripped of surrounding whitespace, as a
    study file's are. A :class:`SettingSource` records all of it, and the setting's
    ``provenance`` holds the same record in the study file's form
    (:func:`~.provenance.provenance_record`), for ``export_study``.

    Raises
    ------
    SettingBuildError
        If the study has participants (a new main setting changes its counterbalancing cells,
        and the cells of people who took part must not change), the key is taken, the mining job
        has not succeeded, a pattern is not from this job, or there are too few outputs; or
        if the study with the new setting would break a rule of the study file that it kept
        before (:func:`~spotlight_study.studies.definition_check.stored_definition_problems`,
        e.g. a pattern whose group claim fails on the sampled texts). Nothing is saved then.
    ValidationError
        For a bad key or title.
    """
    with transaction.atomic():
        study = Study.objects.select_for_update().get(pk=study.pk)
        _check_study_open(study, choice=choice)
        before = stored_definition_problems(study)
        if mining_job.status != JobStatus.SUCCEEDED:
            raise SettingBuildError("The mining job has not finished successfully.")
        ids = [choice.target_pattern_id, *choice.distractor_pattern_ids]
        patterns = _chosen_patterns(mining_job, ids)
        outputs = list(
            Output.objects.filter(stimulus_set_id=mining_job.stimulus_set_id).order_by("group", "index")
        )
        chosen, seed = _chosen_outputs(outputs, choice=choice)

        last = study.settings.filter(kind=Setting.Kind.MAIN).aggregate(m=Max("position"))["m"]
        setting = Setting(
            study=study,
            key=choice.key,
            kind=Setting.Kind.MAIN,
            position=(last or 0) + 1,
            title=choice.title,
            # Stripped as a study file's texts are, so that export_study and import_study
            # give back exactly these texts.
            group1_texts=[o.text.strip() for o in chosen[1]],
            group2_texts=[o.text.strip() for o in chosen[2]],
            target_description=choice.target_description,
        )
        setting.full_clean()
        setting.save()
        TokenPattern.objects.bulk_create(
            TokenPattern(
                setting=setting,
                tokens=patterns[pk].tokens,
                group=patterns[pk].group,
                is_distractor=i > 0,
                position=i,
            )
            for i, pk in enumerate(ids)
        )
        source = SettingSource.objects.create(
            setting=setting,
            mining_job=mining_job,
            target_pattern=patterns[choice.target_pattern_id],
            distractor_pattern_ids=list(choice.distractor_pattern_ids),
            selection=choice.selection,
            seed=seed,
            max_chars=choice.max_chars,
            group1_output_ids=[o.pk for o in chosen[1]],
            group2_output_ids=[o.pk for o in chosen[2]],
            created_by=created_by,
        )
        # The record in the study file's form, so that export_study writes it and a copy of the
        # study (import_study --as-slug) keeps it.
        setting.provenance = provenance_record(source)
        setting.save(update_fields=["provenance"])
        # The one gate of a definition: the study with this setting must be one import_study
        # accepts (e.g. the pattern's group claim must hold on the sampled texts).
        added = problems_added(before, stored_definition_problems(Study.objects.get(pk=study.pk)))
        if added:
            raise SettingBuildError(
                "The study with this setting would not pass the study file's checks, so it was "
                "not added: " + " ".join(problem_lines(added))
                + " Draw another sample (another seed) or pick other outputs."
            )
    return setting


def _check_study_open(study: Study, *, choice: SettingChoice) -> None:
    """Raise :class:`SettingBuildError` unless ``study`` (locked) can take a new main setting
    with ``choice.key``: nobody has taken it, the key is free, fewer than 12 main settings."""
    if study.participants.exists():
        if study.participants.filter(is_pilot=False).exists():
            hint = "Add the setting to a study nobody has taken yet."
        else:
            hint = (
                "They are all pilot participants: delete the pilot "
                f"(`manage.py pilot {study.slug} --delete` or the researcher page), then build."
            )
        raise SettingBuildError(
            f"Study '{study.slug}' already has participants, so its settings cannot change: a new "
            f"main setting would change the counterbalancing cells they were assigned to. {hint}"
        )
    if study.settings.filter(key=choice.key).exists():
        raise SettingBuildError(f"Study '{study.slug}' already has a setting with the key '{choice.key}'.")
    if study.settings.filter(kind=Setting.Kind.MAIN).count() >= 12:
        raise SettingBuildError("A study can have at most 12 main settings.")


def _chosen_patterns(mining_job: MiningJob, ids: list[int]) -> dict[int, MinedPattern]:
    """The patterns ``ids`` (target first, then distractors) by id; raises
    :class:`SettingBuildError` for a repeated id, a pattern of another job or too many tokens."""
    if len(set(ids)) != len(ids):
        raise SettingBuildError(
            "The target pattern cannot also be a distractor, and distractors must not repeat."
        )
    patterns = {p.pk: p for p in mining_job.patterns.filter(pk__in=ids)}
    if len(patterns) != len(ids):
        raise SettingBuildError("Some chosen patterns are not from this mining job.")
    for p in patterns.values():
        if len(p.tokens) > MAX_PATTERN_TOKENS:
            raise SettingBuildError(f"The pattern {p.clauses_text} has more than {MAX_PATTERN_TOKENS} tokens.")
    return patterns


def _chosen_outputs(
    outputs: list[Output], *, choice: SettingChoice
) -> tuple[dict[int, list[Output]], int | None]:
    """``({group: outputs}, seed)`` as ``choice.selection`` says (``seed`` is ``None`` for
    outputs picked by hand); raises :class:`SettingBuildError` for an empty or too large group."""
    seed = None
    if choice.selection == SettingSource.Selection.RANDOM:
        if not 1 <= choice.n_per_group <= MAX_TEXTS_PER_GROUP:
            raise SettingBuildError(f"Outputs per group must be between 1 and {MAX_TEXTS_PER_GROUP}.")
        seed = choice.seed if choice.seed is not None else secrets.randbelow(2**31)
        chosen = _sample_outputs(outputs, choice=choice, seed=seed)
    elif choice.selection == SettingSource.Selection.HAND:
        chosen = _picked_outputs(outputs, choice=choice)
    else:
        raise SettingBuildError(f"Unknown selection '{choice.selection}'.")
    for group in (1, 2):
        if not chosen[group]:
            raise SettingBuildError(f"Pick at least one output of group {group}.")
        if len(chosen[group]) > MAX_TEXTS_PER_GROUP:
            raise SettingBuildError(f"Pick at most {MAX_TEXTS_PER_GROUP} outputs of group {group}.")
    return chosen, seed


__all__ = [
    "SettingChoice",
    "stimulus_set_import",
    "stimulus_set_import_files",
    "stimulus_set_import_start",
    "generation_job_create",
    "generation_job_cancel",
    "mining_job_create",
    "job_resume",
    "setting_create_from_patterns",
]
