"""Real pastes mix formats: splitting, markdown, prompts, chat escapes and cross-block facts."""

from __future__ import annotations

from bot.classify import classify
from bot.collect.paste import parse_paste

SLACK_THREAD = """\
## Our ray job never starts :(

```
$ kubectl get pod -n ml -o wide
NAME                                 READY   STATUS    RESTARTS   AGE   IP           NODE       NOMINATED NODE   READINESS GATES
raycluster-a-head-5v7kd              1/1     Running   0          20m   10.4.0.12    cpu-1      &lt;none&gt;           &lt;none&gt;
raycluster-a-worker-gpu-xj2lm        0/1     Pending   0          20m   &lt;none&gt;       &lt;none&gt;     &lt;none&gt;           &lt;none&gt;
```
and the events say
```
Warning  FailedScheduling  2m (x9 over 20m)  default-scheduler  0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint {nvidia.com/gpu: present}.
```
### ray status
```bash
(base) root@raycluster-a-head-5v7kd:~# ray status
======== Autoscaler status: 2024-03-01 09:00:00.000000 ========
Node status
---------------------------------------------------------------
Healthy:
 1 head-group
Pending:
 (no pending nodes)
Recent failures:
 (no failures)

Resources
---------------------------------------------------------------
Usage:
 0.0/4.0 CPU
 0B/16.00GiB memory
 0B/4.66GiB object_store_memory

Demands:
 {'GPU': 1.0, 'CPU': 1.0}: 1+ pending tasks/actors
```
the worker group yaml:
```yaml
  workerGroupSpecs:
  - groupName: gpu
    replicas: 1
    minReplicas: 1
    maxReplicas: 1
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: ray-worker
          image: rayproject/ray:2.9.0-gpu
          resources:
            limits:
              nvidia.com/gpu: 1
```
and the node:
```
Name:               gpu-1
Taints:             nvidia.com/gpu=present:NoSchedule
Capacity:
  cpu:             8
  nvidia.com/gpu:  1
Allocatable:
  cpu:             8
  nvidia.com/gpu:  1
```
thanks!
"""


def test_a_slack_thread_with_every_block_kind() -> None:
    snapshot = parse_paste(SLACK_THREAD)

    kubernetes, ray = snapshot.kubernetes, snapshot.ray
    assert kubernetes is not None and ray is not None
    pods = {pod.name: pod for pod in kubernetes.pods}
    assert set(pods) == {"raycluster-a-head-5v7kd", "raycluster-a-worker-gpu-xj2lm"}
    assert {pod.namespace for pod in pods.values()} == {"ml"}
    worker = pods["raycluster-a-worker-gpu-xj2lm"]
    assert worker.node_name is None and worker.pod_ip is None and worker.unscheduled
    (event,) = kubernetes.events
    assert (event.object_name, event.namespace, event.count) == ("raycluster-a-worker-gpu-xj2lm", "ml", 9)
    scheduled = worker.condition("PodScheduled")
    assert scheduled is not None and scheduled.status == "False" and scheduled.message == event.message
    assert ray.node_groups == {"head-group": 1}
    assert ray.demands[0].shape == {"GPU": 1.0, "CPU": 1.0}
    (cluster,) = kubernetes.rayclusters
    assert cluster.worker_groups[0].max_replicas == 1
    (node,) = kubernetes.nodes
    assert node.name == "gpu-1" and node.taints[0].value == "present"
    assert snapshot.notes == [
        "kubectl get pods",
        "scheduler message",
        "ray status",
        "raycluster manifest",
        "kubectl describe node",
    ]
    # Every line no block claimed is kept for the phrase rules: the event row, and the prose too.
    texts = [line.text for line in snapshot.texts]
    assert "Our ray job never starts :(" in texts and "and the events say" in texts
    assert [t for t in texts if "FailedScheduling" in t] == [
        event_line.strip() for event_line in SLACK_THREAD.splitlines() if "FailedScheduling" in event_line
    ]


