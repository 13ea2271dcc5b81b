"""Facts people state in words around what they paste: versions, GPUs per node, workers that run
but never joined.

"Ray 2.9 on the cluster, 2.10 locally", "2 nodes with 8 x A100 each", "the pods are Running but
``ray status`` shows one node": a sentence like these settles what no output in the paste shows.
Each one read becomes a typed fact of :mod:`bot.snapshot.stated`, with the sentence it came from,
and the rules that judge such facts say that they come from the user's words.

Why this is called from the loose-lines reader and is no ``READERS`` entry: prose is no block with
a start a reader could claim; it is whatever no format claimed, one sentence between two outputs,
or a line left over inside a block. The loose-lines reader already sees every such line once, as a
logical line, so it hands each sentence here too; a line a format understood (a log line, an event
row) is never read as prose.

The grammar is general, in English and some Chinese, never a match for one text:

* a version is a number such as ``2.9``, ``2.10.0`` or ``3.10`` near a word for where it runs:
  cluster, head, worker, image, pod, remote, server for the cluster; client, local, laptop, driver,
  notebook, submitter for the client. A sentence is cut into clauses at commas, ``but``, ``and``,
  ``vs`` and the like, and each version takes the nearest such word of its own clause, else the
  place of the clause before it in the same sentence ("Client: ray 2.10.0, python 3.11"); a
  version no place word of its sentence reaches is no fact ("upgraded from 2.9 to 2.10", "Ray
  version: 2.9"). The first of ``from X to Y`` is what was left behind, never a version in use;
  a sentence that weighs alternatives (either, or, between, supports) states none;
* what the version is of: ``ray``/``python`` written just before it (``ray==2.9.0``, ``Python
  3.10``, ``py310``, ``rayproject/ray:2.9.0``), else the component the clause or the sentence names
  (a later clause inherits it), else, with no component named at all, Ray for ``0.x``-``2.x`` and
  Python for ``3.x``. A number right after another tool's name (CUDA, Kubernetes, KubeRay, torch,
  a driver) is that tool's and is skipped;
* GPUs per node: a count with a GPU word or model (``8 x A100``, ``one A10G``, ``2 GPUs``) in a
  clause that says it is per node or per machine (each, per node, every node, in my machine, a node
  with, ``2 nodes with ... each``), or a single named card a person has; a clause that asks for
  GPUs (need, request, use, ``num_gpus``) or sums a cluster (in total, across) states no capacity;
* a join gap: Pods or workers said to run, and in the same sentence Ray said to show fewer nodes
  (``ray status`` shows one node / only the head) or the workers said not to join;
* what the person says they see (workers that cannot connect, GPUs Ray does not see, a node group
  that does not scale up, a replica failing in its constructor) and per-unit GPU asks ("each trial
  requests 4 GPUs"): :mod:`bot.read.prose_symptoms` holds that vocabulary.

Work is bounded: only lines up to ``MAX_PROSE_CHARS`` are read, each by a few linear regexes.
"""

from __future__ import annotations

import re

from bot.read.formats import Format, Tag
from bot.read.found import Found
from bot.read.prose_symptoms import read_demands, read_symptoms
from bot.snapshot.stated import Component, Side, StatedJoinGap, StatedNodeGpus, StatedVersion

STATED_FORMAT = Format("facts stated in words", Tag.PROSE)

# Longer than this, a line is no sentence a person wrote about their cluster.
MAX_PROSE_CHARS = 1500
# What people write around their output is a few paragraphs; past this much prose in one paste
# (a pasted document, a flood of chat), the rest is not read for facts, so the work stays bounded.
MAX_PROSE_PER_PASTE = 100_000
_MAX_FACTS_PER_LINE = 8

