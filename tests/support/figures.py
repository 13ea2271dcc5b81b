"""The name under which a test records a figure the run prints at its end (tests/conftest.py's
``pytest_terminal_summary``): ``record_property(FIGURE, "what was measured: the numbers")``."""

FIGURE = "figure"
