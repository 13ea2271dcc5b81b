"""``python -m bot`` is the same as the ``raydiag`` command."""

from bot.cli import entrypoint

entrypoint()
