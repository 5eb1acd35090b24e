# PostgreSQL's read of the near-duplicate candidates as a function whose own settings fix the
# plan to one backward index range per key, whatever the table's statistics (issue 39; the
# reason is at near_duplicates.POSTGRES_FUNCTION). SQLite needs nothing.

from django.db import migrations


def function_create(apps, schema_editor):
    """Create (or replace) the function on PostgreSQL."""
    from spotlight_study.participation.near_duplicates import POSTGRES_FUNCTION

    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRES_FUNCTION)


def function_drop(apps, schema_editor):
    """Drop the function on PostgreSQL."""
    from spotlight_study.participation.near_duplicates import POSTGRES_FUNCTION_DROP

    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRES_FUNCTION_DROP)


class Migration(migrations.Migration):

    dependencies = [
        ('participation', '0008_merge_steps_sketch_survey'),
    ]

    operations = [
        migrations.RunPython(function_create, function_drop),
    ]
