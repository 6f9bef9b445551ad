"""Fixtures shared by the environment editor's test modules (defined with their first
user)."""

from .test_editor import editor, home  # noqa: F401 (fixtures for every module here)
