"""Ray's own log and exception lines: a lost node or an unreachable head (8), or work that was placed
and then failed in its environment or its code (10).

The texts are real: output recorded from Ray 2.60 clusters by tools/record_ray_failure_messages.py
and lines quoted in public threads (tests/corpus/*/expected.json names their sources), kept as the
rule cases under tests/cases.
"""

from __future__ import annotations

import re

from bot.catalogue import default_catalogue
from bot.read.cleaning import clean
from bot.render.localize import localize
from tests.support.rule_cases import case_text, diagnose_paste, rules_of


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def test_a_killed_worker_raylet_is_a_lost_node_and_not_an_actor_bug() -> None:
    text = case_text("ray-node-lost", "fires", "ray-2-60-worker-raylet-killed-driver-output.txt")
    diagnosis = diagnose_paste(text)
    top = diagnosis.findings[0]
    assert (top.rule, top.cause, top.severity) == ("ray-node-lost", 8, "critical")
    quoted = [e.text for e in top.evidence]
    assert any(
        "has been marked dead because the detector has missed too many heartbeats" in q for q in quoted
    )
    pasted = _squeezed("\n".join(clean(text).lines))
    assert all(_squeezed(q) in pasted for q in quoted)
    assert "ray-actor-init-failed" not in rules_of(diagnosis)


def test_each_version_of_the_marked_dead_message_names_its_node() -> None:
    ray_1 = case_text("ray-node-lost", "fires", "ray-1-4-node-marked-dead-missed-heartbeats.txt")
    ray_0 = case_text("ray-node-lost", "fires", "ray-0-8-raylet-this-node-is-disconnected.txt")
    for text in (ray_1, ray_0):
        assert diagnose_paste(text).findings[0].cause == 8
    ray_2 = diagnose_paste(
        case_text("ray-node-lost", "fires", "ray-2-60-worker-raylet-killed-driver-output.txt")
    )
    lost = next(f for f in ray_2.findings if f.rule == "ray-node-lost")
    assert lost.params["node_id"] == "a03177ee5f59633e39f267b100c30985112d9b6df3a32700700d3d4d"
    assert lost.params["address"] == "192.0.2.2"


def test_the_lost_node_finding_says_the_line_cannot_tell_a_crash_from_the_network() -> None:
    diagnosis = diagnose_paste(
        case_text("ray-node-lost", "fires", "ray-1-4-node-marked-dead-missed-heartbeats.txt")
    )
    catalogue = default_catalogue()
    for lang, words in (("en", "does not tell them apart"), ("zh", "分不出来")):
        shown = localize(diagnosis.findings[0], catalogue, lang, None)
        assert words in shown.explanation
        assert any("raylet.out" in command for command in shown.commands)


def test_a_failed_runtime_env_is_the_application_whatever_the_worker_pool_says() -> None:
    text = case_text("ray-runtime-env-failed", "fires", "ray-2-0-conda-env-not-found.txt")
    diagnosis = diagnose_paste(text)
    assert rules_of(diagnosis)[0] == "ray-runtime-env-failed"
    assert diagnosis.findings[0].cause == 10
    # The more specific reading supersedes the worker-registration line it explains.
    assert "ray-worker-process-not-registered" not in rules_of(diagnosis)


def test_workers_that_never_register_say_what_settles_8_against_10() -> None:
    text = case_text("ray-worker-process-not-registered", "fires", "ray-2-0-worker-crashed-during-start.txt")
    diagnosis = diagnose_paste(text)
    finding = diagnosis.findings[0]
    assert (finding.rule, finding.cause, finding.severity) == (
        "ray-worker-process-not-registered",
        10,
        "warning",
    )
    assert finding.params["process"] == "11326"
    shown = localize(finding, default_catalogue(), "en", None)
    assert "cause 8" in shown.explanation and "cause 10" in shown.explanation
    assert any("raylet.out" in command for command in shown.commands)
    assert any("11326" in command for command in shown.commands)


def test_recorded_pip_failure_and_job_submit_output_are_runtime_env_failures() -> None:
    for name in ("ray-2-60-pip-wheel-missing-driver-output.txt", "ray-2-1-job-submit-pip-does-not-exist.txt"):
        diagnosis = diagnose_paste(case_text("ray-runtime-env-failed", "fires", name))
        assert (diagnosis.findings[0].rule, diagnosis.findings[0].cause) == ("ray-runtime-env-failed", 10)


def test_an_actor_whose_constructor_raised_is_application_code() -> None:
    text = case_text("ray-actor-init-failed", "fires", "ray-2-60-init-module-not-found.txt")
    diagnosis = diagnose_paste(text)
    assert (diagnosis.findings[0].rule, diagnosis.findings[0].cause) == ("ray-actor-init-failed", 10)


def test_a_jobsupervisor_marked_infeasible_is_read_as_a_runtime_env_wait() -> None:
    text = case_text(
        "ray-job-waits-for-runtime-env", "fires", "ray-1-13-jobsupervisor-infeasible-pending.txt"
    )
    finding = diagnose_paste(text).findings[0]
    assert (finding.rule, finding.cause, finding.severity) == ("ray-job-waits-for-runtime-env", 10, "warning")
    shown = localize(finding, default_catalogue(), "en", None)
    assert "--entrypoint-num-gpus" in shown.explanation and "`ray status` settles it" in shown.explanation


def test_the_gcs_going_away_under_a_driver_is_a_connection_failure() -> None:
    text = case_text("ray-gcs-connection-failed", "fires", "ray-2-60-gcs-killed-reconnect-timeout.txt")
    diagnosis = diagnose_paste(text)
    assert (diagnosis.findings[0].rule, diagnosis.findings[0].cause) == ("ray-gcs-connection-failed", 8)


def test_ray_client_timeout_is_connectivity() -> None:
    text = case_text("ray-client-unreachable", "fires", "ray-2-60-client-no-server-listening.txt")
    diagnosis = diagnose_paste(text)
    assert (diagnosis.findings[0].rule, diagnosis.findings[0].cause) == ("ray-client-unreachable", 8)


def test_serve_1x_controller_loop_errors_are_replica_failures() -> None:
    text = case_text(
        "ray-serve-replica-failed", "fires", "ray-1-6-controller-exception-updating-backend-state.txt"
    )
    diagnosis = diagnose_paste(text)
    assert (diagnosis.findings[0].rule, diagnosis.findings[0].cause) == ("ray-serve-replica-failed", 10)


def test_healthy_raylet_lines_and_started_workers_give_no_warning() -> None:
    for rule, name in (
        ("ray-node-lost", "ray-2-60-healthy-raylet-log-lines.txt"),
        ("ray-worker-process-not-registered", "ray-2-60-worker-started-lines.txt"),
    ):
        diagnosis = diagnose_paste(case_text(rule, "quiet", name))
        assert not [f for f in diagnosis.findings if f.severity != "info"], rules_of(diagnosis)
