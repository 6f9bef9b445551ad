"""Fixtures shared by the Setup views' test modules (defined with their first user)."""

from .test_tab import make_tab  # noqa: F401 (a fixture for every module here)
