"""Django's SQLite backend with each statement's placeholder conversion done once (see :mod:`.base`)."""