# A log line or a traceback frame is output, not a person's words.
_NOT_PROSE = re.compile(
    r"^\s*(?:\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d|[IWEF]\d{4} \d\d:\d\d|"
    # glog's level and month-day (``W 08-21 17:56:48 instance.py:1028]``), as SkyPilot and absl print it.
    r"[IWEFD] \d\d-\d\d \d\d:\d\d:\d\d|\(\w[\w ,=+.:-]{0,80}\)\s|"
    r"(?:WARNING|ERROR|CRITICAL|INFO|DEBUG)\b|File \"|Traceback|\$ |>>> |[a-z_]+\s*=\s*\S|"
    # ``image: rayproject/ray:2.9.0``, ``helm.sh/chart: ray-cluster-0.3.0``: a key and one value.
    r"-?\s*[\w./-]+:\s*\S+\s*$|"
    # ``ray start --head --port=6379 --block &``: a whole command line, whose flags are no words of a
    # person (a sentence that goes on after the flags, "ray start --num-gpus 4 is ignored", is one).
    r"(?:sudo\s+)?(?:ray|kubectl|helm|docker|srun|sbatch|salloc|mpirun|python3?|pip3?|aws|gcloud|eksctl)"
    r"(?:\s+[\w./:=@-]+){0,2}(?:\s+--?[a-z][\w.-]*(?:[= ][^\s-]\S*)?)+\s*[&\\]?\s*$)"
)

# Clause boundaries: punctuation, and the words that join two statements.
_CLAUSE = re.compile(
    r"[;；，。!?！？\[\]|]|,\s|\.\s|\s/\s|\s(?:but|while|whereas|and|vs\.?|versus|yet|though|although|"
    r"however|whilst)\s|但是?|而|以及|和|与|对比"
)

# Sentence ends: a stop, or a mark, before a space (never the dot inside ``2.9`` or ``node.js``).
_SENTENCE = re.compile(r"(?<=[.!?])\s+|[。！？]")

# --- versions -----------------------------------------------------------------------------------

_VERSION = re.compile(
    r"(?<![\w.-])v?(?P<v>\d{1,2}\.\d{1,3}(?:\.\d{1,4})?(?:rc\d+|\.dev\d*|\.post\d+)?)(?![\w.]*\d)"
    r"(?!\s*(?:%|[kmgtp]i?b\b|gb|x\b|×|ms\b|s\b|sec|ghz|hours?\b|h\b|min|days?\b|cpus?\b|gpus?\b|cores?\b|"
    r"nodes?\b|times\b|replicas?\b|it/s|w\b))",
    re.IGNORECASE,
)
# ``py310``, ``cp311``, ``python3.10``: a Python version written as a tag.
_PY_TAG = re.compile(r"\b(?:py|cp)(?P<major>3)(?P<minor>\d{1,2})\b", re.IGNORECASE)
# ``rayproject/ray:2.9.0-py310``: an image tag names the Ray version (and maybe Python's).
_RAY_IMAGE = re.compile(r"\bray(?:-ml|-llm)?:(?P<v>\d+\.\d+\.\d+)", re.IGNORECASE)
# ``from 2.9 to 2.10``, ``2.9 -> 2.10``, ``从 2.9 升级到 2.10``: the first is no longer in use.
_LEFT_BEHIND = re.compile(
    r"(?:(?:\bfrom|从)\s*(?:ray|python)?\s*v?(?P<old>\d+\.\d+(?:\.\d+)?)\s*(?:to\b|升级到|升到|降级到|降到|到|->|→|=>)"
    r"|(?P<old2>\d+\.\d+(?:\.\d+)?)\s*(?:->|→|=>))",
    re.IGNORECASE,
)
# A sentence that weighs versions ("works with 2.9 or 2.10", "supports 2.9 and up") places none.
_BETWEEN = re.compile(r"\bbetween\b|\bor\b|\beither\b|或者?|\bsupports?\b|兼容", re.IGNORECASE)

