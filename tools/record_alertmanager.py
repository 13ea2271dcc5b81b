"""Record what a real Alertmanager sends: its Slack receiver's message (default template) and its
webhook receiver's JSON, for a firing and then a resolved alert about a Ray worker Pod.

    .venv/bin/python tools/record_alertmanager.py          # writes tests/fixtures/alertmanager/

Alertmanager is Debian's ``prometheus-alertmanager`` (``make alertmanager``), started on loopback by
``tests/support/alertmanager.py``; the Slack receiver posts to the loopback Web API stand-in
(``chat.postMessage`` with a bot token, as Alertmanager's docs describe for apps), the webhook
receiver to a small recording server. Nothing here is typed by hand: each file is the body the
receiver got, with the sender's version beside it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support.alertmanager import (  # noqa: E402
    binary,
    serve_alertmanager,
    slack_and_webhook,
    webhook_sink,
)
from tests.support.slack_api import serve_slack  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "alertmanager"
CHANNEL = "C0INCIDENT"
WEBHOOK_TOKEN = "test-alertmanager-token"
LABELS = {
    "alertname": "RayWorkerPodPending",
    "severity": "warning",
    "namespace": "ml",
    "pod": "raycluster-gpu-worker-gpu-7xk2p",
    "raycluster": "raycluster-gpu",
}
ANNOTATIONS = {
    "summary": "Ray worker Pod pending for more than 10 minutes",
    "description": "Pod ml/raycluster-gpu-worker-gpu-7xk2p has been Pending for 10 minutes.",
}
# The alert kube-prometheus-stack raises for the same Pod (``KubePodNotReady``: its labels are the
# namespace and the Pod; nothing names the RayCluster, which raydiag looks up from the Pod).
KUBE_LABELS = {
    "alertname": "KubePodNotReady",
    "severity": "warning",
    "namespace": "ml",
    "pod": "raycluster-gpu-worker-gpu-7xk2p",
}
KUBE_ANNOTATIONS = {
    "summary": "Pod has been in a non-ready state for more than 15 minutes.",
    "description": "Pod ml/raycluster-gpu-worker-gpu-7xk2p has been in a non-ready state for longer than "
    "15 minutes.",
    "runbook_url": "https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubepodnotready",
}
ALERTS = {"ray-worker": (LABELS, ANNOTATIONS), "kube-pod-not-ready": (KUBE_LABELS, KUBE_ANNOTATIONS)}


# The Slack receivers recorded: Alertmanager's default template, the example of its documentation
# that prints the common annotations, and a template that lists every label by name (the shape of
# the templates most teams copy from blog posts: ``*Details:*`` then ``• *pod:* `x` ``).
TEMPLATES: dict[str, dict[str, str]] = {
    "default": {},
    "annotations": {
        "text": "<!channel> \nsummary: {{ .CommonAnnotations.summary }}\n"
        "description: {{ .CommonAnnotations.description }}",
    },
    "labels": {
        "title": '[{{ .Status | toUpper }}{{ if eq .Status "firing" }}:{{ .Alerts.Firing | len }}{{ end }}] '
        "{{ .CommonLabels.alertname }}",
        "text": "{{ range .Alerts }}*Alert:* {{ .Annotations.summary }} - `{{ .Labels.severity }}`\n"
        "*Description:* {{ .Annotations.description }}\n*Details:*\n"
        "{{ range .Labels.SortedPairs }} • *{{ .Name }}:* `{{ .Value }}`\n{{ end }}{{ end }}",
    },
}


def _wait(predicate: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise SystemExit("Alertmanager did not deliver in time")


def main() -> int:
    version = subprocess.run([binary(), "--version"], capture_output=True, text=True, check=False)
    sender = (version.stdout or version.stderr).splitlines()[0].strip()
    OUT.mkdir(parents=True, exist_ok=True)
    for alert, (labels, notes) in ALERTS.items():
        for template, fields in TEMPLATES.items():
            for name, body in _record(fields, labels, notes).items():
                if template != "default" and name.startswith("webhook"):
                    continue  # the webhook body does not depend on the Slack template
                stem = name if template == "default" else name.replace("slack", f"slack-{template}")
                path = OUT / alert / f"{stem}.json"
                path.parent.mkdir(exist_ok=True)
                record = {"recorded_from": sender, "slack_template": fields or "default", "body": body}
                path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
                print(f"wrote {path.relative_to(ROOT)}")
    return 0


def _record(template: dict[str, str], labels: dict[str, str], notes: dict[str, str]) -> dict[str, Any]:
    with webhook_sink() as sink, serve_slack() as slack:
        config = slack_and_webhook(
            slack.url,
            f"{sink.url}/alertmanager",
            webhook_token=WEBHOOK_TOKEN,
            slack_channel=CHANNEL,
            slack_fields=template,
        )
        with serve_alertmanager(config) as manager:
            manager.fire(labels, notes)
            _wait(lambda: slack.calls_to("chat.postMessage") and sink.received)
            firing_slack = slack.calls_to("chat.postMessage")[0].params
            firing_hook = asdict(sink.received[0])
            manager.resolve(labels, notes)
            _wait(lambda: len(slack.calls_to("chat.postMessage")) > 1 and len(sink.received) > 1)
            resolved_slack = slack.calls_to("chat.postMessage")[-1].params
            resolved_hook = asdict(sink.received[-1])
    return {
        "slack-firing": firing_slack,
        "slack-resolved": resolved_slack,
        "webhook-firing": firing_hook,
        "webhook-resolved": resolved_hook,
    }


if __name__ == "__main__":
    raise SystemExit(main())
