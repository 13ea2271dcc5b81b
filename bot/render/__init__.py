"""Render a diagnosis for people (terminal, Markdown) and machines (JSON).

The package imports nothing, so that a command loads only the renderer it uses.
"""
