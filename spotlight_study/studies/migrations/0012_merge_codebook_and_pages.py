# Joins the codebook (issue 34) and the study-file pages (issue 36), two new fields of Study.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('studies', '0011_study_annotation_codebook'),
        ('studies', '0011_study_pages'),
    ]

    operations = [
    ]
