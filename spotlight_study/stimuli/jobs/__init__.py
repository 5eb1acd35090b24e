"""Background jobs: the machinery every job shares, and the stimuli app's two runs.

A job is a row of a :class:`~spotlight_study.stimuli.models.Job` subclass (generation and mining
here, machine coding in ``annotation``). Its life:

1. a service creates the row (status queued) and hands it to :func:`.runner.job_dispatch`, which
   starts it after commit with the ``STIMULI_JOB_RUNNER`` (Celery task, thread, or nobody);
2. the run (:mod:`.generation_run`, :mod:`.mining_run`, ``annotation.machine_coding_run``)
   claims the row for its run id, reports progress with a heartbeat and finishes it
   (:mod:`.state`); runs are idempotent, so any runner can continue a job another one started;
3. an LLM run that meets a transient API error is retried on the one schedule of
   :mod:`.retry`, by Celery or by the in-process runner.

Modules: :mod:`.state` (claim, heartbeat, finish, cancel, reopen), :mod:`.retry` (retry budget and
backoff), :mod:`.llm` (the client and error handling of LLM runs), :mod:`.runner` (dispatch,
in-process runs), :mod:`.generation_run`, :mod:`.mining_run`. Nothing here imports another app:
``annotation`` builds on it, never the reverse.
"""
