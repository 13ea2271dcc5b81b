"""Recognise an HTML page where an API answer was expected, and say what it is in a few words.

Between raydiag and the Kubernetes API server or the Ray dashboard there is often something else:
an ingress, a load balancer, an auth proxy, ``kubectl proxy``. When that hop fails it answers with
its own HTML page (nginx's "502 Bad Gateway", a login form), and the first line of that page,
``<html>``, tells the user nothing. The page's title usually says it all.
"""

from __future__ import annotations

import re

_TITLE = re.compile(rb"<title[^>]{0,100}>([^<]{0,300})</title", re.IGNORECASE)
_HEADING = re.compile(rb"<h1[^>]{0,100}>([^<]{0,300})</h1", re.IGNORECASE)
_HEAD_BYTES = 8192


def is_html(body: bytes) -> bool:
    start = body[:_HEAD_BYTES].lstrip().lower()
    return start.startswith((b"<!doctype html", b"<html", b"<head", b"<body", b"<title"))


def html_summary(body: bytes) -> str:
    """``an HTML page ("502 Bad Gateway")``: what the page calls itself, or just that it is one."""
    head = body[:_HEAD_BYTES]
    match = _TITLE.search(head) or _HEADING.search(head)
    title = " ".join(match.group(1).decode("utf-8", errors="replace").split())[:120] if match else ""
    return f'an HTML page ("{title}")' if title else "an HTML page"
