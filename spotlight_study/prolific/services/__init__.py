"""Writes of the Prolific app, one topic per module; import from the topic module.

- :mod:`.study`: the study on Prolific (settings, link, draft, transitions) and the helpers the
  others share (:func:`~.study.client_or_default`, :func:`~.study.linked_prolific_study`);
- :mod:`.submissions`: submission statuses (apply one, sync all, verify an entry);
- :mod:`.webhook`: store and apply a verified webhook event;
- :mod:`.review`: approve completed submissions, act on failed instruction checks;
- :mod:`.bonuses`: the bonus CSV, its dry run and the pay-exactly-once payment.
- :mod:`.demographics`: fetch the demographic export, stored by submission and pseudonym.
- :mod:`.screen_outs`: the paid screen-out of failed instruction checks, sent at most once.
- :mod:`.places`: read and raise the study's places on Prolific (only upwards).
- :mod:`.messages`: messages to one participant or a group, recorded by pseudonym.
- :mod:`.study_events`: study status changes from the webhook;
- :mod:`.hooks`: the workspace's webhook subscriptions to this server.

Network calls to Prolific go through :class:`~spotlight_study.prolific.client.ProlificClient`
and are made outside database transactions; each service then records the outcome in one
transaction. The errors are in :mod:`spotlight_study.prolific.errors`.
"""
