"""Symptom statements in prose (bot/read/prose_symptoms.py) and the findings built on them.

Every sentence here is quoted from a public thread (its address beside it), except where a comment
says it is written to the grammar: a negated, hedged or fixed form of a real one, to show what is
no statement of the symptom.
"""

from __future__ import annotations

import pytest

from bot.catalogue import default_catalogue
from bot.classify import classify
from bot.collect.paste import parse_paste
from bot.read.prose_symptoms import read_demands, read_symptoms
from bot.render.localize import localize_all

# (sentence, the kind it states, where it was written)
STATEMENTS = [
    (
        "The raycluster has been started but workers are unable to connect to ray head node:",
        "cannot-connect",
        "https://github.com/ray-project/kuberay/issues/138",
    ),
    (
        "Still worker nodes are not joining.",
        "cannot-connect",
        "https://github.com/awslabs/aws-orbit-workbench/issues/677",
    ),
    (
        "Initially, the worker node appears in the cluster, but after approximately 15 seconds, it disconnects.",
        "cannot-connect",
        "https://github.com/ray-project/ray/issues/50419",
    ),
    (
        "The problem is that after 1 minute the node corresponding to the windows machine dies, the logs only say "
        "that it got a timeout.",
        "cannot-connect",
        "https://github.com/ray-project/ray/issues/40314",
    ),
    (
        "Ray worker in US was not able to join the head node.",
        "cannot-connect",
        "https://github.com/ray-project/ray/issues/15389",
    ),
    (
        "the worker node joins join successfully for a few secs and exit without a reason.",
        "cannot-connect",
        "https://github.com/vllm-project/vllm/issues/19960",
    ),
    (
        "Installing cluster with Helm chart results in workers not connecting to head node",
        "cannot-connect",
        "https://github.com/ray-project/kuberay/issues/770",
    ),
    (
        "The logs on the master node said that the worker node has been marked dead because the detector has missed "
        "too many heartbeats from it.",
        "cannot-connect",
        "https://github.com/ray-project/ray/issues/54035",
    ),
    (
        "GCS健康检查失败,节点连接被拒绝",
        "cannot-connect",
        "https://blog.gitcode.com/ab05ff14b83948cb161c34ff9d7be561.html",
    ),
    (
        "To reproduce the problem, take two machines with different cloudpickle versions.",
        "versions-differ",
        "https://github.com/ray-project/ray/issues/1263",
    ),
    (
        "nvidia-device-plugin is starting but still no gpu-device in node description and gpu-pod FailedScheduling",
        "gpus-not-exposed",
        "https://github.com/NVIDIA/k8s-device-plugin/issues/285",
    ),
    (
        "Device plugin does not detect GPU",
        "gpus-not-exposed",
        "https://github.com/NVIDIA/k8s-device-plugin/issues/1220",
    ),
    (
        "I have two NVIDIA TitanX but Ray isn't seeing any:",
        "gpus-not-registered",
        "https://github.com/ray-project/ray/issues/5940",
    ),
    ("Why Ray doesn't see my GPUs?", "gpus-not-registered", "https://github.com/ray-project/ray/issues/5940"),
    (
        "The cluster launcher is not properly detecting GPUs in Kubernetes.",
        "gpus-not-registered",
        "https://github.com/ray-project/ray/issues/12881",
    ),
    (
        "GPUs not correctly detected on all cluster nodes",
        "gpus-unseen",
        "https://github.com/ray-project/ray/issues/34095",
    ),
    (
        "when all GPUs in the cluster are used, If create a new Pod to request 1 GPU, the Pod status shows `Pending`",
        "gpus-busy-kubernetes",
        "https://github.com/kubernetes/kubernetes/issues/44438",
    ),
    (
        "So if some actors are using all of the GPUs on a machine, then a GPU task may still be scheduled on that "
        "machine but will hang because the actors may never go away.",
        "gpus-busy-ray",
        "https://github.com/ray-project/ray/pull/403",
    ),
    (
        "the GPU node group is scaled to 0 and after some period of time will not longer scale up.",
        "not-scaling",
        "https://github.com/awslabs/aws-orbit-workbench/issues/733",
    ),
    (
        "I setup a GPU pool, and autoscaler works fine scaling up from 1 to n nodes, but not from 0 to n nodes.",
        "not-scaling",
        "https://github.com/kubernetes/autoscaler/issues/929",
    ),
    (
        "Autoscaler doesn't recognize nvidia.com/gpu when scaling up from 0 to n nodes on AWS.",
        "not-scaling",
        "https://github.com/kubernetes/autoscaler/issues/929",
    ),
    (
        "`tf-serving` stays Pending because a GPU node never gets scaled up.",
        "not-scaling",
        "https://github.com/vanvalenlab/kiosk-console/issues/238",
    ),
    (
        "Bad import in deployment __init__ causes deployment to restart forever",
        "app-start-error",
        "https://github.com/ray-project/ray/issues/17823",
    ),
    (
        "Running a model that always fails upon initialization causes Serve to keep restarting the replica infinitely.",
        "app-start-error",
        "https://github.com/ray-project/ray/issues/31121",
    ),
    (
        "However my pod stays in the pending state:",
        "pod-pending",
        "https://github.com/NVIDIA/k8s-device-plugin/issues/176",
    ),
    (
        "GPU Actors stuck in pending state",
        "ray-work-pending",
        "https://github.com/ray-project/ray/issues/32222",
    ),
    # Held: GPUs kept by work that ended or was left behind (cause 5 for Ray work, 1 for Pods).
    (
        "GPU resources not released after killing actor",
        "gpus-busy-ray",
        "https://github.com/ray-project/ray/issues/1065",
    ),
    (
        "GPUs are never freed once an actor consumes them.",
        "gpus-busy-ray",
        "https://github.com/ray-project/ray/pull/302",
    ),
    (
        "In my opinion, `kubelet` didn't release the GPU mapping when the container died(the `Pod` is active), so "
        "will lead to GPUs has been in use and the available number of GPU is 0 all the way.",
        "gpus-busy-kubernetes",
        "https://github.com/kubernetes/kubernetes/pull/42116",
    ),
    (
        "在k8s集群中，如果删除一个正在运行的torch程序pod，发现vgpu资源没有被释放，会产生一堆oriond程序",
        "gpus-busy-kubernetes",
        "https://github.com/virtaitech/orion/issues/23",
    ),
    (
        "[Autoscaler] Cluster not autoscaling",
        "not-scaling",
        "https://github.com/ray-project/xgboost_ray/issues/11",
    ),
    (
        "Increase to 200 actors, still not autoscaling triggered",
        "not-scaling",
        "https://github.com/ray-project/xgboost_ray/issues/11",
    ),
    # The cloud has no machine for the scale-up, or the new nodes stay launching (cause 9).
    (
        "I ran into this issue because frequently, spot instances are not available on AWS.",
        "not-scaling",
        "https://github.com/ray-project/ray/issues/20774",
    ),
    (
        "The cluster-autoscaler's requests to scale up/down can sometimes fail because of AWS didn't have the "
        "capacity to meet the demand.",
        "not-scaling",
        "https://github.com/2i2c-org/infrastructure/issues/3334",
    ),
    (
        "[Core] Ray Worker stuck in launching state - Azure AKS",
        "not-scaling",
        "https://github.com/ray-project/ray/issues/45775",
    ),
    (
        "[Core] Autoscaled nodes stuck in launching status",
        "not-scaling",
        "https://github.com/ray-project/ray/issues/27515",
    ),
    (
        "during autoscaling it launches 54 workers and 8 workers are stuck `Launching` stage.",
        "not-scaling",
        "https://github.com/ray-project/kuberay/issues/4206",
    ),
]

