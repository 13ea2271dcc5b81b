"""Operating raydiag: Prometheus metrics (``bot.observe.metrics``) and structured logs
(``bot.observe.logs``).

Kept apart from the diagnosis flow on purpose: the flow returns data, and the service records
what happened to it here, so no classifier or renderer ever depends on a metrics library. Nothing
is imported here, so code that only logs does not load the Prometheus client.
"""