_RAY_WORD = re.compile(r"\bray\b", re.IGNORECASE)
_PYTHON_WORD = re.compile(r"\bpy(?:thon)?\s*\d?|\bpy-version", re.IGNORECASE)
# Other software whose version numbers look like Ray's or Python's.
_OTHER_WORD = re.compile(
    r"\b(?:cuda|cudnn|nccl|nvidia|driver\s+version|torch|pytorch|tensorflow|tf|jax|vllm|kuberay|operator|"
    r"helm|chart|kubernetes|k8s|kubectl|kubelet|eks|gke|aks|openshift|minikube|ubuntu|centos|debian|"
    r"rhel|gcc|glibc|java|node\.?js|golang|numpy|pandas|pyarrow|arrow|transformers|deepspeed|accelerate|"
    r"protobuf|grpcio?|pip|conda|setuptools|spark|dask|modin|xgboost|lightgbm|gym|gymnasium|redis|"
    r"containerd|compute\s+capability|macos|windows|opentelemetry|"
    r"pydantic|fastapi|starlette|uvicorn|aiohttp|click|boto3?|airflow|mlflow|wandb)\b",
    re.IGNORECASE,
)
# The word just before a version binds it: ``Ray 2.9``, ``python==3.10``, ``CUDA 12.1``.
_BINDING_WINDOW = 24

_SIDES: tuple[tuple[Side, re.Pattern[str]], ...] = (
    (
        "client",
        re.compile(
            r"\b(?:client|clients|local|locally|laptop|macbook|mac|desktop|workstation|notebook|jupyter|"
            r"driver|submitter|submitting|submission\s+machine|dev\s*box|my\s+(?:machine|side|end|env|"
            r"environment|venv|computer|pc))\b|本地|客户端|笔记本|本机",
            re.IGNORECASE,
        ),
    ),
    ("head", re.compile(r"\bhead(?:\s*(?:node|pod))?\b|头节点", re.IGNORECASE)),
    ("worker", re.compile(r"\bworkers?(?:\s*(?:nodes?|pods?|groups?))?\b|工作节点", re.IGNORECASE)),
    (
        "cluster",
        re.compile(
            r"\b(?:cluster|clusters|remote|server|servers|image|images|container|containers|pods?|"
            r"raycluster|rayversion|deployed|deployment)\b|集群|服务端|服务器|镜像|远端|远程",
            re.IGNORECASE,
        ),
    ),
)
# ``nvidia driver``, ``GPU driver``: the graphics driver, not a Ray driver (the client side).
_GRAPHICS_DRIVER = re.compile(r"\b(?:nvidia|gpu|cuda|graphics|display)\s+driver\b", re.IGNORECASE)


def _component_before(clause: str, start: int) -> str | None:
    """What the words just before a version say it is of: ``ray``, ``python``, ``other`` (another
    tool's version), or None when nothing binds it."""
    window = clause[max(0, start - _BINDING_WINDOW) : start]
    last: tuple[int, str] | None = None
    for pattern, kind in ((_RAY_WORD, "ray"), (_PYTHON_WORD, "python"), (_OTHER_WORD, "other")):
        for match in pattern.finditer(window):
            if last is None or match.start() >= last[0]:
                last = (match.start(), kind)
    return None if last is None else last[1]


def _clause_component(clause: str) -> Component | None:
    ray, python = bool(_RAY_WORD.search(clause)), bool(_PYTHON_WORD.search(clause))
    if ray and not python:
        return "ray"
    if python and not ray:
        return "python"
    return None


def _by_shape(version: str) -> Component | None:
    """With no component named at all: Ray's releases are 0.x to 2.x, Python's 3.x."""
    major, _, rest = version.partition(".")
    minor = rest.split(".", 1)[0]
    if not (major.isdigit() and minor.isdigit()):
        return None
    if major == "3" and 6 <= int(minor) <= 14:
        return "python"
    if major in {"0", "1", "2"}:
        return "ray"
    return None


