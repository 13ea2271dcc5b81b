"""The Slack Web API client, metered: failed calls by method and Slack's error code, and retries by
reason, counted in the bot's ``Metrics``. Here, in deliver/, because it is a Slack client."""

from __future__ import annotations

from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.handler import RetryHandler
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.web import SlackResponse

from bot.observe.metrics import Metrics


class CountedRetries(RetryHandler):
    """Wraps a retry handler: same decisions, and each retry it makes is counted by reason."""

    def __init__(self, inner: RetryHandler, metrics: Metrics) -> None:
        super().__init__(max_retry_count=inner.max_retry_count, interval_calculator=inner.interval_calculator)
        self._inner = inner
        self._metrics = metrics

    def can_retry(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        return self._inner.can_retry(state=state, request=request, response=response, error=error)

    def prepare_for_next_attempt(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> None:
        if response is not None and response.status_code == 429:
            reason = "rate_limited"
        elif response is not None and response.status_code >= 500:
            reason = "server_error"
        else:
            reason = "connection"
        self._metrics.slack_api_retries.labels(reason=reason).inc()
        self._inner.prepare_for_next_attempt(state=state, request=request, response=response, error=error)


class MeteredWebClient(WebClient):
    """A WebClient that counts failed Web API calls by method and Slack's error code."""

    def __init__(self, *args: Any, metrics: Metrics, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._metrics = metrics
        self.retry_handlers = [CountedRetries(h, metrics) for h in self.retry_handlers]

    def api_call(self, api_method: str, *args: Any, **kwargs: Any) -> SlackResponse:
        try:
            return super().api_call(api_method, *args, **kwargs)
        except SlackApiError as error:
            code = str(error.response.get("error") or error.response.status_code)[:60]
            self._metrics.slack_api_errors.labels(method=api_method[:60], error=code).inc()
            raise
