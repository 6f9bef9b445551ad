"""``python -m rocmpanel``: the same as the ``rocmpanel`` command."""

import sys

from rocmpanel.shell.cli import main

sys.exit(main())
