"""rocmpanel: a desktop control panel for PyTorch and local LLMs on AMD GPUs with ROCm.

Importing this package imports nothing heavy (no Qt, no torch): the CLI and the workers'
launcher rely on that for a fast start.
"""

__version__ = "0.1.0"
