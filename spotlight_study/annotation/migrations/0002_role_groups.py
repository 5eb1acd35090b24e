"""Create the role groups ``annotators``, ``adjudicators`` and ``researchers``."""

from django.db import migrations

GROUPS = ("annotators", "adjudicators", "researchers")


def create_groups(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    for name in GROUPS:
        Group.objects.get_or_create(name=name)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [
        # Reversing keeps the groups: they may hold users by then.
        migrations.RunPython(create_groups, migrations.RunPython.noop),
    ]
