"""Secrets planted in the inputs never reach a snapshot, a report or a Slack message."""

from __future__ import annotations

import json

import pytest

from bot.catalogue import default_catalogue
from bot.classify import classify
from bot.collect.paste import parse_paste
from bot.deliver.blocks.thread import render_thread
from bot.read.snapshot_file import parse_snapshot
from bot.render.json_report import render_json
from bot.render.text_report import render_markdown, render_text
from bot.snapshot.redact import redact
from tests.support import scenarios
from tests.support.cluster import GPU_WORKERS, NS

SECRETS = [
    "hf_Zq8xW3vB7nK2mP9tL4rS6yU1aC5dE0fG",
    "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "ghp_R2d2C3po8BB8k2so1xN7vQ4wE6tY9uI0pA3s",
    "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp",
    "s3cr3t-Passw0rd!",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJyYXlkaWFnIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ",
    "AIzaSyDq3x8Zk1mN4pQ7rS0tU2vW5yX9aB6cD3e",  # a GCP API key
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",  # inside a service-account private key
    "ya29.a0AfB_byC4xQ9mZ2kL7nP3rT5vW8yA1bD6eG",  # a GCP OAuth access token
]
LOG_LINES = [
    f"export HF_TOKEN={SECRETS[0]}",
    f"aws_access_key_id = {SECRETS[1]}",
    f"aws_secret_access_key={SECRETS[2]}",
    f"git clone https://oauth2:{SECRETS[3]}@github.com/org/repo.git",
    f"SLACK_BOT_TOKEN={SECRETS[4]} python bot.py",
    f"db password: {SECRETS[5]}",
    f"Authorization: Bearer {SECRETS[6]}",
    f"GOOGLE_API_KEY loaded: {SECRETS[7]}",
    f'"private_key": "-----BEGIN PRIVATE KEY-----\\n{SECRETS[8]}\\n-----END PRIVATE KEY-----\\n"',
    f"gcloud auth print-access-token -> {SECRETS[9]}",
]


def planted_bundle() -> dict[str, object]:
    bundle = scenarios.worker_log_cannot_reach_gcs()
    pod = bundle.find("pods", GPU_WORKERS[0])
    pod["spec"]["containers"][0]["env"] = [
        {"name": "HF_TOKEN", "value": SECRETS[0]},
        {"name": "AWS_SECRET_ACCESS_KEY", "value": SECRETS[2]},
    ]
    pod["spec"]["containers"][0]["args"] = [
        "--hf-token",
        "plainvalue123",
        "--token",
        SECRETS[3],
        f"--password={SECRETS[5]}",
    ]
    bundle.items("logs").append(
        {"pod": GPU_WORKERS[1], "namespace": NS, "container": "ray-worker", "lines": LOG_LINES}
    )
    bundle.texts += LOG_LINES
    return bundle.to_json()


def test_planted_secrets_never_leave_the_snapshot() -> None:
    snapshot = parse_snapshot(planted_bundle())
    diagnosis = classify(snapshot)
    catalogue = default_catalogue()
    outputs = [
        snapshot.to_json(),
        render_json(diagnosis, catalogue, "en"),
        render_text(diagnosis, catalogue, "zh"),
        render_markdown(diagnosis, catalogue, "en"),
        json.dumps(render_thread(diagnosis, catalogue, "en")),
    ]
    for output in outputs:
        for secret in SECRETS:
            assert secret not in output
    assert "[REDACTED]" in snapshot.to_json()
    assert "plainvalue123" not in snapshot.to_json()
    assert "HF_TOKEN" in snapshot.to_json()  # the name stays: it is evidence that the variable exists


def test_pasted_secrets_are_redacted() -> None:
    snapshot = parse_paste(
        "\n".join(LOG_LINES) + "\nFailed to connect to GCS at address :6379 within 5 seconds.\n"
    )
    text = snapshot.to_json()
    for secret in SECRETS:
        assert secret not in text


@pytest.mark.parametrize(
    "harmless",
    [
        "0/5 nodes are available: 2 Insufficient nvidia.com/gpu.",
        "Failed to connect to GCS at address raycluster-gpu-head-svc.ml.svc.cluster.local:6379",
        "author: alice",
        "num-gpus: 0",
        "tokenizer loaded in 3.2s",
    ],
)
def test_ordinary_text_is_left_alone(harmless: str) -> None:
    assert redact(harmless) == harmless
