"""Two replicas compete for one Lease on the loopback Kubernetes API: one leads, and when it stops
the other takes over once the Lease has expired.

The timings are the smallest the client's election accepts (lease 3 s, renew deadline 2 s, retry
1 s), so a takeover happens within a few seconds of real time; the waits below poll for the state
they expect and give up after a bound, they do not sleep for a fixed time.

Loopback API server: for a Lease API that refuses and then recovers when the fault is cleared
mid-test. Takeover as the shipped ServiceAccount, and kube-apiserver's own 403 for an account
without the Role, run on the real control plane in tests/integration/test_compound_real_stack.py.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client, config

from bot.leadership import Leadership, LeaseSettings
from tests.support import cluster
from tests.support.kube_api import Fault, KubeAPI, ObjectStore, serve
from tests.support.waiting import eventually

FAST = LeaseSettings(namespace="raydiag", lease_duration_s=3, renew_deadline_s=2, retry_period_s=1)


@pytest.fixture
def api() -> Iterator[KubeAPI]:
    store = ObjectStore.from_bundle(cluster.healthy())
    store.ensure_namespaces("raydiag")
    with serve(store) as running:
        yield running


def _client(api: KubeAPI, directory: Path) -> client.ApiClient:
    configuration = client.Configuration()
    config.load_kube_config(
        config_file=str(api.kubeconfig(directory / "kubeconfig")),
        context="loopback",
        client_configuration=configuration,
    )
    return client.ApiClient(configuration)


def test_one_replica_leads_and_the_other_takes_over_when_it_stops(api: KubeAPI, tmp_path: Path) -> None:
    events: list[str] = []
    first = Leadership(
        FAST,
        _client(api, tmp_path),
        on_lead=lambda: events.append("first leads"),
        on_lose=lambda: events.append("first stops"),
        identity="raydiag-a",
    )
    second = Leadership(
        FAST,
        _client(api, tmp_path),
        on_lead=lambda: events.append("second leads"),
        on_lose=lambda: events.append("second stops"),
        identity="raydiag-b",
    )
    try:
        first.start()
        assert eventually(lambda: first.leading)
        second.start()
        # The second replica keeps trying but finds a Lease that is held and renewed.
        time.sleep(FAST.lease_duration_s + 1)
        assert first.leading and not second.leading
        lease = client.CoordinationV1Api(_client(api, tmp_path)).read_namespaced_lease(
            "raydiag-leader", "raydiag"
        )
        assert lease.spec.holder_identity == "raydiag-a"

        stopped_at = time.monotonic()
        first.stop()
        assert not first.leading
        assert eventually(lambda: second.leading)
        took = time.monotonic() - stopped_at
        assert took < 60  # the bound; with these timings it is a few seconds
        lease = client.CoordinationV1Api(_client(api, tmp_path)).read_namespaced_lease(
            "raydiag-leader", "raydiag"
        )
        assert lease.spec.holder_identity == "raydiag-b"
        assert events == ["first leads", "first stops", "second leads"]
    finally:
        first.stop(timeout_s=10)
        second.stop(timeout_s=10)


def test_timings_the_client_would_refuse_are_refused_here_with_a_reason(api: KubeAPI, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="lease_duration_s must be more than renew_deadline_s"):
        Leadership(
            LeaseSettings(namespace="raydiag", lease_duration_s=5, renew_deadline_s=5, retry_period_s=1),
            _client(api, tmp_path),
            on_lead=lambda: None,
            on_lose=lambda: None,
        )


def test_a_lease_api_that_refuses_leaves_the_replica_a_follower(api: KubeAPI, tmp_path: Path) -> None:
    api.add_fault(Fault(path_regex=r"/leases", status=403))
    elector = Leadership(FAST, _client(api, tmp_path), on_lead=lambda: None, on_lose=lambda: None)
    try:
        elector.start()
        assert not eventually(lambda: elector.leading, timeout_s=3)
        api.clear_faults()
        assert eventually(lambda: elector.leading)
    finally:
        elector.stop(timeout_s=10)
