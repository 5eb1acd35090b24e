"""What a researcher enters in the study builder to build a given study file, section by
section: the form values of each section page, as plain ``{field name: value}`` mappings.

Used by the test client tests (posted as they are) and by the browser test (typed into the
fields of the same names). Formset rows are ``<prefix>-<i>-<field>``.
"""
from __future__ import annotations

from spotlight_study.studies.models import Condition


def _join(values) -> str:
    return ", ".join(str(v) for v in values or [])


def management(values: dict, prefixes: tuple[str, ...]) -> dict:
    """``values`` with the management form of each formset ``prefix`` (as many rows as given,
    at least 1), as the page's hidden fields send it."""
    out = dict(values)
    for prefix in prefixes:
        rows = {k.split("-")[1] for k in values if k.startswith(f"{prefix}-")}
        out.update({f"{prefix}-TOTAL_FORMS": str(max(len(rows), 1)), f"{prefix}-INITIAL_FORMS": "0"})
    return out


def texts_section(data: dict) -> dict:
    """The "texts" section's values."""
    return {k: data.get(k, "") for k in ("title", "status", "language", "consent_text", "instructions_text",
                                         "example_answer", "pattern_intro_text", "task_prompt")}


def run_section(data: dict) -> dict:
    """The "run" section's values (numbers the file leaves out stay empty: their defaults)."""
    codes = data["completion_codes"]
    out = {k: codes[k] for k in ("completed", "failed_instruction_check", "no_consent")}
    for name in ("estimated_minutes", "maximum_minutes", "abandonment_timeout_minutes", "target_sample_size",
                 "min_answer_chars", "max_answer_chars", "short_time_flag_seconds"):
        out[name] = str(data.get(name, ""))
    out["failed_check_policy"] = data.get("failed_check_policy", "continue_and_flag")
    out["instruction_check_attempts"] = str(data.get("instruction_check_attempts", 1))
    for name, value in (data.get("answer_flags") or {}).items():
        out[name] = str(value)
    return out


def setting_section(setting: dict, annotation: dict, *, training: bool) -> dict:
    """A setting's values: texts one a line, patterns as rows ``p-<i>-*`` and ``d-<i>-*``."""
    out = {
        "key": setting["key"], "title": setting["title"], "text_format": "lines",
        "group1": "\n".join(setting["group1"]), "group2": "\n".join(setting["group2"]),
        "target_description": setting.get("target_description", ""),
        "tags": _join(annotation.get("tags")), "surface_difference": annotation.get("surface_difference", ""),
    }
    if training:
        out["check_keywords"] = _join(setting["check_keywords"])
    for prefix, kind in (("p", "patterns"), ("d", "distractor_patterns")):
        for i, pattern in enumerate(setting.get(kind) or []):
            out[f"{prefix}-{i}-tokens"] = _join(pattern["tokens"])
            out[f"{prefix}-{i}-group"] = str(pattern["group"])
            if pattern.get("unchecked"):
                out[f"{prefix}-{i}-unchecked_reason"] = pattern["unchecked_reason"]
    return management(out, ("p",) if training else ("p", "d"))


def survey_section(survey: dict) -> dict:
    """The survey's values: scales one label a line, items as rows ``ci-<i>-*``, ``bi-<i>-*``."""
    out = {
        "likert_scale": "\n".join(survey["likert_scale"]),
        "frequency_scale": "\n".join(survey["frequency_scale"]),
        "background_intro": survey.get("background_intro", ""),
        "comment_prompt": survey["comment_prompt"],
    }
    for condition in Condition.values:
        out[f"intro_{condition}"] = survey["condition_intros"].get(condition, "")
    for prefix, name in (("ci", "condition_items"), ("bi", "background_items")):
        for i, item in enumerate(survey.get(name) or []):
            out[f"{prefix}-{i}-key"] = item["key"]
            out[f"{prefix}-{i}-text"] = item["text"]
            out[f"{prefix}-{i}-type"] = item.get("type", "")
            out[f"{prefix}-{i}-choices"] = "\n".join(item.get("labels") or item.get("options") or [])
            for key in ("min", "max", "test"):
                if key in item:
                    out[f"{prefix}-{i}-{key}"] = str(item[key])
    return management(out, ("ci", "bi"))


def annotation_section(annotation: dict) -> dict:
    """The annotation section's values, with a row ``cf-<i>-*`` per codebook field."""
    codebook = annotation.get("codebook") or {}
    out = {"annotators_per_item": str(annotation.get("annotators_per_item", "")),
           "reservation_minutes": str(annotation.get("reservation_minutes", "")),
           "outcome": codebook.get("outcome", ""),
           "success": "\n".join(f"{k}: {v}" for k, v in (codebook.get("success") or {}).items())}
    for i, field in enumerate(codebook.get("fields") or []):
        out.update({f"cf-{i}-key": field["key"], f"cf-{i}-label": field["label"], f"cf-{i}-type": field["type"],
                    f"cf-{i}-help": field.get("help", ""), f"cf-{i}-options": "\n".join(field.get("options") or []),
                    f"cf-{i}-applies_to": field.get("applies_to", "both")})
        for key in ("min", "max"):
            if key in field:
                out[f"cf-{i}-{key}"] = str(field[key])
        if field.get("required") is False:
            out[f"cf-{i}-optional"] = "on"
    out = management(out, ("cf",))
    if not codebook:
        out["cf-TOTAL_FORMS"] = "0"
    return out


def pages_section(pages: list) -> dict:
    """The inserted pages' values, by place."""
    out = {}
    for page in pages or []:
        out.update({f"{page['at']}_title": page["title"], f"{page['at']}_text": page["text"],
                    f"{page['at']}_min_seconds": str(page.get("min_seconds", ""))})
    return out


def builder_steps(data: dict) -> list[tuple[str, dict, dict]]:
    """``[(section, values, checkboxes)]`` that build ``data`` in a new draft, in order, main
    settings as ``setting-<i>`` (each added first). ``checkboxes`` maps a multiple-choice field
    to the values to tick."""
    per_setting = (data.get("annotation") or {}).get("settings") or {}
    steps = [
        ("texts", texts_section(data), {}),
        ("run", run_section(data), {"holding_flags": data.get("holding_flags"), "stop_at_target": data.get("stop_at_target", False)}),
        ("conditions", {}, {"conditions": list(data["conditions"])}),
        ("training", setting_section(data["training"], per_setting.get(data["training"]["key"], {}), training=True), {}),
    ]
    for i, setting in enumerate(data["settings"]):
        steps.append((f"setting-{i}", setting_section(setting, per_setting.get(setting["key"], {}), training=False), {}))
    steps.append(("survey", survey_section(data["survey"]), {}))
    steps.append(("annotation", annotation_section(data.get("annotation") or {}), {}))
    if data.get("pages"):
        steps.append(("pages", pages_section(data["pages"]), {}))
    return steps
