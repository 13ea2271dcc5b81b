"""The snapshot model (``bot.snapshot.model``) and the readers that build one from recorded files.

Nothing is imported here: a module that needs one part (the diagnosis model needs only
``errors``) does not pay for building every snapshot model.
"""