# Sentences that state no symptom: healthy, negated, hedged, a question, a fix, an expectation.
NOT_STATEMENTS = [
    # A question whether something is so (ray-project/ray#45440).
    "Is that a problem for ray to detect GPUs?",
    # ray-project/ray#49912, a question in its title.
    "Does the Python version of the [Ray] ray client have to be the same as that of the ray cluster?",
    # A fix (ray-project/ray#40314).
    "The problem was that I needed to add a new Firewall rule opening the ports. Now the node doesn't die and "
    "everything works.",
    # Healthy network settings (ray-project/ray#50419).
    "Ensured that both machines are in the same security group, with inbound rules allowing communication.",
    "Network Configuration: Security groups allow communication on port 6379.",
    # Negated busy (NVIDIA/k8s-device-plugin#102).
    "none are in-use by the system or another pod.",
    # An expectation (vanvalenlab/kiosk-console#238; ray-project/ray#16597).
    "I expect a GPU node to be deployed to meet the needs of the `tf-serving` pod.",
    "Constructor failure should fail deploy()",
    # A conditional (ray-project/ray#408).
    "If a local scheduler is assigned a GPU task but can't run it in the forseeable future because actors have "
    "acquired all of the GPUs, it could push the task back to the global scheduler.",
    # A bare "job" may be a Kubernetes Job: no subject of one layer (NVIDIA/k8s-device-plugin#35).
    "the gpu job shows pending",
    # Chinese question (Unakar/Logic-RL#30).
    "请问大佬有遇到ray init不匹配的问题吗？",
    # Written to the grammar: the negated, resolved and hedged forms of the statements above.
    "The pod is not pending anymore.",
    "The workers are no longer pending and all joined.",
    "I fixed it by opening port 6379, now the workers connect.",
    "Maybe the GPUs are all in use?",
    "Both the head and the workers run the same Ray version.",
    "Ray detects all 8 GPUs on each node.",
    # Written to the grammar: autoscaling not used is no autoscaler failing.
    "We are not using autoscaling on this cluster.",
    # How a release works, said by a maintainer, is no GPU held (ray-project/ray#1229, #15594).
    "When the first actor goes out of scope, it should release the GPU resource.",
    "Note that the GPU resources are not released synchronously.",
    "In ray the Actors (python classes) specify their requirements so the gpu is pinned to the Counter object and "
    "will not be released until that object is destroyed.",
    # Who frees devices, not a device held (NVIDIA/k8s-device-plugin#290).
    "The device plugin doesn’t allocate or release resources itself.",
    # GPU memory a process keeps is nvidia-smi's business, not a logical GPU held (written to the grammar).
    "The actor still uses GPU memory after the task ends.",
    # A zone that has the machines, and a hedge about one that may not (NVIDIA/cudf-spark#2418,
    # 2i2c-org/infrastructure#3381).
    "Don't know how to check how many GPU instances in every zone, but found only zone `us-west-2c` has sufficient "
    "`2xlarge` instance.",
    "I think there may be an issue if we specify a region where the GPU isn't available, but I'm not sure - maybe not.",
    # A command's flags are no words: ``--block`` blocks no port (ray-project/ray#10827).
    "srun --nodes=1 --ntasks=1 -w $node1 ray start --block --head --redis-port=6379 --redis-password=$redis_password "
    "& # Starting the head",
]