def _side(clause: str, start: int, end: int) -> Side | None:
    """The place-word of the clause nearest to the version at ``start``-``end``."""
    best: tuple[int, Side] | None = None
    for side, pattern in _SIDES:
        for match in pattern.finditer(clause):
            if side == "client" and match.group(0).lower() == "driver":
                before = clause[max(0, match.start() - 12) : match.end()]
                if _GRAPHICS_DRIVER.search(before) or re.match(r"\s*version", clause[match.end() :], re.I):
                    continue
            distance = match.start() - end if match.start() >= end else start - match.end()
            if best is None or distance < best[0]:
                best = (distance, side)
    return best[1] if best else None


def _clauses(line: str) -> list[str]:
    return [part for part in _CLAUSE.split(line) if part and part.strip()]


def _component(
    bound: str | None, own: Component | None, carried: Component | None, named: set[str], version: str
) -> Component | None:
    """What a version is of: the word just before it, else the clause's or an earlier clause's
    component, else its shape, if the sentence names that component or names none."""
    if bound == "ray":
        return "ray"
    if bound == "python":
        return "python"
    if bound == "other":
        return None
    if own is not None:
        return own
    if carried is not None:
        return carried
    shape = _by_shape(version)
    if shape is None:
        return None
    if shape in named or not named:
        return shape
    return None


def read_versions(line: str, quote: str | None = None) -> list[StatedVersion]:
    """Versions of Ray and Python the sentence places on a side (client, cluster, head, worker)."""
    if not any(ch.isdigit() for ch in line):
        return []
    left_behind = {m.group("old") or m.group("old2") for m in _LEFT_BEHIND.finditer(line)}
    named = {
        name
        for name, pattern in (("ray", _RAY_WORD), ("python", _PYTHON_WORD), ("other", _OTHER_WORD))
        if pattern.search(line)
    }
    facts: list[tuple[Component, Side, str]] = []
    carried: Component | None = None
    for sentence in _SENTENCE.split(line):
        if not _BETWEEN.search(sentence):
            carried = _sentence_versions(sentence, carried, named, left_behind, facts)
    # Records are made last, and few: each one redacts its quote.
    return [
        StatedVersion(component=component, side=side, version=version, quote=quote or line)
        for component, side, version in facts[:_MAX_FACTS_PER_LINE]
    ]


def _sentence_versions(
    sentence: str,
    carried: Component | None,
    named: set[str],
    left_behind: set[str],
    facts: list[tuple[Component, Side, str]],
) -> Component | None:
    """Add the versions one sentence places to ``facts``; the component a next sentence inherits.

    A clause that names no place takes the place of the clause before it in the same sentence
    ("Client: ray 2.10.0, python 3.11"), never one of another sentence."""
    last_side: Side | None = None
    for clause in _clauses(sentence):
        own = _clause_component(clause)
        found_here: list[tuple[Component, str, int, int]] = []
        for image in _RAY_IMAGE.finditer(clause):
            found_here.append(("ray", image.group("v"), image.start(), image.end()))
            if tag := _PY_TAG.search(clause, image.end(), image.end() + 12):
                found_here.append(("python", f"3.{tag.group('minor')}", image.start(), image.end()))
        for tag in _PY_TAG.finditer(clause):
            if not any(start <= tag.start() < end for _, _, start, end in found_here):
                found_here.append(("python", f"3.{tag.group('minor')}", tag.start(), tag.end()))
        for match in _VERSION.finditer(clause):
            version = match.group("v")
            if version in left_behind or any(s <= match.start() < e for _, _, s, e in found_here):
                continue
            bound = _component_before(clause, match.start())
            component = _component(bound, own, carried, named, version)
            if component is not None:
                found_here.append((component, version, match.start(), match.end()))
        sides = [_side(clause, start, end) for _, _, start, end in found_here]
        if found_here and not any(sides):
            sides = [last_side] * len(found_here)
        for (component, version, _, _), side in zip(found_here, sides, strict=True):
            if side is not None and (component, side, version) not in facts:
                facts.append((component, side, version))
        last_side = next((side for side in reversed(sides) if side), None) or _side(clause, 0, 0) or last_side
        carried = own or (found_here[-1][0] if found_here else carried)
    return carried


