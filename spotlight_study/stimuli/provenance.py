"""The provenance record of a setting built from mined patterns, in the study file's form.

:func:`provenance_record` turns a :class:`~.models.SettingSource` (and what it points to) into the
``provenance`` mapping of a study file (``spotlight_study/studies/schema_provenance.py``), which is
stored on the setting (``Setting.provenance``) so that ``export_study`` can write it and a copy of
the study keeps it. It reads model fields only (no methods or properties), so the data migration
that fills the record of settings built before it existed can call it with historical models.
"""
from __future__ import annotations

from typing import Any


def _mined_pattern(pattern) -> dict[str, Any]:
    return {
        "rank": pattern.rank,
        "clauses": [list(clause) for clause in pattern.clauses],
        "group": pattern.group,
        "count_group1": pattern.count_group1,
        "count_group2": pattern.count_group2,
        "mdl_gain": pattern.mdl_gain,
        "fisher_p": pattern.fisher_p,
        "score": pattern.score,
    }


def _generation(stimulus_set, generation_job_model) -> dict[str, Any] | None:
    job = generation_job_model.objects.filter(stimulus_set_id=stimulus_set.pk).first()
    if job is None:
        return None
    return {
        "base_url": job.base_url,
        "model": job.model,
        "prompt_group1": job.prompt_group1,
        "prompt_group2": job.prompt_group2,
        "n_per_group": job.n_per_group,
        "temperature": job.temperature,
        "top_p": job.top_p,
        "max_tokens": job.max_tokens,
        "seed": job.seed,
    }


def provenance_record(source, *, models: Any = None) -> dict[str, Any]:
    """The ``provenance`` mapping of the setting ``source`` describes.

    Parameters
    ----------
    source : SettingSource
        Saved, with its mining job, target pattern, distractor pattern ids and output ids.
    models : object, optional
        Something with ``Output``, ``MinedPattern`` and ``GenerationJob`` attributes: the stimuli
        models (the default) or a migration's historical models.

    Returns
    -------
    dict
        ``stimulus_set``, ``generation`` (None for imported outputs), ``mining``,
        ``target_pattern``, ``distractor_patterns``, ``selection``, ``seed``, ``max_chars``,
        ``group1_outputs`` and ``group2_outputs`` (0-based output indices in setting order).
    """
    if models is None:
        from . import models
    job = source.mining_job
    stimulus_set = job.stimulus_set
    index_of = dict(
        models.Output.objects.filter(
            pk__in=[*source.group1_output_ids, *source.group2_output_ids]
        ).values_list("pk", "index")
    )
    distractors = {
        p.pk: p for p in models.MinedPattern.objects.filter(pk__in=source.distractor_pattern_ids)
    }
    generation = _generation(stimulus_set, models.GenerationJob)
    return {
        "stimulus_set": {
            "title": stimulus_set.title,
            "source": stimulus_set.source,
            "group1_label": stimulus_set.group1_label,
            "group2_label": stimulus_set.group2_label,
            "source_detail": stimulus_set.source_detail,
        },
        "generation": generation,
        "mining": {
            "method": job.method,
            "pipeline": job.pipeline,
            "params": dict(job.params),
            "n_group1": job.n_group1,
            "n_group2": job.n_group2,
            "n_excluded": job.n_excluded,
        },
        "target_pattern": _mined_pattern(source.target_pattern),
        "distractor_patterns": [
            _mined_pattern(distractors[pk]) for pk in source.distractor_pattern_ids
        ],
        "selection": source.selection,
        "seed": source.seed,
        "max_chars": source.max_chars,
        "group1_outputs": [index_of[pk] for pk in source.group1_output_ids],
        "group2_outputs": [index_of[pk] for pk in source.group2_output_ids],
    }
