"""The study builder's sections: which section of the builder edits which path of the study
file, and their titles. One table, so the overview and each section's page agree on where a
message of the validation belongs."""
from __future__ import annotations

import re

_RUN = (
    "completion_codes", "estimated_minutes", "maximum_minutes", "abandonment_timeout_minutes",
    "target_sample_size", "stop_at_target", "min_answer_chars", "max_answer_chars",
    "short_time_flag_seconds", "answer_flags", "failed_check_policy", "instruction_check_attempts",
    "holding_flags",
)
_TITLES = {
    "texts": "Title, language and texts",
    "run": "Completion codes, timing and answer rules",
    "conditions": "Conditions and cells",
    "training": "Training setting",
    "survey": "Survey",
    "annotation": "Annotation and codebook",
    "pages": "Inserted pages",
}


def section_keys(data: dict) -> list[str]:
    """The section keys of a draft, in the builder's order: one ``setting-<i>`` per main
    setting of ``data``."""
    settings = data.get("settings") if isinstance(data.get("settings"), list) else []
    return ["texts", "run", "conditions", "training", *(f"setting-{i}" for i in range(len(settings))),
            "survey", "annotation", "pages"]


def section_title(section: str, data: dict) -> str:
    """The heading of ``section`` (a main setting's with its key and title)."""
    match = re.match(r"^setting-(\d+)$", section)
    if match:
        settings = data.get("settings") or []
        index = int(match.group(1))
        s = settings[index] if index < len(settings) and isinstance(settings[index], dict) else {}
        return f"Main setting {index + 1}: {s.get('title') or s.get('key') or '(new)'}"
    return _TITLES.get(section, section)


def section_of(path: str, data: dict) -> str:
    """The section whose page shows the validation message at ``path`` (``"texts"`` for the
    top-level fields and the file as a whole)."""
    head = re.split(r"[.\[]", path, maxsplit=1)[0]
    if head == "training":
        return "training"
    if head == "settings":
        match = re.match(r"^settings\[(\d+)\]", path)
        return f"setting-{match.group(1)}" if match else "conditions"
    if head in _RUN:
        return "run"
    if head == "conditions":
        return "conditions"
    if head == "survey":
        return "survey"
    if head == "pages":
        return "pages"
    if head == "annotation":
        match = re.match(r"^annotation\.settings\.([^.\[]+)", path)
        if match:
            key = match.group(1)
            training = data.get("training") if isinstance(data.get("training"), dict) else {}
            if training.get("key") == key:
                return "training"
            for i, s in enumerate(data.get("settings") or []):
                if isinstance(s, dict) and s.get("key") == key:
                    return f"setting-{i}"
        return "annotation"
    return "texts"
