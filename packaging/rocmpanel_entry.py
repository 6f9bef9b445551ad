"""What the frozen executables run: the ``rocmpanel`` command (window or subcommand)."""

import sys

from rocmpanel.shell.cli import main

if __name__ == "__main__":
    sys.exit(main())
