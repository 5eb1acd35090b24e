"""The study builder's forms: each edits one section of a draft's study file (a mapping).

The forms judge nothing themselves: every field is optional text, read into the study file as
entered (a number that is not a number stays text), so that the one validation of a study file
(:func:`spotlight_study.studies.schema.validate_study_data`) gives the message, the same as
``import_study`` would. Each form field knows its path in the file (``completion_codes.no_consent``,
``settings[0].patterns[1]``), and the builder shows each of the validation's messages next to
the field of its path (:func:`attach_problems`).

A form reads the section from the draft (:meth:`SectionForm.initial_from`) and writes it back
into a copy of the draft (:meth:`SectionForm.apply`); a value left empty leaves the key out, so
the import's default applies.
"""
from __future__ import annotations

from typing import Any

from django import forms

from spotlight_study.studies.codebook import APPLIES_TO, FIELD_TYPES
from spotlight_study.studies.models import Condition, Study
from spotlight_study.studies.pages import PAGE_POSITIONS
from spotlight_study.studies.quality_flags import default_holding_flags, known_flag_keys
from spotlight_study.studies.schema_survey import NUMBER_TESTS, SURVEY_ITEM_TYPES

from .builder_values import (  # noqa: F401 (the views read texts and words through this module)
    TEXT_SEPARATOR,
    Text,
    lines,
    number_or_text,
    texts_box,
    texts_format,
    texts_from,
    uploaded_texts,
    words,
)

LONG = forms.Textarea(attrs={"rows": 6})
SHORT = forms.Textarea(attrs={"rows": 3})


class SectionForm(forms.Form):
    """A form of one section. ``paths`` maps a form field to its path in the study file."""

    paths: dict[str, str] = {}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.problems: dict[str, list[str]] = {}
        for field in self.fields.values():
            field.required = False

    def field_path(self, name: str) -> str | None:
        """The study-file path of the form field ``name`` (``None``: it has none)."""
        return self.paths.get(name)


def _put(data: dict, key: str, value: Any) -> None:
    if value is None or value == "" or value == []:
        data.pop(key, None)
    else:
        data[key] = value


class StudyTextsForm(SectionForm):
    """Title, status, language and the participant pages' texts."""

    title = Text()
    status = forms.ChoiceField(choices=Study.Status.choices)
    language = Text(help_text="A code such as en, de, es or fr: the participant pages' language.")
    consent_text = Text(widget=LONG)
    instructions_text = Text(widget=LONG)
    example_answer = Text(widget=SHORT)
    pattern_intro_text = Text(widget=LONG)
    task_prompt = Text(widget=SHORT, help_text="Empty: the platform's prompt in the study's language.")
    paths = {name: name for name in ("title", "status", "language", "consent_text", "instructions_text",
                                     "example_answer", "pattern_intro_text", "task_prompt")}

    @staticmethod
    def initial_from(data: dict) -> dict:
        """The form's initial values from a draft's study file."""
        return {name: data.get(name, "") for name in StudyTextsForm.paths}

    def apply(self, data: dict) -> None:
        """Write the cleaned input into ``data`` (a copy of the draft's file)."""
        for name in self.paths:
            _put(data, name, self.cleaned_data[name].strip() if name in ("title", "language") else self.cleaned_data[name])


ANSWER_FLAGS = (
    ("typed_chars_per_minute_max", True), ("inserted_without_typing_share", False),
    ("copied_from_shown_texts_share", False), ("near_duplicate_similarity", True),
    ("away_before_paste_seconds", True),
)
NUMBERS = ("estimated_minutes", "maximum_minutes", "abandonment_timeout_minutes", "target_sample_size",
           "min_answer_chars", "max_answer_chars", "short_time_flag_seconds")
CODES = ("completed", "failed_instruction_check", "no_consent")


