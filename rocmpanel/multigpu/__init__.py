"""Several GPUs and several machines: topology, the collective test, launch scripts."""
