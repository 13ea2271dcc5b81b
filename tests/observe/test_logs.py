"""Log lines: JSON when asked, a request id on each, and no secret that reached a message."""

from __future__ import annotations

import json
import logging
import threading

from bot.observe.logs import current_request_id, new_request_id, request_context
from tests.observe.conftest import CaptureLogs


def test_json_lines_carry_the_request_id_and_mask_tokens(captured_logs: CaptureLogs) -> None:
    with captured_logs("json") as stream:
        log = logging.getLogger("raydiag.test")
        with request_context("Ev0123ABC"):
            log.info("posting with token=xoxb-1234567890-abcdefghij to %s", "C111")
        try:
            raise RuntimeError("GET https://admin:hunter2@dashboard:8265 failed")
        except RuntimeError:
            log.exception("dashboard read failed")
    first, second = (json.loads(line) for line in stream.getvalue().splitlines())
    assert first["request_id"] == "Ev0123ABC"
    assert first["level"] == "INFO" and first["logger"] == "raydiag.test"
    assert "xoxb-1234567890" not in first["message"] and "[REDACTED]" in first["message"]
    assert second["request_id"] is None or second["request_id"] == "-"
    assert "hunter2" not in second["exception"] and "RuntimeError" in second["exception"]


def test_text_lines_are_masked_too(captured_logs: CaptureLogs) -> None:
    with captured_logs("text") as stream, request_context("abc123"):
        logging.getLogger("raydiag.test").warning("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig")
    line = stream.getvalue()
    assert "[abc123]" in line
    assert "eyJhbGciOiJIUzI1NiJ9" not in line


def test_request_ids_come_from_slack_or_are_random_and_stay_in_their_thread() -> None:
    assert new_request_id({"event_id": "Ev42"}) == "Ev42"
    assert new_request_id({"trigger_id": "123.456.abc"}) == "123.456.abc"
    one, two = new_request_id({}), new_request_id(None)
    assert one != two and len(one) == 12
    # A plain thread starts without the caller's id: a worker must enter request_context itself.
    seen: list[str | None] = []
    with request_context("outer"):
        assert current_request_id() == "outer"
        worker = threading.Thread(target=lambda: seen.append(current_request_id()))
        worker.start()
        worker.join()
    assert seen == [None]
    assert current_request_id() is None
