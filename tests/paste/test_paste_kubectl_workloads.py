"""``kubectl get workloads``: Kueue's printer columns in their current and older layouts.

The tables are quoted from public Kueue docs, tutorials and issue threads.
"""

from __future__ import annotations

from bot.collect.paste import parse_paste
from bot.read.kueue_tables import WORKLOADS_FORMAT
from bot.snapshot.kubernetes import KueueWorkload

CURRENT = """\
$ kubectl get workloads
NAME                               QUEUE   RESERVED IN   ADMITTED   FINISHED   AGE
jobset-ddp-long-408229-28e60       gpu     gpu           True                  26s
jobset-nvl8-hello-912542-a34fa     gpu                   False                 21s
"""

ALL_NAMESPACES_EMPTY_CELLS = """\
NAMESPACE              NAME                      QUEUE          RESERVED IN   ADMITTED   FINISHED   AGE
gang-scheduling-test   job-gang-test-job-09418   gang-test-lq                                       3s
"""

SEVERAL_KINDS = """\
NAME                                                     QUEUE        RESERVED IN   ADMITTED
workload.kueue.x-k8s.io/job-hami-kueue-running-a-59997   hami-queue   hami-cq       True
workload.kueue.x-k8s.io/job-hami-kueue-pending-c-d854d   hami-queue
"""

WITHOUT_FINISHED = """\
NAMESPACE   NAME                        QUEUE                     RESERVED IN   ADMITTED   AGE
team-a      job-reserved-job-aaaaa-x    team-a-reserved-queue     reserved-cq   True       30s
team-b      job-reserved-job-eeeee-x    team-b-reserved-queue                   False      22s
"""


def _workloads(text: str) -> dict[str, KueueWorkload]:
    snapshot = parse_paste(text)
    assert snapshot.kubernetes is not None
    return {w.name: w for w in snapshot.kubernetes.workloads}


def test_current_columns_tell_admitted_from_waiting() -> None:
    workloads = _workloads(CURRENT)

    assert workloads["jobset-ddp-long-408229-28e60"].admitted
    waiting = workloads["jobset-nvl8-hello-912542-a34fa"]
    assert not waiting.admitted
    assert waiting.queue == "gpu"
    assert WORKLOADS_FORMAT.label in parse_paste(CURRENT).notes


def test_empty_reserved_and_admitted_cells_are_a_wait() -> None:
    workload = _workloads(ALL_NAMESPACES_EMPTY_CELLS)["job-gang-test-job-09418"]

    assert (workload.namespace, workload.queue, workload.admitted) == (
        "gang-scheduling-test",
        "gang-test-lq",
        False,
    )


def test_kind_prefix_of_a_several_kinds_get_is_dropped() -> None:
    workloads = _workloads(SEVERAL_KINDS)

    assert workloads["job-hami-kueue-running-a-59997"].admitted
    assert not workloads["job-hami-kueue-pending-c-d854d"].admitted


def test_table_without_finished_column() -> None:
    workloads = _workloads(WITHOUT_FINISHED)

    assert workloads["job-reserved-job-aaaaa-x"].admitted
    assert not workloads["job-reserved-job-eeeee-x"].admitted
    assert workloads["job-reserved-job-eeeee-x"].namespace == "team-b"
