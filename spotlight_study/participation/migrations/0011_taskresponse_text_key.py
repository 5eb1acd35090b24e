"""``TaskResponse.text_key``: the key of each answer's normalized text, written with the answer
(issue 39), and filled here for the answers saved before it existed."""

import hashlib

from django.db import migrations, models

BATCH = 2000


def _key(answer: str) -> int:
    # The migration's own copy of flags.normalize_answer and near_duplicates.text_key: a
    # migration must give the same result whatever the application code becomes.
    text = " ".join(answer.split()).casefold()
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big", signed=True)


def fill_text_keys(apps, schema_editor):
    TaskResponse = apps.get_model("participation", "TaskResponse")
    rows = TaskResponse.objects.filter(answered_at__isnull=False, text_key__isnull=True).only("pk", "answer")
    batch = []
    for row in rows.iterator(chunk_size=BATCH):
        row.text_key = _key(row.answer)
        batch.append(row)
        if len(batch) >= BATCH:
            TaskResponse.objects.bulk_update(batch, ["text_key"])
            batch = []
    if batch:
        TaskResponse.objects.bulk_update(batch, ["text_key"])


class Migration(migrations.Migration):

    dependencies = [
        ("participation", "0010_merge_page_answer_sketch_function"),
    ]

    operations = [
        migrations.AddField(
            model_name="taskresponse",
            name="text_key",
            field=models.BigIntegerField(blank=True, editable=False, null=True),
        ),
        migrations.RunPython(fill_text_keys, migrations.RunPython.noop, elidable=True),
    ]