def test_terminal_noise_is_removed_before_parsing() -> None:
    paste = (
        "\x1b[1mNAME\x1b[0m   READY   STATUS    RESTARTS   AGE\r\n"
        "job-1\u00a0\u00a0 0/1     \x1b[31mPending\x1b[0m   0          1m\r\n"
        "\u201cpod didn\u2019t trigger scale-up: 2 Insufficient nvidia.com/gpu\u201d\r\n"
    )

    snapshot = parse_paste(paste)

    assert snapshot.kubernetes is not None
    (pod,) = snapshot.kubernetes.pods
    assert pod.name == "job-1" and pod.phase == "Pending"
    (event,) = snapshot.kubernetes.events
    assert event.reason == "NotTriggerScaleUp" and event.object_name == "job-1"
    assert event.message == "pod didn't trigger scale-up: 2 Insufficient nvidia.com/gpu"


def test_scheduler_message_is_not_attached_when_several_pods_are_pending() -> None:
    paste = "a-1   0/1   Pending   0   1m\nb-1   0/1   Pending   0   1m\n0/3 nodes are available: 3 Insufficient cpu.\n"

    snapshot = parse_paste(paste)

    assert snapshot.kubernetes is not None
    (event,) = snapshot.kubernetes.events
    assert event.object_name is None
    assert all(pod.condition("PodScheduled") is None for pod in snapshot.kubernetes.pods)


def test_heading_hashes_are_stripped_from_kept_text() -> None:
    snapshot = parse_paste(
        "### Error: ray.init() failed: Failed to connect to GCS at address 10.0.0.1:6379\n"
    )

    assert [line.text for line in snapshot.texts] == [
        "Error: ray.init() failed: Failed to connect to GCS at address 10.0.0.1:6379"
    ]


def test_prose_only_is_reported_as_unrecognised_but_kept_for_the_phrase_rules() -> None:
    snapshot = parse_paste("hello team, could someone take a look at my cluster?\nthanks a lot\n")

    assert snapshot.kubernetes is None and snapshot.ray is None
    assert [line.text for line in snapshot.texts] == [
        "hello team, could someone take a look at my cluster?",
        "thanks a lot",
    ]
    assert snapshot.notes == ["no known output format recognised"]
    assert classify(snapshot).findings == []


def test_a_sentence_quoting_a_tool_message_is_still_read() -> None:
    # No error word in it: only the phrase rules know what the sentence quotes.
    snapshot = parse_paste(
        'Timed out after 600.000s.\nnvidia GPUs not available on Node: "gke-pool-1-4w11"\n'
    )

    (finding,) = classify(snapshot).findings
    assert finding.rule == "gpu-stack-gpu-not-advertised" and finding.cause == 3
    assert finding.subject.kind == "Node" and finding.subject.name == "gke-pool-1-4w11"


def test_a_markdown_heading_quoting_a_scheduler_message_is_read_as_the_event() -> None:
    snapshot = parse_paste("## Pod stuck: `0/3 nodes are available: 3 Insufficient nvidia.com/gpu.`\n")

    assert snapshot.kubernetes is not None
    (event,) = snapshot.kubernetes.events
    assert event.reason == "FailedScheduling" and event.message.startswith("0/3 nodes are available")


def test_prose_cannot_crowd_out_the_log_lines_pasted_after_it() -> None:
    chat = "\n".join(f"message number {i} from the long chat thread above" for i in range(3000))
    snapshot = parse_paste(
        chat + "\nE0402 12:47:47.247405       1 factory.go:112] Incompatible platform detected\n"
    )

    assert len(snapshot.texts) <= 2000
    assert snapshot.texts[-1].text.endswith("Incompatible platform detected")


def test_source_label_is_used_for_kept_text() -> None:
    snapshot = parse_paste("ERROR: Unable to connect to GCS", source="slack:C123/1700000000.1")

    assert [(line.source, line.text) for line in snapshot.texts] == [
        ("slack:C123/1700000000.1", "ERROR: Unable to connect to GCS")
    ]


def test_text_lines_are_capped_and_the_cap_is_noted() -> None:
    paste = "\n".join(f"ERROR worker {i} failed to start" for i in range(5000))

    snapshot = parse_paste(paste)

    assert len(snapshot.texts) == 2000
    assert any("3,000 further message lines were left out" in note for note in snapshot.notes)
