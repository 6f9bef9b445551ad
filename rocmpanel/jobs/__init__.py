"""Background GPU jobs: child processes speaking JSON lines, and their Qt bridge."""
