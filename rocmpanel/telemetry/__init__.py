"""Telemetry sources and the sampler's history buffers (Qt-free)."""
