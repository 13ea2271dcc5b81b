"""``python -m bot`` is the same as the ``raydiag`` command."""

import sys

from bot.cli import main

sys.exit(main())
