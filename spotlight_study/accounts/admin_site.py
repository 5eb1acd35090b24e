"""The Django admin for instance staff only (issue 40).

The admin shows every study's rows, so it is open to instance staff (superusers and ``lab
admins``, :func:`~spotlight_study.accounts.roles.is_staff_user`) and to nobody else, even with
``is_staff``: a study's owner or researcher who is not instance staff manages the study through
the researcher pages, which show only their studies.
"""
from django.contrib import admin

from .roles import is_staff_user


class LabAdminSite(admin.AdminSite):
    """The default admin site, refused to anyone who is not instance staff."""

    def has_permission(self, request) -> bool:
        """Django's rule (active and ``is_staff``) and instance staff."""
        return super().has_permission(request) and is_staff_user(request.user)

