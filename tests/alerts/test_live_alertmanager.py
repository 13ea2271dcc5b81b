"""A live Alertmanager's notifications, read as raydiag reads them (issue 14).

Two alerts about two Pods of one RayCluster fire in one group: Alertmanager's Slack receiver posts
one ``[FIRING:2]`` message to the loopback Web API and its webhook receiver one body with both
alerts. The Slack message reads as one firing alert that names no Pod (so no cluster); the webhook
names each Pod, and both map to the configured cluster; the resolution reads as the same alert.
"""

from __future__ import annotations

from bot.collect.alerts import Alert, ClusterRef, cluster_of, from_slack_message, from_webhook
from tests.support.alertmanager import serve_alertmanager, slack_and_webhook, webhook_sink
from tests.support.slack_api import serve_slack
from tests.support.waiting import eventually

POD_A, POD_B = PODS = ("raycluster-gpu-worker-gpu-aaaaa", "raycluster-gpu-worker-gpu-bbbbb")
CLUSTERS = [ClusterRef(name="gpu-prod", raycluster="raycluster-gpu", namespace="ml")]


def _owner(namespace: str, pod: str) -> str | None:
    return "raycluster-gpu" if namespace == "ml" and pod in PODS else None


def test_a_grouped_notification_reads_as_one_alert_and_the_webhook_names_each_pod() -> None:
    with webhook_sink() as sink, serve_slack() as slack:
        config = slack_and_webhook(
            slack.url, f"{sink.url}/alertmanager", webhook_token="hook-token", group_wait="1s"
        )
        with serve_alertmanager(config) as manager:
            labels = [{"alertname": "KubePodNotReady", "namespace": "ml", "pod": pod} for pod in PODS]
            manager.fire_together(labels)
            assert eventually(lambda: slack.calls_to("chat.postMessage") and sink.received, 20)
            posted = slack.calls_to("chat.postMessage")[0].params
            event = {"subtype": "bot_message", "bot_id": "B0ALERTMGR", **posted}
            alert = from_slack_message(event, sender="alertmanager")
            assert alert is not None
            assert alert.status == "firing" and alert.name == "KubePodNotReady"
            assert alert.text.startswith("[FIRING:2] KubePodNotReady ml")
            # The default title keeps only the labels all alerts of the group share: with two
            # Pods it names neither, and so no cluster. That is what the webhook receiver (or a
            # template that lists the labels) is for; raydiag does not guess from a namespace.
            assert POD_A not in alert.words
            assert cluster_of(alert, CLUSTERS, pod_cluster=_owner) is None

            [delivery] = sink.received
            assert delivery.authorization == "Bearer hook-token" and delivery.path == "/alertmanager"
            alerts = from_webhook(delivery.body)
            assert sorted(a.labels["pod"] for a in alerts) == sorted(PODS)
            targets = [cluster_of(a, CLUSTERS, pod_cluster=_owner) for a in alerts]
            found = sorted((t.cluster, t.pod or "") if t else ("", "") for t in targets)
            assert found == [("gpu-prod", p) for p in sorted(PODS)]

            manager.resolve_together(labels)

            def resolution() -> Alert | None:
                # The group's timer may tick between the two inserts: wait for the message that
                # carries both resolutions rather than taking whichever came next.
                for call in slack.calls_to("chat.postMessage")[1:]:
                    read = from_slack_message({"subtype": "bot_message", **call.params})
                    if read is not None and read.status == "resolved":
                        return read
                return None

            assert eventually(lambda: resolution() is not None, 20)
            done = resolution()
            assert done is not None and done.key == alert.key
