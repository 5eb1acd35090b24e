"""Today's global roles become study members, so a running instance behaves as before (issue 40).

- every member of the ``researchers`` group becomes a ``researcher`` of every existing study;
- every member of ``annotators`` an ``annotator``, of ``adjudicators`` an ``adjudicator``;
- every ``is_staff`` user (who ran every study before) joins the ``lab admins`` group, the
  instance staff besides the superusers, and so keeps seeing every study, new ones included.

The groups themselves are left as they are. Reversing deletes every membership row (the lab
admins group is kept: it is harmless without the code that reads it).
"""
from django.db import migrations

ROLE_OF_GROUP = {"researchers": "researcher", "annotators": "annotator", "adjudicators": "adjudicator"}


def forwards(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    User = apps.get_model("auth", "User")
    Study = apps.get_model("studies", "Study")
    StudyMember = apps.get_model("studies", "StudyMember")
    study_ids = list(Study.objects.values_list("pk", flat=True))
    rows = []
    for group_name, role in ROLE_OF_GROUP.items():
        user_ids = User.objects.filter(groups__name=group_name).values_list("pk", flat=True)
        rows += [StudyMember(study_id=s, user_id=u, role=role) for u in user_ids for s in study_ids]
    StudyMember.objects.bulk_create(rows, batch_size=500, ignore_conflicts=True)
    staff = User.objects.filter(is_staff=True, is_superuser=False)
    if staff.exists():
        lab_admins, _ = Group.objects.get_or_create(name="lab admins")
        lab_admins.user_set.add(*staff)


def backwards(apps, schema_editor):
    apps.get_model("studies", "StudyMember").objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("studies", "0013_studymember"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
