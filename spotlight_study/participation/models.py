"""Participants, their answers and their survey responses.

All times are server times (UTC). ``time_on_task_ms`` is the time from the first serving of a task
page to the saving of its answer, in milliseconds, measured on the server.
"""
import enum

from django.conf import settings
from django.db import models

from spotlight_study.studies.models import Setting, Study


class Participant(models.Model):
    """One Prolific participant in one study.

    ``cell_plan`` is the participant's list of main tasks in order, each
    ``{"setting": key, "condition": value}``; ``assignment_counts`` the per-cell counts that the
    assignment saw (``{"0": 3, "1": 2, ...}``), and ``assignment_seed`` the seed of the random
    tie-break, so the assignment can be audited. ``shuffle_seed`` fixes the text order.
    """

    class Status(models.TextChoices):
        IN_PROGRESS = "in_progress", "In progress"
        COMPLETED = "completed", "Completed"
        FAILED_CHECK = "failed_check", "Ended: failed instruction check"
        NO_CONSENT = "no_consent", "Ended: no consent"
        RETURNED = "returned", "Returned on Prolific"
        TIMED_OUT = "timed_out", "Timed out on Prolific"
        REJECTED = "rejected", "Rejected on Prolific"
        ENDED_BY_RESEARCHER = "ended_by_researcher", "Ended by the researcher"

        # The one set of ended statuses: the participant left without finishing and holds no
        # place; their page is the ended page, and the monitor, the export and the top-up count
        # them as ended. Plain strings in a tuple: a TextChoices member hashes by its name, so a
        # set would miss a row's plain value. ``enum.nonmember`` keeps it out of the choices.
        ENDED = enum.nonmember(("returned", "timed_out", "rejected", "ended_by_researcher"))
        #: The ended statuses that Prolific sets (its returned, timed-out or rejected submission).
        PROLIFIC_ENDED = enum.nonmember(("returned", "timed_out", "rejected"))

    study = models.ForeignKey(Study, on_delete=models.PROTECT, related_name="participants")
    prolific_pid = models.CharField(max_length=24)
    prolific_study_id = models.CharField(max_length=24)
    prolific_session_id = models.CharField(max_length=24)

    cell_index = models.PositiveIntegerField()
    cell_plan = models.JSONField()
    assignment_counts = models.JSONField()
    assignment_seed = models.BigIntegerField()
    shuffle_seed = models.BigIntegerField()

    status = models.CharField(max_length=20, choices=Status.choices, default=Status.IN_PROGRESS)
    # The key of a registered step (participation/steps/): plain text, so that a new page kind
    # needs no migration; ``steps.step_key_validate`` refuses an unknown key.
    step = models.CharField(max_length=20)
    task_index = models.PositiveIntegerField(
        default=0,
        help_text="0-based index into cell_plan; on the training step, the attempt at the "
        "instruction check (0 the first, 1 the second).",
    )
    consented_at = models.DateTimeField(null=True, blank=True)
    instruction_check_passed = models.BooleanField(null=True, blank=True)
    comment = models.TextField(blank=True)
    # Pilot participants are simulated (``manage.py pilot``): they never freeze the study, never
    # take a place in a cell, and are left out of exports and analysis unless asked for.
    is_pilot = models.BooleanField(default=False, db_index=True)
    # What the participant typed into a refused form (empty or too long answer, incomplete
    # survey): ``{"token": step token of its page, "data": {field: value}}``, shown again by that
    # page's next GET and cleared by the next step change. On the row rather than in a cookie:
    # an answer of 5,000 characters does not fit in one.
    draft = models.JSONField(null=True, blank=True, default=None)

    started_at = models.DateTimeField(auto_now_add=True, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["study", "prolific_pid"], name="participant_once_per_study"
            ),
        ]
        indexes = [
            models.Index(fields=["study", "status", "cell_index"]),
            # The arrival's reads (assignment.py) bounded by indexes, not by the study's size
            # (issue 39): the session check of the arrival, and the in-progress participants
            # of the abandonment window in the cell counts (selectors.cell_counts).
            models.Index(fields=["study", "prolific_session_id"], name="participant_session"),
            models.Index(fields=["study", "status", "started_at"], name="participant_status_start"),
        ]

    def __str__(self) -> str:
        return f"participant {self.pk} of {self.study_id} (cell {self.cell_index})"


