"""Placeholder: filled in by the reconciler work."""
