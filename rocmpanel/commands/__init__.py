"""Headless subcommands of ``rocmpanel`` (one module each).

Each module defines ``register(subparsers)``, which adds its parser and sets
``func(args) -> int`` as the default. Modules import only what argparse needs at the top:
heavy imports (Qt, numpy, yaml) happen inside the handler, so ``rocmpanel --help`` and
every other command stay fast.
"""