class TaskResponse(models.Model):
    """A participant's answer in one setting (training or main); at most one per setting.

    The row is created when the task page is first served (``served_at``) and completed when the
    answer is saved (``answered_at``, ``answer``, ``time_on_task_ms``). Browser telemetry
    (``paste_count``, ``paste_chars``, ``hidden_ms`` in ms, ``blur_count``, ``client_events``) is
    reported by JavaScript and is evidence, not proof: it is missing when JavaScript is off.
    ``group1_order``/``group2_order`` are the shown permutations of the setting's text indices.
    """

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="responses")
    setting = models.ForeignKey(Setting, on_delete=models.PROTECT, related_name="responses")
    position = models.PositiveIntegerField(help_text="0 for training, 1.. for main tasks.")
    condition = models.CharField(max_length=30)
    group1_order = models.JSONField()
    group2_order = models.JSONField()
    pattern_ids = models.JSONField(default=list, help_text="Patterns shown, in shown order.")

    served_at = models.DateTimeField()
    last_served_at = models.DateTimeField()
    serve_count = models.PositiveIntegerField(default=1)

    answer = models.TextField(blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    time_on_task_ms = models.PositiveBigIntegerField(null=True, blank=True)

    paste_count = models.PositiveIntegerField(default=0)
    paste_chars = models.PositiveIntegerField(default=0)
    hidden_ms = models.PositiveBigIntegerField(default=0)
    blur_count = models.PositiveIntegerField(default=0)
    client_events = models.JSONField(default=list, blank=True)

    # The writing process, from the input events' ``inputType`` (static/js/flow.js; never the
    # keys): characters inserted by typing, by drop and by autocomplete, replacement or any
    # other insertion that is not a keystroke (dictation, a script); the number of insertions
    # and deletions; active typing time (ms, pauses over 2 s left out); the largest block
    # inserted at once; the longest time away (tab hidden or window blurred, ms) that ended
    # shortly before a paste. All 0 when JavaScript is off (``insertions`` 0 says so).
    typed_chars = models.PositiveIntegerField(default=0)
    dropped_chars = models.PositiveIntegerField(default=0)
    replaced_chars = models.PositiveIntegerField(default=0)
    insertions = models.PositiveIntegerField(default=0)
    deletions = models.PositiveIntegerField(default=0)
    typing_ms = models.PositiveBigIntegerField(default=0)
    largest_insert_chars = models.PositiveIntegerField(default=0)
    away_before_paste_ms = models.PositiveBigIntegerField(default=0)
    # Measured on the server when the answer is saved (participation/writing.py): the share of
    # the answer found in the texts shown (per mille) and the highest similarity (0-100) to
    # another participant's answer in the same setting and population. ``None``: not measured
    # (an answer saved before these existed).
    shown_overlap_permille = models.PositiveSmallIntegerField(null=True, blank=True)
    near_duplicate_score = models.PositiveSmallIntegerField(null=True, blank=True)
    # The key of the normalized answer (near_duplicates.text_key), written with the answer, so
    # that the researcher pages count identical answers from a column of integers instead of
    # reading and normalizing every answer's text (issue 39: 0.48 of the 0.52 s of the study
    # dashboard at 20,000 participants). ``None``: not answered, or written by a path that
    # does not set it (then the flag falls back to the text; flag_queries.study_flag_counts).
    text_key = models.BigIntegerField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["participant", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["participant", "setting"], name="one_response_per_participant_setting"
            ),
            models.UniqueConstraint(
                fields=["participant", "position"], name="one_response_per_participant_position"
            ),
        ]

    def __str__(self) -> str:
        return f"response {self.pk} ({self.setting_id}, {self.condition})"


class SurveyAnswer(models.Model):
    """One survey item answered by a participant.

    ``condition`` is the condition the item is about, or ``background``. ``response`` is the
    point chosen on a scale (1..5 for an item without a type, 1..number of labels, at most 11,
    for a ``likert`` item) and ``None`` for the other types, whose answer is ``value``: the
    option as written (``choice``), the list of options checked (``multi_choice``), a number
    (``number``) or the text (``text``) (docs/study-file.md, "Survey item types").
    """

    participant = models.ForeignKey(
        Participant, on_delete=models.CASCADE, related_name="survey_answers"
    )
    condition = models.CharField(max_length=30)
    item = models.SlugField(max_length=50)
    response = models.PositiveSmallIntegerField(null=True, blank=True)
    value = models.JSONField(null=True, blank=True, default=None)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["participant", "condition", "item"], name="one_survey_answer_per_item"
            ),
            models.CheckConstraint(
                condition=models.Q(response__isnull=True)
                | models.Q(response__gte=1, response__lte=11),
                name="survey_response_1_to_11",
            ),
        ]


class InstructionCheckAttempt(models.Model):
    """An attempt at the training task that a later attempt replaced (``instruction_check_attempts:
    2``): the failed first answer, kept as it was saved.

    The participant's last attempt is their training :class:`TaskResponse` (position 0), which
    the analysis, the annotators and the review use; this row keeps the earlier one for the
    export. ``attempt`` is 1 for the first; times are server times, ``time_on_task_ms`` in ms;
    the telemetry is the browser's, as on the response.
    """

    participant = models.ForeignKey(
        Participant, on_delete=models.CASCADE, related_name="check_attempts"
    )
    attempt = models.PositiveSmallIntegerField()
    setting = models.ForeignKey(Setting, on_delete=models.PROTECT, related_name="+")
    answer = models.TextField()
    passed = models.BooleanField()
    served_at = models.DateTimeField()
    answered_at = models.DateTimeField()
    time_on_task_ms = models.PositiveBigIntegerField(null=True, blank=True)
    paste_count = models.PositiveIntegerField(default=0)
    paste_chars = models.PositiveIntegerField(default=0)
    hidden_ms = models.PositiveBigIntegerField(default=0)
    blur_count = models.PositiveIntegerField(default=0)
    client_events = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["participant", "attempt"]
        constraints = [
            models.UniqueConstraint(
                fields=["participant", "attempt"], name="one_check_attempt_per_number"
            ),
        ]

    def __str__(self) -> str:
        return f"check attempt {self.attempt} of participant {self.participant_id}"