class RunForm(SectionForm):
    """Completion codes, times, sample size, ``stop_at_target``, answer rules, the review's
    holding flags and the answer-quality thresholds. An empty number takes the import's default."""

    completed = Text(label="Completion code: completed")
    failed_instruction_check = Text(label="Completion code: failed instruction check")
    no_consent = Text(label="Completion code: no consent")
    estimated_minutes = Text(label="Estimated minutes")
    maximum_minutes = Text(label="Maximum minutes")
    abandonment_timeout_minutes = Text(label="Abandonment timeout (minutes)")
    target_sample_size = Text(label="Target sample size")
    stop_at_target = forms.BooleanField(label="Stop at the target (later arrivals see 'this study is full')")
    min_answer_chars = Text(label="Minimum answer length (characters)", help_text="Empty: 1.")
    max_answer_chars = Text(label="Maximum answer length (characters)", help_text="Empty: 5000.")
    short_time_flag_seconds = Text(label="Flag answers faster than (seconds)", help_text="Empty: 20.")
    failed_check_policy = forms.ChoiceField(choices=Study.FailedCheckPolicy.choices)
    instruction_check_attempts = forms.ChoiceField(choices=[("1", "1 attempt"), ("2", "2 attempts")])
    holding_flags = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, label="Hold for review on these flags")
    typed_chars_per_minute_max = Text(help_text="Empty: 1500.")
    inserted_without_typing_share = Text(help_text="Empty: 0.3.")
    copied_from_shown_texts_share = Text(help_text="Empty: 0.5.")
    near_duplicate_similarity = Text(help_text="Empty: 90.")
    away_before_paste_seconds = Text(help_text="Empty: 3.")
    paths = {
        **{c: f"completion_codes.{c}" for c in CODES},
        **{n: n for n in NUMBERS},
        **{n: n for n in ("stop_at_target", "failed_check_policy", "instruction_check_attempts", "holding_flags")},
        **{n: f"answer_flags.{n}" for n, _ in ANSWER_FLAGS},
    }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["holding_flags"].choices = [(k, k) for k in known_flag_keys()]

    @staticmethod
    def initial_from(data: dict) -> dict:
        """The form's initial values from a draft's study file."""
        codes = data.get("completion_codes") or {}
        flags = data.get("answer_flags") or {}
        initial = {c: codes.get(c, "") for c in CODES}
        initial.update({n: data.get(n, "") for n in NUMBERS})
        initial.update({n: flags.get(n, "") for n, _ in ANSWER_FLAGS})
        initial["stop_at_target"] = bool(data.get("stop_at_target"))
        initial["failed_check_policy"] = data.get("failed_check_policy", Study.FailedCheckPolicy.CONTINUE_AND_FLAG)
        initial["instruction_check_attempts"] = str(data.get("instruction_check_attempts", 1))
        initial["holding_flags"] = data.get("holding_flags", default_holding_flags())
        return initial

    def apply(self, data: dict) -> None:
        """Write the cleaned input into ``data`` (a copy of the draft's file)."""
        c = self.cleaned_data
        data["completion_codes"] = {code: c[code].strip() for code in CODES}
        for name in NUMBERS:
            _put(data, name, number_or_text(c[name]))
        data["stop_at_target"] = bool(c["stop_at_target"])
        data["failed_check_policy"] = c["failed_check_policy"] or Study.FailedCheckPolicy.CONTINUE_AND_FLAG
        data["instruction_check_attempts"] = int(c["instruction_check_attempts"] or 1)
        data["holding_flags"] = list(c["holding_flags"])
        flags = {n: number_or_text(c[n], integer=integer) for n, integer in ANSWER_FLAGS}
        _put(data, "answer_flags", {n: v for n, v in flags.items() if v is not None} or None)


class ConditionsForm(SectionForm):
    """The conditions of the main settings; the page shows the cells they make."""

    conditions = forms.MultipleChoiceField(choices=Condition.choices, widget=forms.CheckboxSelectMultiple)
    paths = {"conditions": "conditions"}

    @staticmethod
    def initial_from(data: dict) -> dict:
        """The form's initial values from a draft's study file."""
        return {"conditions": list(data.get("conditions") or [])}

    def apply(self, data: dict) -> None:
        """Write the cleaned input into ``data`` (a copy of the draft's file)."""
        chosen = set(self.cleaned_data["conditions"])
        data["conditions"] = [c for c in Condition.values if c in chosen]


FORMAT_CHOICES = [("lines", "One text a line"), ("blocks", f"Texts separated by a line holding only {TEXT_SEPARATOR}")]


