"""``django.contrib.admin`` with the instance-staff admin site (:mod:`.admin_site`).

Apart from the site module so that loading the app imports no model (the site is imported when
``admin.site`` is first used, after the app registry is ready).
"""
from django.contrib.admin.apps import AdminConfig


class LabAdminConfig(AdminConfig):
    """``django.contrib.admin`` whose ``admin.site`` is :class:`.admin_site.LabAdminSite`."""

    default_site = "spotlight_study.accounts.admin_site.LabAdminSite"