# --- GPUs per node ------------------------------------------------------------------------------

_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "single": 1,
    "a single": 1,
    "two": 2,
    "dual": 2,
    "three": 3,
    "four": 4,
    "quad": 4,
    "six": 6,
    "eight": 8,
    "sixteen": 16,
    "一": 1,
    "单": 1,
    "两": 2,
    "二": 2,
    "双": 2,
    "三": 3,
    "四": 4,
    "六": 6,
    "八": 8,
}
_COUNT = (
    r"(?:\d{1,3}|a\s+single|a|an|one|single|two|dual|three|four|quad|six|eight|sixteen|[一单两二双三四六八])"
)
_MODEL = (
    r"(?:(?:nvidia\s+)?(?:geforce\s+|tesla\s+|quadro\s+)?"
    r"(?:[ABH]100|H200|H800|A800|GB?200|B200|V100|P100|P40|P4|T4|L4|L40S?|A10G?|A30|A40|A[456]000|"
    r"RTX\s*[A-Z]?\d{4}(?:\s*Ti)?|GTX\s*\d{3,4}(?:\s*Ti)?|(?:10[678]0|20[678]0|30[6789]0|40[6789]0|50[789]0)"
    r"(?:\s*Ti)?|K80|M60|MI\d{3}X?|Titan\s*\w+))"
)
_GPU_NOUN = r"(?:gpus?|graphics\s+cards?|cards?|显卡|卡|张卡|块卡)"
# ``8 x A100``, ``one A10G``, ``2 GPUs``, ``4x V100 GPUs``, ``两张 4090``, ``8 卡``.
_COUNTED = re.compile(
    rf"(?<![\w.])(?P<count>{_COUNT})\s*(?:x|×|\*|张|块|个)?\s*"
    rf"(?:(?P<model>{_MODEL})\s*(?:{_GPU_NOUN})?|(?P<noun>{_GPU_NOUN})(?:\s*(?P<model2>{_MODEL}))?)(?![\w-]*\s*(?:nodes?|machines?|servers?|hosts?|instances?|workers?|pool|节点|机器))",
    re.IGNORECASE,
)
# ``A100 x 8``, ``A100*8``.
_MODEL_TIMES = re.compile(rf"(?P<model>{_MODEL})\s*(?:x|×|\*)\s*(?P<count>\d{{1,2}})\b", re.IGNORECASE)
_PER_NODE = re.compile(
    r"\b(?:each|per\s+(?:node|machine|host|server|instance|worker|pod|box|vm)|every\s+(?:node|machine|host|server|"
    r"worker)|in\s+(?:a|the|one|my|each)\s+(?:node|machine|host|server|box|pc|computer|workstation|desktop|laptop)|"
    r"(?:a|one|the|my)\s+(?:node|machine|host|server|box|pc|computer|workstation|desktop|laptop|instance)s?\s+"
    r"(?:with|has|have)|(?:node|machine|host|server|instance|worker)s?\s+(?:with|has|have|of)|on\s+(?:a|each|my|"
    r"the)\s+(?:node|machine|host|server|box|pc|desktop|laptop|workstation))\b"
    r"|每个?(?:节点|机器|台|服务器|worker)|单机|单节点|每台",
    re.IGNORECASE,
)
_HAVING = re.compile(
    r"\b(?:have|has|having|had|got|with|equipped|own|running\s+on|run\s+on|i'?m\s+on)\b|有|配", re.I
)
_ASKING = re.compile(
    r"\b(?:need|needs|needed|request|requests|requested|requesting|require|requires|required|ask|asks|asked|"
    r"want|wants|wanted|use|uses|using|used|allocat\w*|assign\w*|reserv\w*|num_gpus|use_gpu|gpus_per|"
    r"tensor_parallel|trial|task|actor|job|replica|bundle|free|available|idle|busy|visible|detect\w*|"
    r"shows?|sees?|reports?|registers?|only\s+sees?)\b|需要|申请|请求|使用|可用",
    re.IGNORECASE,
)
_SUMMED = re.compile(
    r"\b(?:in\s+total|total|across|altogether|combined|overall|all\s+together)\b|总共|一共|合计", re.I
)
_NODE_COUNT = re.compile(
    rf"(?<![\w.])(?P<count>{_COUNT})\s*(?:gpu\s+)?(?:nodes|machines|servers|hosts|instances|workers|台|个节点)",
    re.IGNORECASE,
)