class PageAnswer(models.Model):
    """One try at a check page a study file inserts (``pages:``: ``attention_check``,
    ``comprehension_quiz``; ``participation/steps/checks.py``).

    ``step`` is the page's step key (one page per place), ``kind`` its kind, ``try_number`` 1 for
    the first try. The row is created when the try's page is first served (``served_at``, server
    time) and completed when it is answered: ``answer`` (the chosen option, or the quiz's list
    of chosen options in question order), ``passed``, ``answered_at`` and ``time_ms``
    (``answered_at - served_at`` on the server clock, ms). ``outcome`` says what the answer led
    to: ``passed``, ``retry`` (another try follows), or the ``on_fail`` policy applied after the
    last failed try (``flag``, ``end``, ``return``); empty while unanswered.
    """

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="page_answers")
    step = models.CharField(max_length=20)
    kind = models.CharField(max_length=30)
    try_number = models.PositiveSmallIntegerField(default=1)
    served_at = models.DateTimeField()
    answer = models.JSONField(null=True, blank=True, default=None)
    passed = models.BooleanField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    time_ms = models.PositiveBigIntegerField(null=True, blank=True)
    outcome = models.CharField(max_length=20, blank=True)

    class Meta:
        ordering = ["participant", "step", "try_number"]
        constraints = [
            models.UniqueConstraint(
                fields=["participant", "step", "try_number"], name="one_page_answer_per_try"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} try {self.try_number} of participant {self.participant_id}"


class ParticipantEnding(models.Model):
    """A researcher's decision to end a stalled participant (status ``ended_by_researcher``),
    kept like a review decision: who (``ended_by``, ``None`` from the command line, which
    records ``ended_via``), when (``ended_at``, server time) and why (``reason``).

    ``step`` and ``idle_seconds`` are what the decision saw: the participant's step and the
    time since their last activity (s). ``message_id`` is the Prolific message sent with it
    (``prolific.Message`` pk), or ``None`` when none was sent. One per participant: a
    participant is ended once.
    """

    participant = models.OneToOneField(Participant, on_delete=models.CASCADE, related_name="ending")
    ended_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    ended_via = models.CharField(max_length=20, default="monitor")
    ended_at = models.DateTimeField()
    reason = models.TextField()
    step = models.CharField(max_length=20)
    idle_seconds = models.PositiveIntegerField()
    message_id = models.PositiveBigIntegerField(null=True, blank=True)

    def __str__(self) -> str:
        return f"ending of participant {self.participant_id} at {self.ended_at:%Y-%m-%d %H:%M}"


class AnswerSketchKey(models.Model):
    """One key of an answer's sketch: the index that finds an answer's likely near-duplicates
    without reading every earlier answer of its setting (issue 39).

    Each saved answer (one per participant and setting) gets
    :data:`~.near_duplicates.KEYS_PER_ANSWER` rows: one per MinHash band
    of its character 4-grams and one for its whole normalized text
    (:func:`.near_duplicates.sketch_keys`). Two answers that share a key are candidates, scored
    with rapidfuzz as before (``writing.near_duplicate_record``). ``setting`` and ``is_pilot``
    are copied from the answer and its participant so that one index range holds a key's
    answers of one setting and population, newest last.
    """

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="+")
    setting = models.ForeignKey(Setting, on_delete=models.CASCADE, related_name="+", db_index=False)
    is_pilot = models.BooleanField()
    sketch_key = models.BigIntegerField()

    class Meta:
        indexes = [
            models.Index(fields=["setting", "is_pilot", "sketch_key", "participant"], name="answer_sketch_lookup"),
        ]

    def __str__(self) -> str:
        return f"sketch key {self.sketch_key} of participant {self.participant_id} in {self.setting_id}"


class CellPlaceCount(models.Model):
    """The completed real (non-pilot) participants of one cell of a study, kept by the
    database: triggers on ``participation_participant`` (migration 0007) add one when a row
    becomes completed and real, and take one away when it stops being so or is deleted, on
    every path that writes participants (the flow, the Prolific sync, erasure, pilots, bulk
    writes), on SQLite and PostgreSQL alike.

    The arrival's cell counts read these rows (one per cell) instead of counting the study's
    completed participants on every arrival, under the study's lock (issue 39:
    :func:`.selectors.cell_counts`). Never written by the application.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="+")
    cell_index = models.PositiveIntegerField()
    completed = models.IntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "cell_index"], name="one_place_count_per_cell"),
        ]

    def __str__(self) -> str:
        return f"{self.completed} completed in cell {self.cell_index} of study {self.study_id}"
