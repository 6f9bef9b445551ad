"""``python -m rocmpanel``: the same as the ``rocmpanel`` command."""

import sys

from rocmpanel.cli import main

sys.exit(main())
