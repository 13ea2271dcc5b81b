"""RayJob deployment statuses of every KubeRay release that end a job, or that still wait."""

from __future__ import annotations

import pytest

from tests.support.rule_cases import diagnose_paste, rules_of


def _status(deployment: str) -> str:
    # A `status:` cut out of `kubectl get rayjob -o yaml`, as people paste it.
    return f"status:\n  jobDeploymentStatus: {deployment}\n"


@pytest.mark.parametrize(
    "deployment",
    ["Failed", "FailedToGetOrCreateRayCluster", "FailedJobDeploy", "ValidationFailed"],
)
def test_a_deployment_status_that_ends_the_job_is_a_failed_job(deployment: str) -> None:
    assert "ray-job-failed" in rules_of(diagnose_paste(_status(deployment)))


@pytest.mark.parametrize("deployment", ["Running", "Initializing", "WaitForDashboardReady", "Complete"])
def test_a_running_or_waiting_job_is_not_a_failed_job(deployment: str) -> None:
    assert "ray-job-failed" not in rules_of(diagnose_paste(_status(deployment)))
