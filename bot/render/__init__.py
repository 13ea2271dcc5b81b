"""Render a diagnosis for people (terminal, Markdown) and machines (JSON)."""

from bot.render.json_report import render_json, report_dict
from bot.render.text_report import render_markdown, render_text

__all__ = ["render_json", "render_markdown", "render_text", "report_dict"]
