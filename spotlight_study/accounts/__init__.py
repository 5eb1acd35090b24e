"""Accounts: who may do what (:mod:`.roles`; append-only records in the admin:
:mod:`.readonly_admin`). A plain package, not an app: it has no models,
templates or URLs (the login pages under ``/accounts/`` are Django's own)."""