def _count(text: str) -> int | None:
    word = re.sub(r"\s+", " ", text.strip().lower())
    if word.isdigit():
        return int(word)
    return _NUMBER_WORDS.get(word)


def _model_name(text: str | None) -> str | None:
    if not text:
        return None
    name = re.sub(r"^(?:nvidia\s+)?(?:geforce\s+|tesla\s+|quadro\s+)?", "", text.strip(), flags=re.I)
    return re.sub(r"\s+", " ", name).upper().replace("TI", "Ti")


def read_node_gpus(line: str, quote: str | None = None) -> list[StatedNodeGpus]:
    """GPUs each node (or the one machine) has, as the sentence states them."""
    facts: list[tuple[float, str | None]] = []
    nodes: int | None = None
    for sentence in _SENTENCE.split(line):
        if _SUMMED.search(sentence):
            continue  # "16 GPUs in total", "across 2 nodes": the cluster's sum, not a node's
        facts += _sentence_gpus(sentence)
        if node_count := _NODE_COUNT.search(sentence):
            nodes = _count(node_count.group("count"))
    # ``2 nodes with 8 x A100 each``: the count of nodes may come before or after the GPUs.
    return [
        StatedNodeGpus(gpus=gpus, model=model, nodes=nodes, quote=quote or line)
        for gpus, model in facts[:_MAX_FACTS_PER_LINE]
    ]


def _sentence_gpus(sentence: str) -> list[tuple[float, str | None]]:
    facts: list[tuple[float, str | None]] = []
    asked = False
    for clause in _clauses(sentence):
        # Asking words hold from where they stand to the end of the sentence ("uses ... (1 GPU per
        # worker)"); a later clause that says on its own what a node has ("each node has 2 GPUs")
        # states capacity again, and a count before the first asking word is still one.
        ask = _ASKING.search(clause)
        if asked and not (ask is None and _PER_NODE.search(clause) and _HAVING.search(clause)):
            continue
        asked = asked or ask is not None
        limit = ask.start() if ask is not None else len(clause)
        per_node = _PER_NODE.search(clause, 0, limit)
        for match in (*_COUNTED.finditer(clause, 0, limit), *_MODEL_TIMES.finditer(clause, 0, limit)):
            gpus = _count(match.group("count"))
            groups = match.groupdict()
            model = _model_name(groups.get("model") or groups.get("model2"))
            if not gpus or gpus > 64:
                continue
            if match.group("count").lower() in {"a", "an"} and model is None:
                continue  # "all nodes have a GPU" says they have GPUs, not how many
            said_single = "single" in match.group("count").lower() or match.group("count") == "单"
            single = gpus == 1 and model is not None and (said_single or _HAVING.search(clause) is not None)
            if not (per_node or single):
                continue
            facts.append((float(gpus), model))
            break
    return facts


# --- join gaps ----------------------------------------------------------------------------------

