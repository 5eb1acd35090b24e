"""Project-wide request middleware (each module holds one concern)."""