class SettingForm(SectionForm):
    """One setting: key, title, the two groups (typed, pasted or uploaded), the target
    description, and its annotation tags and surface difference; the training setting also has
    its instruction-check keywords. Its patterns are :class:`PatternForm` rows."""

    key = Text()
    title = Text()
    text_format = forms.ChoiceField(choices=FORMAT_CHOICES, widget=forms.RadioSelect, label="How the texts are separated")
    group1 = Text(widget=forms.Textarea(attrs={"rows": 10}), label="Group 1 texts")
    group1_file = forms.FileField(label="Or upload group 1 (.txt a text a line, .csv, .json list)")
    group2 = Text(widget=forms.Textarea(attrs={"rows": 10}), label="Group 2 texts")
    group2_file = forms.FileField(label="Or upload group 2 (.txt a text a line, .csv, .json list)")
    stimulus_set = forms.ChoiceField(label="Or take both groups from a stimulus set of the Stimuli pages")
    stimulus_per_group = Text(label="Texts per group taken from the stimulus set (the first ones)", help_text="Empty: 10.")
    target_description = Text(widget=SHORT, label="Target description (for annotators)")
    check_keywords = Text(label="Instruction-check keywords (comma-separated)")
    tags = Text(label="Annotation tags (comma-separated)")
    surface_difference = Text(widget=SHORT, label="Surface difference (for annotators)")

    def __init__(self, *args, base: str, setting_key: str, training: bool, stimulus_sets=(), stimulus_texts=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["stimulus_set"].choices = [("", "(none)"), *stimulus_sets]
        self.stimulus_texts = stimulus_texts
        self.base = base
        self.training = training
        if not training:
            del self.fields["check_keywords"]
        self.paths = {name: f"{base}.{name}" for name in ("key", "title", "group1", "group2", "target_description", "check_keywords")}
        self.paths["group1_file"] = f"{base}.group1"
        self.paths["group2_file"] = f"{base}.group2"
        self.paths["tags"] = f"annotation.settings.{setting_key}.tags"
        self.paths["surface_difference"] = f"annotation.settings.{setting_key}.surface_difference"

    @staticmethod
    def initial_from(setting: dict, annotation: dict) -> dict:
        """The form's initial values from a setting of the file and its annotation entry."""
        fmt = texts_format(setting.get("group1"), setting.get("group2"))
        return {
            "key": setting.get("key", ""),
            "title": setting.get("title", ""),
            "text_format": fmt,
            "group1": texts_box(setting.get("group1"), fmt),
            "group2": texts_box(setting.get("group2"), fmt),
            "target_description": setting.get("target_description", ""),
            "check_keywords": ", ".join(map(str, setting.get("check_keywords") or [])),
            "tags": ", ".join(map(str, annotation.get("tags") or [])),
            "surface_difference": annotation.get("surface_difference", ""),
        }

    def clean(self):
        cleaned = super().clean()
        fmt = cleaned.get("text_format") or "lines"
        from_set = ([], [])
        if cleaned.get("stimulus_set") and self.stimulus_texts is not None:
            n = number_or_text(cleaned.get("stimulus_per_group") or "10")
            if not isinstance(n, int) or not 1 <= n <= 100:
                self.add_error("stimulus_per_group", "Give a whole number from 1 to 100.")
            else:
                from_set = self.stimulus_texts(int(cleaned["stimulus_set"]), n)
        for number, group in enumerate(("group1", "group2")):
            upload = cleaned.get(f"{group}_file")
            if upload:
                try:
                    cleaned[f"{group}_texts"] = uploaded_texts(upload)
                except ValueError as exc:
                    self.add_error(f"{group}_file", str(exc))
            elif from_set[number]:
                cleaned[f"{group}_texts"] = from_set[number]
            else:
                cleaned[f"{group}_texts"] = texts_from(cleaned.get(group, ""), fmt)
        return cleaned

    def setting(self, old: dict, patterns: list[dict], distractors: list[dict]) -> dict:
        """The setting as the study file writes it (keys the builder does not edit, such as a
        ``provenance``, kept from ``old``)."""
        c = self.cleaned_data
        setting = dict(old)
        setting.update(key=c["key"].strip(), title=c["title"].strip(), group1=c["group1_texts"], group2=c["group2_texts"])
        setting["patterns"] = patterns
        if self.training:
            setting["check_keywords"] = words(c["check_keywords"])
            setting.pop("distractor_patterns", None)
        else:
            setting["distractor_patterns"] = distractors
        _put(setting, "target_description", c["target_description"].strip())
        return setting

    def annotation(self) -> dict:
        """The setting's entry of ``annotation.settings``."""
        return {"tags": words(self.cleaned_data["tags"]), "surface_difference": self.cleaned_data["surface_difference"].strip()}


class PatternForm(forms.Form):
    """One token pattern: its tokens (comma-separated), the group it is more frequent in, and
    an optional reason to exempt it from the content checks. A row without tokens is no pattern."""

    tokens = Text(required=False, label="Tokens (comma-separated)")
    group = forms.ChoiceField(choices=[("1", "More often in group 1"), ("2", "More often in group 2")], required=False)
    unchecked_reason = Text(required=False, label="Exempt from the check because (optional)")

    @staticmethod
    def initial_from(pattern: dict) -> dict:
        """The row's initial values from a pattern of the file."""
        return {
            "tokens": ", ".join(map(str, pattern.get("tokens") or [])),
            "group": str(pattern.get("group", "1")),
            "unchecked_reason": pattern.get("unchecked_reason", "") if pattern.get("unchecked") else "",
        }

    def pattern(self) -> dict | None:
        """The pattern as the study file writes it, or ``None`` for an empty row."""
        tokens = words(self.cleaned_data.get("tokens", ""))
        if not tokens:
            return None
        out: dict[str, Any] = {"tokens": tokens, "group": int(self.cleaned_data.get("group") or 1)}
        reason = (self.cleaned_data.get("unchecked_reason") or "").strip()
        if reason:
            out.update(unchecked=True, unchecked_reason=reason)
        return out


PatternFormSet = forms.formset_factory(PatternForm, extra=2)


class SurveyForm(SectionForm):
    """The survey's scales, intros and comment prompt; its items are :class:`SurveyItemForm` rows."""

    likert_scale = Text(widget=forms.Textarea(attrs={"rows": 5}), label="Agreement scale (5 labels, one a line)")
    frequency_scale = Text(widget=forms.Textarea(attrs={"rows": 5}), label="Frequency scale (5 labels, one a line)")
    background_intro = Text(widget=SHORT)
    comment_prompt = Text(widget=SHORT)
    paths = {"likert_scale": "survey.likert_scale", "frequency_scale": "survey.frequency_scale",
             "background_intro": "survey.background_intro", "comment_prompt": "survey.comment_prompt"}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.paths = dict(self.paths)
        for condition, label in Condition.choices:
            self.fields[f"intro_{condition}"] = Text(
                required=False, widget=SHORT, label=f"Intro of the items about the condition {condition} ({label})"
            )
            self.paths[f"intro_{condition}"] = f"survey.condition_intros.{condition}"

    @staticmethod
    def initial_from(survey: dict) -> dict:
        """The form's initial values from the file's ``survey``."""
        initial = {
            "likert_scale": "\n".join(survey.get("likert_scale") or []),
            "frequency_scale": "\n".join(survey.get("frequency_scale") or []),
            "background_intro": survey.get("background_intro", ""),
            "comment_prompt": survey.get("comment_prompt", ""),
        }
        for condition in Condition.values:
            initial[f"intro_{condition}"] = (survey.get("condition_intros") or {}).get(condition, "")
        return initial

    def survey(self, condition_items: list[dict], background_items: list[dict]) -> dict:
        """The ``survey`` section as the study file writes it."""
        c = self.cleaned_data
        survey: dict[str, Any] = {
            "likert_scale": lines(c["likert_scale"]),
            "condition_items": condition_items,
            "condition_intros": {k: c[f"intro_{k}"].strip() for k in Condition.values if c[f"intro_{k}"].strip()},
            "frequency_scale": lines(c["frequency_scale"]),
        }
        _put(survey, "background_intro", c["background_intro"].strip())
        survey["background_items"] = background_items
        survey["comment_prompt"] = c["comment_prompt"].strip()
        return survey


TYPE_CHOICES = [("", "scale (5 points, the default)")] + [(t, t) for t in SURVEY_ITEM_TYPES if t != "scale"]


class SurveyItemForm(forms.Form):
    """One survey item: key, text and optionally its type with that type's keys (labels of a
    likert item or options of a choice item, one a line; min and max of a number item)."""

    key = Text(required=False)
    text = Text(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    type = forms.ChoiceField(choices=TYPE_CHOICES, required=False)
    choices = Text(required=False, widget=forms.Textarea(attrs={"rows": 3}),
                              label="Labels (likert) or options (choice), one a line")
    min = Text(required=False, label="Min (number)")
    max = Text(required=False, label="Max (number)")
    test = forms.ChoiceField(choices=[("", "default")] + [(t, t) for t in NUMBER_TESTS], required=False)

    @staticmethod
    def initial_from(item: dict) -> dict:
        """The row's initial values from an item of the file."""
        return {
            "key": item.get("key", ""), "text": item.get("text", ""), "type": item.get("type", ""),
            "choices": "\n".join(map(str, item.get("labels") or item.get("options") or [])),
            "min": item.get("min", ""), "max": item.get("max", ""), "test": item.get("test", ""),
        }

    def item(self) -> dict | None:
        """The item as the study file writes it, or ``None`` for an empty row."""
        c = self.cleaned_data
        if not (c.get("key", "").strip() or c.get("text", "").strip()):
            return None
        item: dict[str, Any] = {"key": c["key"].strip(), "text": c["text"].strip()}
        if c.get("type"):
            item["type"] = c["type"]
        choices = lines(c.get("choices", ""))
        if choices:
            item["labels" if c.get("type") == "likert" else "options"] = choices
        for bound in ("min", "max"):
            _put(item, bound, number_or_text(c.get(bound, ""), integer=False))
        _put(item, "test", c.get("test"))
        return item


SurveyItemFormSet = forms.formset_factory(SurveyItemForm, extra=4)


class AnnotationForm(SectionForm):
    """The annotation section's numbers and the codebook's outcome and success mapping; its
    fields are :class:`CodebookFieldForm` rows. No field and no outcome: no codebook."""

    annotators_per_item = Text(help_text="Empty: 2.")
    reservation_minutes = Text(help_text="Empty: 30.")
    outcome = Text(label="Codebook outcome (a field key)")
    success = Text(widget=SHORT, label="Success mapping (optional; 'option: success' or 'option: failure', one a line)")
    paths = {"annotators_per_item": "annotation.annotators_per_item", "reservation_minutes": "annotation.reservation_minutes",
             "outcome": "annotation.codebook.outcome", "success": "annotation.codebook.success"}

    @staticmethod
    def initial_from(annotation: dict) -> dict:
        """The form's initial values from the file's ``annotation``."""
        codebook = annotation.get("codebook") or {}
        return {
            "annotators_per_item": annotation.get("annotators_per_item", ""),
            "reservation_minutes": annotation.get("reservation_minutes", ""),
            "outcome": codebook.get("outcome", ""),
            "success": "\n".join(f"{k}: {v}" for k, v in (codebook.get("success") or {}).items()),
        }

    def apply(self, data: dict, fields: list[dict]) -> None:
        """Write the section into ``data`` (its per-setting entries are kept)."""
        c = self.cleaned_data
        annotation = dict(data.get("annotation") or {})
        for name in ("annotators_per_item", "reservation_minutes"):
            _put(annotation, name, number_or_text(c[name]))
        codebook: dict[str, Any] = {}
        if fields or c["outcome"].strip():
            codebook = {"fields": fields, "outcome": c["outcome"].strip()}
            success = {}
            for line in lines(c["success"]):
                option, _, value = line.rpartition(":")
                success[(option or value).strip()] = value.strip() if option else ""
            _put(codebook, "success", success or None)
        _put(annotation, "codebook", codebook or None)
        _put(data, "annotation", annotation or None)


class CodebookFieldForm(forms.Form):
    """One codebook field: key, label, help, type, options (one a line), min, max, whether it is
    required and which settings it applies to. A row without key and label is no field."""

    key = Text(required=False)
    label = Text(required=False)
    help = Text(required=False)
    type = forms.ChoiceField(choices=[(t, t) for t in FIELD_TYPES], required=False)
    options = Text(required=False, widget=forms.Textarea(attrs={"rows": 3}), label="Options, one a line")
    min = Text(required=False)
    max = Text(required=False)
    optional = forms.BooleanField(required=False, label="Optional (may be left empty)")
    applies_to = forms.ChoiceField(choices=[(a, a) for a in APPLIES_TO], required=False)

    @staticmethod
    def initial_from(field: dict) -> dict:
        """The row's initial values from a codebook field of the file."""
        return {
            "key": field.get("key", ""), "label": field.get("label", ""), "help": field.get("help", ""),
            "type": field.get("type", ""), "options": "\n".join(map(str, field.get("options") or [])),
            "min": field.get("min", ""), "max": field.get("max", ""),
            "optional": field.get("required") is False, "applies_to": field.get("applies_to", "both"),
        }

    def field(self) -> dict | None:
        """The field as the study file writes it, or ``None`` for an empty row."""
        c = self.cleaned_data
        if not (c.get("key", "").strip() or c.get("label", "").strip()):
            return None
        out: dict[str, Any] = {"key": c["key"].strip(), "label": c["label"].strip(), "type": c.get("type") or ""}
        _put(out, "help", c.get("help", "").strip())
        _put(out, "options", lines(c.get("options", "")))
        for bound in ("min", "max"):
            _put(out, bound, number_or_text(c.get(bound, ""), integer=False))
        out["required"] = not c.get("optional")
        out["applies_to"] = c.get("applies_to") or "both"
        return out


CodebookFieldFormSet = forms.formset_factory(CodebookFieldForm, extra=2)


class PagesForm(SectionForm):
    """The pages inserted into the flow: at most one info page per place."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.paths = {}
        for place in PAGE_POSITIONS:
            self.fields[f"{place}_title"] = Text(required=False, label=f"Title of the page at {place}")
            self.fields[f"{place}_text"] = Text(required=False, widget=SHORT, label=f"Text of the page at {place}")
            self.fields[f"{place}_min_seconds"] = Text(required=False, label=f"Minimum seconds on the page at {place}")

    @staticmethod
    def initial_from(pages: list) -> dict:
        """The form's initial values from the file's ``pages``."""
        initial = {}
        for page in pages or []:
            if isinstance(page, dict) and page.get("at") in PAGE_POSITIONS:
                for key in ("title", "text", "min_seconds"):
                    initial[f"{page['at']}_{key}"] = page.get(key, "")
        return initial

    def apply(self, data: dict) -> None:
        """Write the pages into ``data``; a place without title and text has no page."""
        pages = []
        for place in PAGE_POSITIONS:
            title = self.cleaned_data[f"{place}_title"].strip()
            text = self.cleaned_data[f"{place}_text"].strip()
            if not (title or text):
                continue
            page = {"kind": "info", "at": place, "title": title, "text": text}
            _put(page, "min_seconds", number_or_text(self.cleaned_data[f"{place}_min_seconds"]))
            self.paths.update({f"{place}_{k}": f"pages[{len(pages)}].{k}" for k in ("title", "text", "min_seconds")})
            pages.append(page)
        _put(data, "pages", pages or None)


def attach_problems(problems: dict[str, list[str]], forms_and_paths: list[tuple[forms.Form, dict[str, str]]]) -> dict[str, list[str]]:
    """Put each problem next to the form field of its path (as the field's errors) and return
    the problems no field of these forms claimed.

    A field claims its own path and every path below it (``settings[0].patterns[1]`` and
    ``settings[0].patterns[1].tokens`` both belong to the row of ``settings[0].patterns[1]``).
    """
    left = dict(problems)
    for form, paths in forms_and_paths:
        for name, path in paths.items():
            if name not in form.fields:
                continue
            for problem_path in list(left):
                if problem_path == path or problem_path.startswith((f"{path}.", f"{path}[")):
                    for message in left.pop(problem_path):
                        text = message if problem_path == path else f"{problem_path}: {message}"
                        # With the field's id, as Django's own errors have: the list gets
                        # id=<field>_error, which the field's aria-describedby names.
                        form.errors.setdefault(
                            name, form.error_class(renderer=form.renderer, field_id=form[name].auto_id)
                        ).append(text)
    return left
