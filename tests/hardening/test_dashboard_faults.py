"""The Ray dashboard is down, slow, failing, behind a proxy, or from another Ray version.

``fault_matrix.DASHBOARD_CASES`` replays the recorded ``broken`` Ray 2.60 cluster (a detached actor
holding the A100, a 4-GPU task on 1-GPU nodes, an H100 nobody has, a failed Serve app) from a
loopback server with one fault each, through the collector's Ray half (``DashboardReader``,
``collect_ray``, ``ray_json.ray_state``) and ``classify``. The broken part is an error finding
naming it; what the other endpoints say is still diagnosed; older and newer answer shapes are
read as what they mean.
"""

from __future__ import annotations

from functools import cache

import pytest

from bot.collect.ray_dashboard import ENDPOINTS
from tests.hardening.fault_matrix import (
    DASHBOARD_CASES,
    DashboardFaultCase,
    Outcome,
    broken_promises,
    run_dashboard_case,
)
from tests.hardening.recorded_dashboard import PATHS

BY_ID = {case.id: case for case in DASHBOARD_CASES}


@cache
def run(case_id: str) -> Outcome:
    """Each case runs once per session; its outcome is plain data the tests only read."""
    return run_dashboard_case(BY_ID[case_id])


def demands(outcome: Outcome) -> list[tuple[str, list[tuple[str, float]], int]]:
    ray = outcome.snapshot.ray
    return sorted((d.kind, sorted(d.shape.items()), len(d.bundles)) for d in ray.demands) if ray else []


def findings(outcome: Outcome) -> set[tuple[str, str]]:
    return {(f.rule, f.subject.label()) for f in outcome.diagnosis.findings}


@pytest.mark.parametrize("case", DASHBOARD_CASES, ids=[case.id for case in DASHBOARD_CASES])
def test_dashboard_fault_is_reported_and_the_other_answers_still_diagnosed(case: DashboardFaultCase) -> None:
    outcome = run(case.id)

    assert broken_promises(case, outcome) == []


def test_one_slow_endpoint_costs_one_timeout_and_the_rest_is_read() -> None:
    outcome = run("state-api-nodes-answer-after-5s")

    assert outcome.requests == len(ENDPOINTS), "every other endpoint was still asked"
    (error,) = outcome.snapshot.errors
    assert error.source == "ray api nodes" and "no answer within 1s (timed out)" in error.message
    assert error.hint is not None and "call_timeout_s" in error.hint
    assert outcome.snapshot.ray is not None
    assert len(outcome.snapshot.ray.nodes) == 4, "the summary endpoint still names the Ray nodes"


def test_a_hung_dashboard_costs_one_timeout_not_one_per_endpoint() -> None:
    outcome = run("dashboard-hangs")

    assert outcome.requests == 1
    (error,) = outcome.snapshot.errors
    assert error.source == "ray dashboard" and "no answer within 1s (timed out)" in error.message
    assert [f.rule for f in outcome.diagnosis.findings] == ["ray-dashboard-unreachable"]


@pytest.mark.parametrize(
    ("case_id", "says"),
    [
        ("proxy-502-html-page", 'answered HTTP 502 with an HTML page ("502 Bad Gateway")'),
        ("sso-login-page", 'answered an HTML page ("Sign in - ml-platform SSO")'),
    ],
)
def test_an_html_page_instead_of_the_dashboard_is_one_clear_error(case_id: str, says: str) -> None:
    outcome = run(case_id)

    assert outcome.requests == 1, "a page that is not the dashboard's stops the Ray collection"
    (error,) = outcome.snapshot.errors
    assert says in error.message and "not the Ray dashboard's JSON" in error.message
    assert "<html" not in error.message.lower()
    assert error.hint is not None and "--dashboard-url" in error.hint


def test_a_ray_failure_body_is_quoted_by_its_message() -> None:
    outcome = run("actors-500-gcs-timeout")

    (error,) = outcome.snapshot.errors
    assert error.message == (
        f"GET {PATHS['actors_alive']}: HTTP 500: Failed to get the data from GCS within the timeout "
        "(30 seconds). The GCS may be overloaded; retry with a larger timeout or a smaller limit: "
        "DEADLINE_EXCEEDED"
    )


def test_without_the_structured_cluster_status_the_printed_one_still_gives_the_demands() -> None:
    recorded = run_dashboard_case(DashboardFaultCase("recorded"))
    outcome = run("cluster-status-500")

    assert outcome.snapshot.ray is not None and recorded.snapshot.ray is not None
    assert demands(outcome) == demands(recorded) and len(demands(recorded)) == 6


def test_a_newer_ray_with_unknown_and_renamed_fields_gives_the_same_diagnosis() -> None:
    recorded = run_dashboard_case(DashboardFaultCase("recorded"))
    newer = run("newer-ray-shapes")

    assert newer.snapshot.ray is not None and newer.snapshot.ray.version == "3.0.0"
    assert findings(newer) == findings(recorded)
    head = [n.node_ip for n in newer.snapshot.ray.nodes if n.is_head]
    assert head == ["127.0.0.2"], "without is_head_node the head is known by its head resource"


def test_ray_2_9_answers_are_read_with_their_worker_groups_and_failures() -> None:
    outcome = run("ray-2.9-shapes")
    ray = outcome.snapshot.ray

    assert ray is not None and ray.version == "2.9.3"
    assert ray.node_groups == {"headgroup": 1, "gpu_workers": 1}
    assert "gpu_workers: LaunchFailed - insufficient capacity for g5.xlarge" in ray.recent_failures
    assert outcome.snapshot.errors == []


def test_ray_2_2_answers_fall_back_to_the_single_application_serve_status() -> None:
    outcome = run("ray-2.2-shapes")
    ray = outcome.snapshot.ray

    assert PATHS["serve_deployments_status"] in outcome.request_paths
    assert ray is not None and ray.version == "2.2.0"
    assert {n.node_ip for n in ray.nodes if n.is_head} == {"10.0.0.10"}
    assert [a.class_name for a in ray.actors] == ["Trainer"]
    (app,) = ray.serve_applications
    assert app.status == "DEPLOY_FAILED"
    assert outcome.snapshot.errors == []