_PODS_RUN = re.compile(
    r"\b(?:(?:worker\s+)?pods|workers?(?:\s+(?:pods?|nodes?))?|all\s+(?:the\s+)?pods|both\s+pods|containers)\b"
    r"[^.;:!?]{0,60}?\b(?:are|is|show|shows|showing|in|all|look|looks|as|being)?\s*(?:running|ready|up|healthy|1/1)\b"
    r"|\b(?:can\s+see|i\s+see|there\s+are|we\s+have|i\s+have)\s+\d+\s+(?:head\s+and\s+\d+\s+)?worker"
    r"|(?:pod|worker)[^。，]{0,20}(?:都是|均为|都|已经)?\s*(?:running|ready|运行中|在运行)",
    re.IGNORECASE,
)
_RAY_SHORT = re.compile(
    r"(?:ray\s+status|ray\s+list\s+nodes|ray\.nodes\(\)|dashboard|ray\s+cluster|the\s+cluster)[^.;!?]{0,60}?"
    r"(?:shows?|showing|lists?|listing|reports?|has|sees?|only|displays?|contains?)\s+(?:only\s+|just\s+)?"
    r"(?P<n>\d+|one|a\s+single|the\s+head|head)\s*(?:\(?the\s+head\)?\s*)?(?:nodes?|node\(s\)|head|$|[\s.,])"
    r"|\b(?:workers?|worker\s+(?:nodes?|pods?)|nodes?|pods?)\s+(?:are|is|were|was|do|does|did)?\s*(?:not|never|n't)\s+"
    r"(?:joining|joined|join|connecting|connected|connect|registered|registering|showing\s+up|show\s+up|"
    r"appearing|appear|visible|listed|added)\b"
    r"|(?:never|not|n't)\s+(?:show\s+up|appear|listed)\s+in\s+(?:ray\s+status|the\s+dashboard)"
    r"|ray\s+status[^。，]{0,20}(?:只有|只显示|只看到|显示只有)\s*(?P<zh>\d+|一|1)\s*个?节点"
    r"|(?:worker|节点)[^。，]{0,10}(?:没有|未|无法)(?:加入|连上|注册)",
    re.IGNORECASE,
)
_POD_STOPPED = re.compile(r"\b(?:pending|crashloop\w*|error|failed|terminating|evicted|imagepull\w*)\b", re.I)


def read_join_gap(line: str, quote: str | None = None) -> StatedJoinGap | None:
    """Pods said to run while Ray is said to show fewer nodes, in one sentence."""
    running = _PODS_RUN.search(line)
    short = _RAY_SHORT.search(line)
    if running is None or short is None or _POD_STOPPED.search(running.group(0)):
        return None
    said = (short.group("n") or short.group("zh") or "").lower()
    count = _count(said) if said else None
    if said in {"the head", "head"}:
        count = 1
    return StatedJoinGap(quote=quote or line, ray_nodes=count)


# --- the reader ---------------------------------------------------------------------------------


def read_line(text: str, found: Found) -> bool:
    """Read the facts one line of prose states into ``found``; whether it stated any."""
    if len(text) > MAX_PROSE_CHARS or found.prose_chars > MAX_PROSE_PER_PASTE or _NOT_PROSE.match(text):
        return False
    found.prose_chars += len(text)
    # Backticks around a command ("`ray status` shows one node") only get in the grammar's way; the
    # facts quote the sentence as it was written.
    line, quote = text.replace("`", "").strip(), text.strip()
    versions = read_versions(line, quote)
    gpus = read_node_gpus(line, quote)
    gap = read_join_gap(line, quote)
    # What the person says they see (bot/read/prose_symptoms.py); a join gap already read from the
    # line owns its connection statement, so the same words do not count twice.
    symptoms = [
        symptom
        for symptom in read_symptoms(text.strip())
        if not (gap is not None and symptom.kind == "cannot-connect")
    ]
    demands = read_demands(text.strip())
    for version in versions:
        found.add_stated_version(version)
    for fact in gpus:
        found.add_stated_gpus(fact)
    if gap is not None:
        found.add_stated_join_gap(gap)
    for symptom in symptoms:
        found.add_stated_symptom(symptom)
    for demand in demands:
        found.add_stated_demand(demand)
    if versions or gpus or gap or symptoms or demands:
        found.recognise(STATED_FORMAT)
        return True
    return False
