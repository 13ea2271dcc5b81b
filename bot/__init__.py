"""raydiag: why Ray work on Kubernetes is stuck, read from both schedulers' layers.

The flow, one package per step: ``collect`` (live APIs, files, pasted text) builds one immutable
``snapshot``; ``classify`` (a pure function over the rule ``catalogue``) turns it into a
``diagnosis``; ``render`` writes it for a terminal, Markdown, JSON or Slack. Import each name from
its home (``from bot.classify import classify``): this package re-exports nothing, so that
``raydiag --help`` and a module that needs one step load only that step.
"""