@pytest.mark.parametrize(("sentence", "kind", "address"), STATEMENTS, ids=[s[:40] for s, _, _ in STATEMENTS])
def test_a_statement_is_read_as_its_kind(sentence: str, kind: str, address: str) -> None:
    symptoms = read_symptoms(sentence)
    assert [s.kind for s in symptoms] == [kind], address
    assert symptoms[0].quote in sentence


@pytest.mark.parametrize("sentence", NOT_STATEMENTS)
def test_what_is_no_statement_of_a_symptom_reads_as_none(sentence: str) -> None:
    assert read_symptoms(sentence) == []


def test_one_sentence_has_one_owner() -> None:
    # aws-orbit-workbench#733: the scale-up and the Pending Pods are two sentences, two statements,
    # but each sentence is read as one kind only.
    text = (
        "the GPU node group is scaled to 0 and after some period of time will not longer scale up. Pods are stuck "
        "in a Pending mode waiting to be schedule."
    )
    assert [s.kind for s in read_symptoms(text)] == ["not-scaling", "pod-pending"]


@pytest.mark.parametrize(
    ("sentence", "gpus", "unit"),
    [
        # ray-project/ray-summit-training#44 (corpus found-heldout5).
        ("The issue case, 1gpu for each node + ask for 2gpu for each replica", 2.0, "replica"),
        # Written to the grammar: the per-unit forms the brief names.
        ("each trial requests 4 GPUs", 4.0, "trial"),
        ("I ask for 2 GPUs for each replica", 2.0, "replica"),
        ("num_gpus=2 per actor", 2.0, "actor"),
        ("每个 trial 需要 4 张卡", 4.0, "trial"),
    ],
)
def test_per_unit_asks_are_read(sentence: str, gpus: float, unit: str) -> None:
    [demand] = read_demands(sentence)
    assert (demand.gpus, demand.unit) == (gpus, unit)


@pytest.mark.parametrize(
    "sentence",
    [
        # ray-project/ray#1180: one GPU per task, counted against the cluster's sum.
        "I have 144 tasks per batch, each requiring 1 GPU, and I have 160 GPUs in the ray cluster in total.",
        # A question about an ask is no ask.
        "Can each trial request 4 GPUs?",
    ],
)
def test_sums_and_questions_are_no_per_unit_ask(sentence: str) -> None:
    assert read_demands(sentence) == []


