"""What /metrics reports: diagnoses by outcome, latency, collection errors, Slack failures and retries."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

from bot.deliver.metered import MeteredWebClient
from bot.diagnosis import Diagnosis, Finding, Subject
from bot.observe.metrics import Metrics, outcome_of
from bot.snapshot.model import CollectionError
from tests.support.slack_api import serve_slack


def _samples(metrics: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    body, content_type = metrics.exposition()
    assert content_type.startswith("text/plain")
    found = {}
    for family in text_string_to_metric_families(body.decode()):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def _finding(severity: str) -> Finding:
    return Finding(
        rule="worker-not-joined",
        code="RD0801",
        cause=8,
        layer="ray",
        severity=severity,
        subject=Subject(kind="Pod", name="w", namespace="ml"),
    )


def test_outcome_names_what_the_reader_needs() -> None:
    assert outcome_of(Diagnosis()) == "healthy"
    assert outcome_of(Diagnosis(findings=[_finding("info")])) == "healthy"
    assert outcome_of(Diagnosis(findings=[_finding("critical")])) == "findings"
    partial = Diagnosis(errors=[CollectionError(source="kubernetes: list events", message="403")])
    assert outcome_of(partial) == "partial"


def test_diagnoses_latency_and_collection_errors_are_exposed() -> None:
    metrics = Metrics()
    broken = Diagnosis(
        findings=[_finding("critical")],
        errors=[CollectionError(source="ray dashboard: /api/v0/nodes", message="connection refused")],
    )
    metrics.record_diagnosis("prod", broken, 1.4, trigger="slash")
    metrics.record_diagnosis("prod", Diagnosis(), 0.2, trigger="schedule")
    metrics.record_failure("prod", "busy")
    metrics.record_probe("gpu", "refused")
    metrics.record_scheduled_post("suppressed")

    samples = _samples(metrics)
    assert samples[("raydiag_diagnoses_total", (("cluster", "prod"), ("outcome", "partial")))] == 1
    assert samples[("raydiag_diagnoses_total", (("cluster", "prod"), ("outcome", "healthy")))] == 1
    assert samples[("raydiag_diagnoses_total", (("cluster", "prod"), ("outcome", "busy")))] == 1
    assert samples[("raydiag_diagnosis_seconds_count", (("trigger", "slash"),))] == 1
    assert samples[("raydiag_diagnosis_seconds_bucket", (("le", "2.0"), ("trigger", "slash")))] == 1
    assert samples[("raydiag_diagnosis_seconds_bucket", (("le", "1.0"), ("trigger", "slash")))] == 0
    assert samples[("raydiag_collection_errors_total", (("source", "ray"),))] == 1
    assert samples[("raydiag_probes_total", (("probe", "gpu"), ("result", "refused")))] == 1
    assert samples[("raydiag_scheduled_posts_total", (("result", "suppressed"),))] == 1


def test_two_bots_in_one_process_keep_their_own_counts() -> None:
    first, second = Metrics(), Metrics()
    first.record_probe("gpu", "run")
    assert ("raydiag_probes_total", (("probe", "gpu"), ("result", "run"))) not in _samples(second)


def test_slack_errors_and_retries_are_counted_by_method_and_reason() -> None:
    metrics = Metrics()
    with serve_slack() as api:
        client = MeteredWebClient(
            token="xoxb-test",
            base_url=api.url,
            metrics=metrics,
            retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=2)],
        )
        api.fail("chat.postMessage", status=429, retry_after=0, times=1)
        client.chat_postMessage(channel="C111", text="after one 429")
        api.fail("chat.postMessage", error="invalid_blocks", status=200, times=1)
        with pytest.raises(SlackApiError):
            client.chat_postMessage(channel="C111", text="refused")
        assert len(api.calls_to("chat.postMessage")) == 3

    samples = _samples(metrics)
    assert samples[("raydiag_slack_api_retries_total", (("reason", "rate_limited"),))] == 1
    key = ("raydiag_slack_api_errors_total", (("error", "invalid_blocks"), ("method", "chat.postMessage")))
    assert samples[key] == 1


def test_a_deep_copied_client_still_counts_into_the_same_metrics() -> None:
    # Bolt deep-copies the request, client included, for every lazy listener.
    import copy

    metrics = Metrics()
    client = MeteredWebClient(token="xoxb-test", metrics=metrics)
    copied = copy.deepcopy(client)
    assert copied._metrics is metrics  # type: ignore[attr-defined]
    with serve_slack() as api:
        copied.base_url = api.url
        api.fail("chat.postMessage", error="channel_not_found", status=200, times=1)
        with pytest.raises(SlackApiError):
            copied.chat_postMessage(channel="C404", text="x")
    key = ("raydiag_slack_api_errors_total", (("error", "channel_not_found"), ("method", "chat.postMessage")))
    assert _samples(metrics)[key] == 1
