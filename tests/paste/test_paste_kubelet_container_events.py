"""The kubelet's container events alone say what state the container is in.

A paste that holds only the ``Events:`` block of a ``describe``, or ``kubectl get events`` rows,
still shows an image that does not pull, a container in restart back-off or a missing ConfigMap:
the kubelet raises those events as it sets the container's waiting reason. The event family and
its wordings are the kubelet's (pkg/kubelet/images/image_manager.go, pkg/kubelet/kuberuntime/).
"""

from __future__ import annotations

import pytest

from bot.catalogue import default_catalogue
from bot.classify import classify
from bot.collect.paste import parse_paste
from bot.read.kubelet_message import container_event

# Pasted in a public tutorial (a minikube Pod whose image tag does not exist), verbatim.
IMAGE_EVENTS = """\
Events:
  Type     Reason     Age               From               Message
  ----     ------     ----              ----               -------
  Normal   Scheduled  24s               default-scheduler  Successfully assigned default/web-v2 to minikube
  Normal   BackOff    20s               kubelet            Back-off pulling image "nginx:1.99.99"
  Warning  Failed     20s               kubelet            Error: ImagePullBackOff
  Normal   Pulling    9s (x2 over 23s)  kubelet            Pulling image "nginx:1.99.99"
  Warning  Failed     7s (x2 over 21s)  kubelet            Failed to pull image "nginx:1.99.99": rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/nginx:1.99.99": failed to resolve reference "docker.io/library/nginx:1.99.99": docker.io/library/nginx:1.99.99: not found
  Warning  Failed     7s (x2 over 21s)  kubelet            Error: ErrImagePull
"""


@pytest.mark.parametrize(
    ("reason", "message", "waiting", "container"),
    [
        ("Failed", 'Failed to pull image "nginx:1.99.99": rpc error: code = NotFound', "ErrImagePull", ""),
        ("Failed", "Error: ErrImagePull", "ErrImagePull", ""),
        ("Failed", "Error: ImagePullBackOff", "ImagePullBackOff", ""),
        ("BackOff", 'Back-off pulling image "nginx:1.99.99"', "ImagePullBackOff", ""),
        (
            "ErrImageNeverPull",
            'Container image "x" is not present with pull policy of Never',
            "ErrImageNeverPull",
            "",
        ),
        (
            "InspectFailed",
            'Failed to apply default image tag "X": couldn\'t parse image name',
            "InvalidImageName",
            "",
        ),
        ("BackOff", "Back-off restarting failed container", "CrashLoopBackOff", ""),
        (
            "BackOff",
            "Back-off restarting failed container ray-worker in pod w_ml(0b5c)",
            "CrashLoopBackOff",
            "ray-worker",
        ),
        ("Failed", 'Error: configmap "ray-config" not found', "CreateContainerConfigError", ""),
        ("Failed", 'Error: secret "hf-token" not found', "CreateContainerConfigError", ""),
        (
            "Failed",
            "Error: couldn't find key HF_TOKEN in Secret ml/hf-token",
            "CreateContainerConfigError",
            "",
        ),
    ],
)
def test_each_container_event_gives_its_waiting_reason(
    reason: str, message: str, waiting: str, container: str
) -> None:
    state = container_event(reason, message)
    assert state is not None
    assert (state.reason, state.container) == (waiting, container)


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        (
            "Failed",
            "Error: failed to create containerd task: failed to create shim task: OCI runtime create failed",
        ),
        ("Failed", "Failed to create pod sandbox: rpc error"),
        ("Pulled", 'Container image "nginx" already present on machine'),
        ("BackOff", "Back-off 5m0s restarting something else"),
        ("Started", "Started container ray-worker"),
    ],
)
def test_other_events_report_no_container_state(reason: str, message: str) -> None:
    assert container_event(reason, message) is None


def test_an_events_block_alone_is_read_as_an_image_that_does_not_pull() -> None:
    snapshot = parse_paste(IMAGE_EVENTS)
    assert snapshot.kubernetes is not None
    [pod] = snapshot.kubernetes.pods
    assert [s.reason for s in pod.container_statuses] == ["ImagePullBackOff"]
    first = classify(snapshot, default_catalogue()).findings[0]
    assert (first.rule, first.cause) == ("pod-image-pull-failed", 10)


def test_a_pod_whose_status_is_pasted_keeps_it() -> None:
    paste = (
        "NAME     READY   STATUS    RESTARTS   AGE\n"
        "web-v2   1/1     Running   0          5m\n\n" + IMAGE_EVENTS
    )
    snapshot = parse_paste(paste)
    assert snapshot.kubernetes is not None
    [pod] = snapshot.kubernetes.pods
    assert pod.name == "web-v2"
    assert not any(s.reason for s in pod.container_statuses)


def test_a_pending_pod_without_statuses_takes_the_state_its_events_report() -> None:
    paste = (
        "NAME     READY   STATUS    RESTARTS   AGE\nweb-v2   0/1     Pending   0          5m\n\n"
        + IMAGE_EVENTS
    )
    snapshot = parse_paste(paste)
    assert snapshot.kubernetes is not None
    [pod] = snapshot.kubernetes.pods
    assert (pod.name, pod.phase, [s.reason for s in pod.container_statuses]) == (
        "web-v2",
        "Pending",
        ["ImagePullBackOff"],
    )
    assert pod.troubled
