"""Alerts read from what the senders really post (issue 14).

The Alertmanager cases are the recordings of ``tools/record_alertmanager.py``: a real Alertmanager
(Debian's 0.25) with its default Slack template, the annotations example of its documentation and
a template that lists the labels, plus its webhook body. Grafana's and PagerDuty's shapes come
from their documentation (neither runs here). A test at the end drives a live Alertmanager too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.collect.alerts import (
    Alert,
    ClusterRef,
    WebhookError,
    cluster_of,
    from_slack_message,
    from_webhook,
    message_text,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "alertmanager"
POD = "raycluster-gpu-worker-gpu-7xk2p"
CLUSTERS = [
    ClusterRef(name="gpu-prod", raycluster="raycluster-gpu", namespace="ml"),
    ClusterRef(name="cpu-batch", raycluster="raycluster-cpu", namespace="batch"),
]


def _recorded(alert: str, name: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((FIXTURES / alert / f"{name}.json").read_text(encoding="utf-8"))["body"]
    return body


def _as_event(posted: dict[str, Any]) -> dict[str, Any]:
    """The ``message`` event a workspace delivers for what the receiver posted."""
    return {
        "type": "message",
        "subtype": "bot_message",
        "bot_id": "B0ALERTMGR",
        "username": posted.get("username", "Alertmanager"),
        "text": posted.get("text", ""),
        "attachments": posted.get("attachments", []),
        "channel": posted["channel"],
        "ts": "1796160000.000100",
    }


def _owner(namespace: str, pod: str) -> str | None:
    return "raycluster-gpu" if (namespace, pod) == ("ml", POD) else None


SLACK = sorted(p.relative_to(FIXTURES).with_suffix("") for p in FIXTURES.glob("*/slack-*.json"))


def test_every_recording_is_here() -> None:
    assert len(SLACK) == 12
    assert len(list(FIXTURES.glob("*/webhook-*.json"))) == 4


@pytest.mark.parametrize("path", SLACK, ids=str)
def test_each_recorded_slack_message_reads_as_the_alert_it_announces(path: Path) -> None:
    alert = from_slack_message(_as_event(_recorded(str(path.parent), path.name)), sender="alertmanager")
    assert alert is not None
    assert alert.status == ("resolved" if path.name.endswith("resolved") else "firing")
    expected = "RayWorkerPodPending" if path.parent.name == "ray-worker" else "KubePodNotReady"
    assert alert.name == expected
    assert POD in alert.words or POD in alert.text


@pytest.mark.parametrize("template", ["slack", "slack-annotations", "slack-labels"])
@pytest.mark.parametrize("alert", ["ray-worker", "kube-pod-not-ready"])
def test_a_resend_and_its_resolution_share_a_key(alert: str, template: str) -> None:
    firing = from_slack_message(_as_event(_recorded(alert, f"{template}-firing")))
    resolved = from_slack_message(_as_event(_recorded(alert, f"{template}-resolved")))
    assert firing is not None and resolved is not None
    assert firing.key == resolved.key != ""


def test_a_template_that_lists_labels_gives_them_by_name() -> None:
    alert = from_slack_message(_as_event(_recorded("kube-pod-not-ready", "slack-labels-firing")))
    assert alert is not None
    assert alert.labels["namespace"] == "ml"
    assert alert.labels["pod"] == POD
    assert alert.pod == ("ml", POD)


def test_the_default_title_shows_values_without_names() -> None:
    event = _as_event(_recorded("kube-pod-not-ready", "slack-firing"))
    [attachment] = event["attachments"]
    assert attachment["text"] == ""  # Alertmanager's default Slack text is empty
    alert = from_slack_message(event)
    assert alert is not None
    assert "pod" not in alert.labels
    assert {"ml", POD} <= set(alert.words)


@pytest.mark.parametrize("alert", ["ray-worker", "kube-pod-not-ready"])
def test_the_webhook_gives_each_alert_by_its_labels(alert: str) -> None:
    firing = _recorded(alert, "webhook-firing")
    assert firing["authorization"] == "Bearer test-alertmanager-token"
    [one] = from_webhook(firing["body"])
    [gone] = from_webhook(_recorded(alert, "webhook-resolved")["body"])
    assert (one.status, gone.status) == ("firing", "resolved")
    assert one.key == gone.key and len(one.key) == 16  # Alertmanager's fingerprint
    assert one.labels["pod"] == POD and one.sender == "alertmanager"


@pytest.mark.parametrize(
    ("alert", "name", "because"),
    [
        ("ray-worker", "slack-firing", "text"),  # the RayCluster's name among the title's values
        ("ray-worker", "slack-labels-firing", "label raycluster"),
        ("kube-pod-not-ready", "slack-labels-firing", "pod ml/" + POD),
        ("kube-pod-not-ready", "slack-firing", "pod ml/" + POD),  # a value shaped like a Pod name
        ("kube-pod-not-ready", "slack-annotations-firing", "pod ml/" + POD),
    ],
)
def test_slack_alerts_map_to_the_configured_cluster(alert: str, name: str, because: str) -> None:
    read = from_slack_message(_as_event(_recorded(alert, name)))
    assert read is not None
    target = cluster_of(read, CLUSTERS, pod_cluster=_owner)
    assert target is not None
    assert (target.cluster, target.because) == ("gpu-prod", because)
    if because.startswith("pod"):
        assert target.pod == POD


@pytest.mark.parametrize("alert", ["ray-worker", "kube-pod-not-ready"])
def test_webhook_alerts_map_to_the_configured_cluster(alert: str) -> None:
    [read] = from_webhook(_recorded(alert, "webhook-firing")["body"])
    target = cluster_of(read, CLUSTERS, pod_cluster=_owner)
    assert target is not None and target.cluster == "gpu-prod" and target.pod == POD


def test_an_alert_about_something_else_maps_to_nothing() -> None:
    other = Alert(status="firing", name="NodeDiskFull", labels={"instance": "node-7"}, words=("node-7",))
    assert cluster_of(other, CLUSTERS, pod_cluster=_owner) is None
    elsewhere = Alert(status="firing", name="X", labels={"namespace": "web", "pod": "api-1"})
    assert cluster_of(elsewhere, CLUSTERS, pod_cluster=_owner) is None


def test_a_configured_label_names_the_cluster() -> None:
    alert = Alert(status="firing", name="X", labels={"ray_cluster_name": "raycluster-cpu"})
    assert cluster_of(alert, CLUSTERS) is None
    target = cluster_of(alert, CLUSTERS, cluster_label="ray_cluster_name")
    assert target is not None and target.cluster == "cpu-batch"


def test_grafana_default_message_from_its_documentation() -> None:
    # Grafana's default Slack contact point: the same bracketed title, then its default body
    # (``__text_alert_list``): ``Value:``, ``Labels:`` and ``Annotations:`` as `` - name = value``.
    message = {
        "subtype": "bot_message",
        "bot_id": "B0GRAFANA",
        "attachments": [
            {
                "title": "[FIRING:1] RayHeadDown ml (raycluster-gpu)",
                "text": "**Firing**\n\nValue: A=0\nLabels:\n - alertname = RayHeadDown\n - namespace = ml\n"
                " - ray_io_cluster = raycluster-gpu\nAnnotations:\n - summary = Ray head unreachable\n"
                "Source: https://grafana.example/alerting/grafana/abc/view\n",
                "footer": "Grafana v11.2.0",
            }
        ],
    }
    alert = from_slack_message(message, sender="grafana")
    assert alert is not None and alert.status == "firing" and alert.name == "RayHeadDown"
    assert alert.labels["ray_io_cluster"] == "raycluster-gpu"
    target = cluster_of(alert, CLUSTERS)
    assert target is not None and (target.cluster, target.because) == ("gpu-prod", "label ray_io_cluster")


def test_pagerduty_slack_messages_from_its_documentation() -> None:
    # The PagerDuty app posts an incident as blocks: a header-like section naming the state
    # (Triggered, Acknowledged, Resolved) and the incident title, then fields.
    triggered = {
        "bot_id": "B0PAGERDUTY",
        "blocks": [
            {
                "type": "section",
                "text": {
                    "type": "mrkdwn",
                    "text": "*Triggered* <https://x.pagerduty.com/incidents/Q1|#1234 KubePodNotReady ml/raycluster-gpu-worker-gpu-7xk2p>",
                },
            },
            {
                "type": "section",
                "fields": [
                    {"type": "mrkdwn", "text": "*Service:* ml-platform"},
                    {"type": "mrkdwn", "text": "*Urgency:* high"},
                ],
            },
        ],
    }
    alert = from_slack_message(triggered, sender="pagerduty")
    assert alert is not None and alert.status == "firing"
    assert "#1234 KubePodNotReady ml/raycluster-gpu-worker-gpu-7xk2p" in alert.text  # the link's label
    resolved = {
        **triggered,
        "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "*Resolved* #1234"}}],
    }
    done = from_slack_message(resolved, sender="pagerduty")
    assert done is not None and done.status == "resolved"


def test_ordinary_chat_is_no_alert() -> None:
    assert from_slack_message({"text": "anyone seen the GPU pool today?"}) is None
    assert from_slack_message({"text": ""}) is None


@pytest.mark.parametrize(
    "message",
    [
        {"attachments": "not a list"},
        {"attachments": [None, 3, {"fields": "x"}, {"fields": [None, {"title": 1}]}]},
        {"blocks": [{"type": "section", "text": "not an object"}, {"elements": [{"elements": [None]}]}]},
        {"text": None, "blocks": None},
    ],
)
def test_malformed_messages_read_as_no_alert_and_do_not_crash(message: dict[str, Any]) -> None:
    assert isinstance(message_text(message), str)
    assert from_slack_message(message) is None


@pytest.mark.parametrize(
    ("payload", "says"),
    [
        ([], "not a JSON object"),
        ({"version": "3", "alerts": []}, "unsupported webhook version"),
        ({"version": "4"}, "no list of alerts"),
    ],
)
def test_a_body_that_is_no_webhook_is_refused_with_a_reason(payload: Any, says: str) -> None:
    with pytest.raises(WebhookError, match=says):
        from_webhook(payload)


def test_a_webhook_skips_alerts_that_are_not_objects() -> None:
    assert (
        from_webhook({"version": "4", "alerts": [None, "x", {"labels": {"alertname": "A"}}]})[0].name == "A"
    )
