"""Operating raydiag: Prometheus metrics and structured logs.

Kept apart from the diagnosis flow on purpose: the flow returns data, and the Slack layer records
what happened to it here, so no classifier or renderer ever depends on a metrics library.
"""

from bot.observe.logs import configure_logging, new_request_id, request_context
from bot.observe.metrics import Metrics

__all__ = ["Metrics", "configure_logging", "new_request_id", "request_context"]