def test_an_ask_above_every_stated_node_is_cause_6_quoting_both_sentences() -> None:
    text = "each trial requests 4 GPUs and each node has 2 GPUs"
    [finding] = [f for f in classify(parse_paste(text)).findings if f.rule == "ray-stated-ask-exceeds-node"]
    assert finding.cause == 6
    assert finding.severity == "warning"
    assert finding.params["needed"] == "4" and finding.params["total"] == "2"
    assert all(e.source == "user's words" for e in finding.evidence)


def test_an_ask_within_the_largest_ray_node_stays_quiet() -> None:
    # The words ask for 4 per trial; ray status, pasted beside them, shows nodes of 8.
    status = "\n".join(
        [
            "======== Autoscaler status: 2024-09-23 01:17:18.277326 ========",
            "Node status",
            "---------------------------------------------------------------",
            "Active:",
            " 2 ray.worker.gpu",
            "Pending:",
            " (no pending nodes)",
            "Recent failures:",
            " (no failures)",
            "",
            "Resources",
            "---------------------------------------------------------------",
            "Usage:",
            " 0.0/32.0 CPU",
            " 0.0/16.0 GPU",
            "",
            "Demands:",
            " (no resource demands)",
        ]
    )
    diagnosis = classify(parse_paste("each trial requests 4 GPUs\n\n" + status))
    assert "ray-stated-ask-exceeds-node" not in [f.rule for f in diagnosis.findings]


def test_ray_figures_above_zero_outrank_the_words() -> None:
    # "Ray does not see my GPUs" beside a ray status that counts 16 GPUs: the output decides.
    status = "Resources\n---------\nUsage:\n 0.0/32.0 CPU\n 0.0/16.0 GPU\n\nDemands:\n (no resource demands)"
    diagnosis = classify(parse_paste("I have two NVIDIA TitanX but Ray isn't seeing any:\n\n" + status))
    assert "ray-gpus-said-not-registered" not in [f.rule for f in diagnosis.findings]


def test_findings_on_words_are_warnings_at_most_and_name_a_settling_command() -> None:
    catalogue = default_catalogue()
    for rule in catalogue:
        if rule.detector in {"stated_symptom", "stated_demand_exceeds_node"}:
            assert rule.severity in {"warning", "info"}, rule.id
            assert rule.reads == ["retelling"], rule.id
            assert rule.commands, rule.id
            assert (rule.cause is None) == (rule.severity == "info"), rule.id


def test_open_layer_findings_carry_no_cause_and_the_quote() -> None:
    [finding] = classify(parse_paste("GPUs not correctly detected on all cluster nodes")).findings
    assert finding.rule == "gpus-said-unseen-layer-open"
    assert finding.cause is None and finding.severity == "info"
    assert finding.evidence[0].text == "GPUs not correctly detected on all cluster nodes"


def test_the_chinese_text_is_our_own_and_the_quote_stays_as_written() -> None:
    text = "The raycluster has been started but workers are unable to connect to ray head node:"
    diagnosis = classify(parse_paste(text))
    [zh] = [
        f
        for f in localize_all(diagnosis, default_catalogue(), "zh")
        if f.rule == "ray-workers-said-cannot-connect"
    ]
    assert zh.title.startswith("按你的描述")
    assert zh.evidence[0].text == text
    assert zh.commands[0].startswith("kubectl logs")


@pytest.mark.parametrize(
    "line",
    [
        # ray-project/ray#35711 and #10827: Slurm scripts that start Ray. A command line is what a person
        # ran, not what they say they see, whatever its flags spell (``--block``, ``--port``).
        'ray start --head --node-ip-address="$head_node_ip" --port=$port --num-cpus "${SLURM_CPUS_PER_TASK}" --block &',
        "ray start --head --block --dashboard-host 0.0.0.0 --port=6379 &",
    ],
)
def test_a_command_line_states_nothing(line: str) -> None:
    stated = parse_paste(line).stated
    assert stated is None or not stated.symptoms


def test_a_sentence_about_a_command_flag_is_still_read() -> None:
    # Written to the grammar: words go on after the flags, so the line is a sentence, not a command.
    [symptom] = read_symptoms(
        "ray start --head --port=6379 --block works, but the workers cannot connect to the head."
    )
    assert symptom.kind == "cannot-connect"
