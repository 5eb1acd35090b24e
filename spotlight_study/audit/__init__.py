"""The audit trail: who decided what about a study, and when (issue 40, section 3)."""
