"""The Tuning tab: presets of environment and torch settings, the answered tuning items,
applying the active preset, and A/B benchmarks of two presets."""
