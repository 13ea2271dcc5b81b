"""What a person says they see, read as a symptom of one layer: "the workers cannot connect to the
head", "Ray does not detect my GPUs", "the GPU node group will not scale up from zero", "each trial
requests 4 GPUs".

A symptom statement is a subject of one layer and a state. Both come from a small closed
vocabulary derived from the rows of CAUSES.md and its triage order, never from one thread's words:

======================  =================================================  ======================
state                   subjects that make it a statement                  kind (cause)
======================  =================================================  ======================
cannot connect          worker, node, Ray node, head, GCS, raylet, client  ``cannot-connect`` (8)
  (not joining, drops out after N seconds, firewall or port blocked, connection refused)
differ                  versions, commits, images, wheels of two parts      ``versions-differ`` (8)
not seen (GPUs)         a Kubernetes node: nvidia.com/gpu, allocatable,    ``gpus-not-exposed`` (3)
                        device plugin, NVML, GPU operator
                        Ray: ``ray status``, ``get_gpu_ids``, num_gpus     ``gpus-not-registered`` (4)
                        neither named                                       ``gpus-unseen`` (open)
all in use (GPUs)       Pods, Kubernetes, nvidia.com/gpu                   ``gpus-busy-kubernetes`` (1)
                        actors, tasks, trials, replicas, placement groups  ``gpus-busy-ray`` (5)
                        neither named                                       ``gpus-busy`` (open)
  (also held: still occupied, not released, waiting for a GPU to be released, previous or
  detached actors still alive; a held statement that names neither layer is none)
not scaling             node group, ASG, node pool, Karpenter, autoscaler  ``not-scaling`` (9)
  (also an autoscaler that does not see the GPUs: the template node lacks them, cause 9; a cloud,
  region or zone with no capacity for the machines; nodes or workers stuck launching)
error at start          replica, deployment, Serve app, actor: constructor, ``app-start-error`` (10)
                        ``__init__``, an import
pending / stuck         a Pod                                               ``pod-pending`` (open)
                        an actor, task, trial, replica, placement group     ``ray-work-pending`` (open)
======================  =================================================  ======================

A sentence has one owner: the first state of the table's order that it states (the order follows
CAUSES.md's tie-breaks: an autoscaler that does not see GPUs is 9 before it is 3; a worker that never
joined is 8 even when its GPU is missing too), so one sentence never fires two causes.

What is no statement of the symptom:

* a question that asks whether something is so ("Is it a problem for Ray to detect GPUs?"); a
  question that takes it as given ("Why doesn't Ray see my GPUs?") still states it;
* a sentence about a fix or a resolution ("I fixed it by opening the ports", "the problem was the
  firewall", "works now") and a clause of expectation or speculation ("I expected the node group to
  scale up", "it should join", "maybe the GPUs are busy"), while the clause after a ``but`` states
  what happened ("it should have 8 GPUs but Ray shows 0");
* a negated bad state ("the Pod is not pending anymore", "none are in use", "same Ray version on
  the head and the workers");
* a conditional ("if the workers cannot connect, ...").

Per-unit asks ("ask for 2 GPUs for each replica", "each trial requests 4 GPUs", "num_gpus=2 per
actor") are read as a :class:`~bot.snapshot.stated.StatedDemand`, which the rules join with what one
node holds, stated or shown.

Work is bounded: the caller (:mod:`bot.read.prose`) hands only short lines within the paste's prose
budget; each sentence longer than ``MAX_SENTENCE_CHARS`` is skipped, and each pattern is linear.
"""

from __future__ import annotations

import re

from bot.snapshot.stated import StatedDemand, StatedSymptom, SymptomKind

__all__ = ["MAX_SENTENCE_CHARS", "read_demands", "read_symptoms", "sentences"]

# Longer than this, a "sentence" is a pasted paragraph of output or a run-on log, not one statement.
MAX_SENTENCE_CHARS = 600
_MAX_SENTENCES_PER_LINE = 24

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=[。！？；;])\s*")
# Clause boundaries inside a sentence: where a statement after "but" may undo an expectation before it.
_CONTRAST = re.compile(
    r"\s(?:but|however|yet|though|although|whereas|while"
    r"|instead)\b|[,;，；]\s*(?:but|however)\b|但是?|然而|可是|却",
    re.IGNORECASE,
)

# --- what makes a sentence no statement of a symptom ----------------------------------------------

_YES_NO_QUESTION = re.compile(
    r"^\W*(?:is|are|am|was|were|do|does|did|can|could|should|would|will|shall|has|have|had|may|might|must|"
    r"any(?:one|body)?|how|what|which|where|when|who)\b",
    re.IGNORECASE,
)
_ZH_QUESTION = re.compile(r"(?:吗|么|是否|是不是|能不能|可不可以|有没有)\s*[?？]?\s*$")
_FIX = re.compile(
    r"\b(?:fix(?:ed|es)?|solv(?:ed|es)|resolv(?:ed|es)|work(?:s|ed|ing)?\s+(?:now|again|fine\s+now)|"
    r"now\s+(?:it\s+)?work(?:s|ing)?|workaround|turn(?:s"
    r"|ed)\s+out|the\s+(?:problem|issue|culprit|cause|reason|fix|"
    r"solution)\s+(?:was|were)|(?:after|by|once)\s+(?:i\s+"
    r"|we\s+)?(?:adding|added|setting|set|changing|changed|"
    r"opening|opened|upgrad\w+|downgrad\w+|install\w*|remov\w+|restart\w*|disabl\w+|enabl\w+)|"
    r"(?:no|not)\s+longer\s+(?:dies|disconnects|crashes|pending|stuck|happens)|doesn'?t\s+die\s+anymore)\b"
    r"|已解决|解决了|已修复|修复了|原来是|问题在于|搞定",
    re.IGNORECASE,
)
_EXPECTING = re.compile(
    r"\b(?:expect(?:s|ed|ing)?|expectation|should(?:n'?t)?"
    r"|supposed\s+to|would\s+like|i'?d\s+like|want(?:s|ed)?\s+"
    r"(?:it|them|the|to)|hop(?:e|ed|ing)|ideally|maybe|perhaps"
    r"|possibly|might|probably|i\s+(?:think|guess|suspect|"
    r"wonder|assume)|not\s+sure\s+(?:if|whether)|could\s+(?:it|this)\s+be|in\s+case|unless|whether)\b"
    r"|期望|预期|应该|希望|可能|也许|是否",
    re.IGNORECASE,
)
_CONDITIONAL = re.compile(
    r"^\W*(?:if|suppose|supposing|assuming|in\s+case)\b|^\W*(?:如果|假如|若|假设)", re.IGNORECASE
)

# A bad state undone just before it: "not pending", "no longer stuck", "none are in use".
_UNDONE = re.compile(
    r"(?:\b(?:not|never|no\s+longer|no\s+more|none"
    r"|nothing|neither|nor|without)\b|n['’]t\b|没有|不再|并没有|未)"
    r"[\s\w'’-]{0,14}$",
    re.IGNORECASE,
)
_ANYMORE = re.compile(r"^[\s\w'’-]{0,20}\b(?:anymore|any\s+more|any\s+longer)\b", re.IGNORECASE)

# A good state denied: "cannot connect", "is not joining", "never scaled up", "无法连接".
_NEG = (
    r"(?:\b(?:not|never|cannot|can\s*not|unable\s+to|not\s+able\s+to"
    r"|fail(?:s|ed|ing)?\s+to|no\s+longer|not\s+longer|"
    r"doesnt|dont|didnt|cant|wont|isnt|arent|wasnt|werent|couldnt)\b|n['’]t\b)"
)
# Up to three words between the denial and the verb ("not properly detecting", "never gets scaled").
_GAP = r"(?:\s+[\w'’]+){0,3}?\s*\b"

_NUMBER_WORDS = {
    "a": 1.0,
    "an": 1.0,
    "one": 1.0,
    "a single": 1.0,
    "single": 1.0,
    "two": 2.0,
    "three": 3.0,
    "four": 4.0,
    "five": 5.0,
    "six": 6.0,
    "eight": 8.0,
    "sixteen": 16.0,
    "一": 1.0,
    "两": 2.0,
    "二": 2.0,
    "三": 3.0,
    "四": 4.0,
    "五": 5.0,
    "六": 6.0,
    "八": 8.0,
}


def _number(word: str) -> float | None:
    text = re.sub(r"\s+", " ", word.strip().lower())
    try:
        return float(text)
    except ValueError:
        return _NUMBER_WORDS.get(text)


# --- subjects ---------------------------------------------------------------------------------------

_GPU = r"(?:nvidia\.com/gpu|gpus?|gpu\s+devices?|cuda\s+devices?|graphics\s+cards?|accelerators?|显卡|GPU|卡)"
_RAY_NODE_SUBJECT = re.compile(
    r"\b(?:workers?|worker\s+(?:nodes?|pods?|machines?)|nodes?"
    r"|ray\s+nodes?|head(?:\s+(?:node|pod))?|gcs|raylet|"
    r"machines?|hosts?|instances?|clients?|"
    # A Ray driver, never the NVIDIA, CUDA or kernel driver of a machine.
    r"(?<!nvidia )(?<!gpu )(?<!cuda )(?<!kernel )(?<!graphics )drivers?|vms?|servers?)\b"
    r"|工作节点|从节点|节点|头节点|主节点|机器",
    re.IGNORECASE,
)
_SCALER_SUBJECT = re.compile(
    r"\b(?:node\s*groups?|nodegroups?|node\s*pools?|nodepools?"
    r"|asgs?|auto\s*scaling\s+groups?|instance\s+groups?|"
    r"autoscal\w*|cluster[- ]autoscaler|ca|karpenter|worker\s+groups?"
    r"|(?:gpu\s+)?nodes?|cluster)\b|节点组|节点池|自动扩缩容|弹性伸缩",
    re.IGNORECASE,
)
_AUTOSCALER = re.compile(
    r"\b(?:autoscal\w*|cluster[- ]autoscaler|karpenter"
    r"|node\s*groups?|nodegroups?|node\s*pools?|nodepools?|asgs?|"
    r"cluster-autoscaler)\b|节点组|节点池|自动扩缩容",
    re.IGNORECASE,
)
_APP_SUBJECT = re.compile(
    r"\b(?:replicas?|deployments?|serve|ray\s+serve|applications?"
    r"|apps?|actors?|models?|rayservice)\b|副本|部署|服务|应用",
    re.IGNORECASE,
)
_POD_SUBJECT = re.compile(r"\b(?:pods?|containers?)\b", re.IGNORECASE)
_RAY_WORK_SUBJECT = re.compile(
    # Not a bare "job" or "deployment": Kubernetes has both, and a Serve deployment waits as replicas.
    r"\b(?:actors?|tasks?|trials?|replicas?|placement\s+groups?|bundles?|ray\s+jobs?)\b|任务|副本",
    re.IGNORECASE,
)
# Words that place a GPU statement in the Kubernetes layer: the node's resource, its plugin, its driver.
_KUBERNETES_GPU_WORDS = re.compile(
    r"nvidia\.com/gpu|alpha\.kubernetes\.io|\b(?:allocatable|capacity|device[- ]?plugin|gpu[- ]operator|nvml|"
    r"kubelet|node\s+description|describe\s+node"
    r"|nvidia[- ]container[- ](?:toolkit|runtime)|container\s+runtime)\b",
    re.IGNORECASE,
)
# Bounded by what is no Latin letter or digit, not by ``\b``: in Chinese text a word stands between
# Han characters ("k8s集群", "程序pod，"), which ``\b`` counts as letters.
_KUBERNETES_WORDS = re.compile(
    r"(?<![a-z0-9_])(?:pods?|kubernetes|k8s|kubectl|nvidia\.com/gpu"
    r"|alpha\.kubernetes\.io|scheduler|namespace|gke|eks|aks)(?![a-z0-9_])"
    r"|容器组",
    re.IGNORECASE,
)
_RAY_WORDS = re.compile(
    r"(?<![a-z0-9_])(?:ray|ray\s+status|get_gpu_ids|cluster_resources|available_resources|num_gpus|raylet|actors?|"
    r"tasks?|trials?|replicas?|placement\s+groups?|bundles?|tune|serve|rllib|vllm|cluster\s+launcher)(?![a-z0-9_])"
    r"|任务|副本",
    re.IGNORECASE,
)

_GPU_HINT = re.compile(
    r"gpu|显卡|卡|nvml|device[- ]?plugin|driver|cuda|accelerator|nvidia|titan|geforce|quadro|tesla|rtx|gtx"
    r"|\b[ahlt]\d{2,3}[a-z]?\b",
    re.IGNORECASE,
)

# --- states -----------------------------------------------------------------------------------------

_CONNECT_DENIED = re.compile(
    _NEG + _GAP + r"(?:join(?:s|ed|ing)?|connect(?:s|ed|ing)?|register(?:s|ed|ing)?|"
    r"reach(?:es|ed|ing)?|talk(?:s|ing)?\s+to|communicat\w+"
    r"|show(?:s|ing)?\s+up|appear(?:s|ing)?|acquire|attach\w*)\b",
    re.IGNORECASE,
)
_DROPS_OUT = re.compile(
    r"\b(?:disconnect(?:s|ed)?\s+from\s+(?:the\s+)?(?:head"
    r"|cluster|gcs)|keeps?\s+disconnecting|disconnects)\b|"
    r"\b(?:disconnect(?:s|ed|ing)?|die[sd]?|dying|crash(?:es|ed)?"
    r"|exit(?:s|ed)?|(?:gets?|got|is|was)\s+(?:killed|removed)|"
    r"drops?\s+(?:out|off)|disappear(?:s|ed)?|goes\s+away|leaves?\s+the\s+cluster|times?\s+out|timed\s+out)\b"
    r"[^.;]{0,60}?\b(?:after|within|in)\s+(?:about\s+|approximately\s+|around\s+|roughly\s+|~\s*)?"
    r"(?:\d+|a\s+few|few|some|one|a|several)\s*(?:s|secs?|seconds?|mins?|minutes?)\b"
    r"|\b(?:after|within|for)\s+(?:about\s+|approximately\s+"
    r"|around\s+|~\s*)?(?:\d+|a\s+few|few|some|one|a)\s*"
    r"(?:s|secs?|seconds?|mins?|minutes?)\b[^.;]{0,80}?\b(?:disconnect(?:s"
    r"|ed)?|die[sd]?|crash(?:es|ed)?|exit(?:s|ed)?|"
    r"(?:gets?|is)\s+(?:killed|removed)|drops?\s+(?:out|off)|disappear(?:s|ed)?|times?\s+out)\b",
    re.IGNORECASE,
)
_BLOCKED = re.compile(
    r"\b(?:firewall|security\s+groups?|network\s*polic(?:y"
    r"|ies)|ports?(?:\s+\d{2,5})?|ufw|iptables)\b[^.;]{0,40}?"
    # Never a command's flag (``--port=6374 --block``): a flag is no verb.
    r"(?<!-)\b(?:block(?:s|ed|ing)?|clos(?:ed|es)|den(?:y|ies|ied)"
    r"|drop(?:s|ped)|not\s+open(?:ed)?|refus(?:es|ed))\b"
    r"|(?<!-)\b(?:block(?:s|ed|ing)?|clos(?:ed|es))\b[^.;]{0,20}?\b(?:ports?|gcs|6379|8265|10001)\b"
    r"|\bconnection\s+(?:refused|timed?\s*out|reset)\b|\b(?:gcs|head)\b[^.;]{0,20}\bunreachable\b"
    # The GCS's own view of a lost connection, retold: "marked dead", "missed too many heartbeats".
    r"|\bmarked\s+(?:as\s+)?dead\b|\bmiss(?:ed|es|ing)\s+(?:too\s+many\s+)?heartbeats?\b",
    re.IGNORECASE,
)
_ZH_CONNECT = re.compile(
    # A denial with its verb ("没有" alone is "has no", never "cannot connect").
    r"(?:无法|不能|没法|没有|未能?)(?:连接|连上|加入|注册|接入|通信)|连不上|加入不了|进不了"
    r"|(?:掉线|断开|断连|连接被拒绝|连接超时|通信异常|通信失败)"
    r"|(?:防火墙|端口|安全组)[^。，]{0,8}(?:不通|被?封|屏蔽|拦截|未开放|没开|阻断)",
)
_ZH_CONNECT_SUBJECT = re.compile(r"worker|节点|head|gcs|集群|机器", re.IGNORECASE)

_DIFFER = re.compile(
    r"\b(?:different|differ(?:s|ing)?|mismatch(?:ed|ing|es)?|inconsistent"
    r"|not\s+the\s+same|(?:do|does)\s*(?:n'?t|not)\s+match)\b",
    re.IGNORECASE,
)
_BUILD_WORD = re.compile(
    r"\b(?:versions?|commits?|images?|wheels?|nightl(?:y|ies)|builds?|releases?|tags?|python|ray)\b",
    re.IGNORECASE,
)
_PART_WORD = re.compile(
    r"\b(?:head|workers?|clients?|cluster|driver|local(?:ly)?"
    r"|laptop|nodes?|machines?|pods?|between|container)\b",
    re.IGNORECASE,
)
_ZH_DIFFER = re.compile(
    r"版本(?:不一致|不同|不匹配|对不上)|不同(?:的)?版本|(?:commit|镜像)[^。，]{0,6}(?:不一致|不同)"
)

_GPU_DENIED = re.compile(
    _NEG
    + _GAP
    + r"(?:detect\w*|see(?:s|ing)?|seen|find(?:s|ing)?|found|recogni[sz]\w*|register\w*|show(?:s|ing|n)?|"
    r"list(?:s|ed|ing)?|expos\w+|advertis\w+|report\w*"
    r"|pick(?:s|ing)?\s+up|allocat\w+|identif\w+)\b[^.;]{0,30}?" + _GPU,
    re.IGNORECASE,
)
_GPU_NOT_DETECTED = re.compile(
    _GPU + r"[^.;]{0,30}?\b(?:is|are|were|was|get|gets|being)?\s*" + _NEG + r"(?:\s+\w+)?\s*"
    r"(?:detected|visible|found|recogni[sz]ed|registered|shown"
    r"|listed|exposed|advertised|reported|available|seen)\b",
    re.IGNORECASE,
)
# "Ray isn't seeing any", with the GPUs named earlier in the sentence ("two TitanX but Ray isn't ...").
_GPU_DENIED_ELIDED = re.compile(
    _NEG
    + _GAP
    + r"(?:detect\w*|see(?:s|ing)?|find(?:s|ing)?|recogni[sz]\w*|register\w*|pick(?:s|ing)?\s+up)\s+"
    r"(?:any|them|it|either|one)\b",
    re.IGNORECASE,
)
_GPU_NAMED = re.compile(
    r"\b(?:gpus?|cuda|titan\w*|geforce|quadro|tesla|rtx"
    r"|gtx|[ahlt]\d{2,3}[a-z]?|v100|h100|a100|nvidia)\b|显卡",
    re.IGNORECASE,
)
# The GPU stack of a node broken in words: the plugin, NVML, the driver or the container runtime.
_STACK_BROKEN = re.compile(
    r"\b(?:nvml|device[- ]?plugin|gpu[- ]operator"
    r"|nvidia[- ]container[- ](?:toolkit|runtime)|(?:nvidia|gpu)\s+drivers?)\b"
    r"[^.;]{0,40}?\b(?:not\s+found|missing|not\s+installed"
    r"|not\s+running|not\s+ready|crash\w*|fail(?:s|ed|ing)?|"
    r"errors?|library_not_found|unable\s+to\s+(?:initiali[sz]e|load|start))\b"
    r"|\bunable\s+to\s+(?:initiali[sz]e|load)\s+nvml\b"
    r"|\bno\s+(?:nvidia\s+)?(?:device[- ]?plugin|gpu\s+drivers?)\b",
    re.IGNORECASE,
)
_ZERO_GPUS = re.compile(
    r"(?:\b(?:0|zero|no)\s+(?:gpus?|gpu\s+(?:resources?"
    r"|devices?))\b(?!\s+(?:tasks?|actors?|jobs?|work|workloads?))"
    r"(?:\s+(?:is|are|were|was))?\s*(?:detected|found|visible"
    r"|registered|shown|listed|available|advertised|in\b)?"
    r"|\bno\s+gpu[- ]device\b|get_gpu_ids\(\)\s*(?:returns?"
    r"|prints?|gives?|is|shows?)\s*(?:\[\]|empty|an\s+empty))",
    re.IGNORECASE,
)
_ZH_GPU_UNSEEN = re.compile(
    r"(?:识别不到|检测不到|看不到|找不到|没有识别|未识别|无法识别|无法检测|认不到"
    r"|不识别|识别不出|没检测到|没有检测到)[^。，]{0,6}(?:GPU|显卡|卡)"
    r"|(?:GPU|显卡)[^。，]{0,10}(?:识别不到|检测不到|看不到"
    r"|找不到|没有被?识别|未被?识别|数量为\s*0|为\s*0|是\s*0)",
    re.IGNORECASE,
)

_ALL_BUSY = re.compile(
    r"\ball\s+(?:of\s+)?(?:the\s+|my\s+|our\s+)?(?:\d+\s+)?"
    + _GPU
    + r"[^.;]{0,30}?\b(?:are|were|is|was|being|get)?\s*"
    r"(?:already\s+|fully\s+)?(?:in[- ]use|used|busy|occupied"
    r"|taken|allocated|claimed|reserved|consumed|held)\b"
    r"|\b"
    + _GPU
    + r"\s+(?:are|is|were|was)\s+(?:all\s+|already\s+|fully\s+)+(?:in[- ]use|used|busy|occupied|taken|"
    r"allocated|claimed|reserved|held)\b"
    r"|\bno\s+(?:free|available|idle|spare|unused)\s+"
    + _GPU
    + r"|\bno\s+"
    + _GPU
    + r"\s+(?:are\s+|is\s+)?(?:free|available|left)\b"
    r"|\b(?:every|each)\s+gpu\s+is\s+(?:in[- ]use|busy|taken|occupied|held)\b"
    # Something holding them all: "actors have acquired all of the GPUs", "it will take all GPU".
    r"|\b(?:us(?:e|es|ed|ing)|acquir(?:e|es|ed|ing)|hold(?:s|ing)?|held|occup(?:y|ies|ied|ying)|tak(?:e|es|ing)|took|"
    r"consum(?:e|es|ed|ing)|grab(?:s|bed|bing)?)\s+(?:up\s+)?all\s+(?:of\s+)?(?:the\s+|my\s+|our\s+)?"
    + _GPU
    + r"\b",
    re.IGNORECASE,
)
_ZH_BUSY = re.compile(
    r"(?:GPU|显卡|卡)[^。，]{0,6}(?:都|全部|全都|已经)[^。，]{0,3}(?:被)?(?:占用|占满|用完|占着|分配完)"
    r"|没有(?:空闲|可用|多余)的?(?:GPU|显卡|卡)",
    re.IGNORECASE,
)

# Held: GPUs (or Ray's resources) kept by work that ended, paused or was left behind, while new work
# waits. Ray work so named is cause 5 (ALIVE actors, detached ones, those of finished jobs, reserved
# placement groups); Pods so named are Kubernetes' own accounting (1). A statement of how a release
# works ("not released synchronously", "not released until the actor exits") is none.
_HELD_THING = (
    r"(?:" + _GPU + r"|(?:gpu\s+)?resources?)"
    r"(?!\s*(?:memory|mem\b|ram\b|vram|utili[sz]ation|usage))"
)
_HELD = re.compile(
    # "paused trials still occupy GPUs", "the actor still holds the GPU" (not "still uses": a process
    # using a device is nvidia-smi's view, not Ray's logical GPU held).
    r"\bstill\s+(?:hold(?:s|ing)?|occup(?:y|ies|ying)|tak(?:e|es|ing)(?:\s+up)?|reserv(?:e|es|ing)|"
    r"consum(?:e|es|ing)|lock(?:s|ing)?)\s+(?:up\s+)?(?:the\s+|all\s+|their\s+|its\s+|my\s+|our\s+)?"
    + _HELD_THING
    + r"\b"
    # "it does not release the GPU", "cannot release GPUs resources".
    r"|" + _NEG + _GAP + r"(?:releas(?:e|es|ed|ing)|free(?:s|d|ing)?|giv(?:e|es|ing)\s+back"
    r"|return(?:s|ed|ing)?)\s+"
    r"(?:up\s+)?(?:the\s+|any\s+|all\s+|their\s+|its\s+|my\s+|our\s+)?(?:\w+\s+)?" + _HELD_THING + r"\b"
    r"(?!\s+(?:a?synchronously|until)\b)"
    # "the GPUs are never released", "GPU resources not released after killing actor".
    r"|" + _HELD_THING + r"\s+(?:(?:is|are|was|were|get|gets|got|being)\s+)?" + _NEG + r"(?:\s+\w+)?\s*"
    r"(?:released|freed|returned|given\s+back)\b(?!\s+(?:a?synchronously|until)\b)"
    # "waits for the GPU to be released".
    r"|\bwait(?:s|ed|ing)?\s+(?:for|until)\s+(?:the\s+|a\s+|its\s+|their\s+)?"
    + _HELD_THING
    + r"\s+(?:to\s+be|is|are|gets?)\s+(?:released|freed)\b"
    # "the previous four actors are still alive", "leftover detached actors still running".
    r"|\b(?:previous|prior|old|older|earlier|leftover|left-over|stale|zombie|orphan(?:ed)?|dangling|detached|"
    r"finished|completed|paused|terminated|killed)\s+(?:[\w-]+\s+){0,2}?(?:actors?|tasks?|trials?|placement\s+groups?"
    r"|jobs?|pods?)\b[^.;]{0,30}?\bstill\s+(?:alive|running|there|around|exist\w*|hold\w*|occup\w+|tak\w+|us\w+)\b",
    re.IGNORECASE,
)
_ZH_HELD = re.compile(
    r"(?:没有|没|未|不)(?:被)?释放[^。，]{0,6}(?:GPU|显卡|卡|资源)"
    r"|(?:GPU|显卡|卡|资源)[^。，]{0,8}(?:没有|没|未能?|不)(?:被)?释放"
    r"|(?:仍然?|还|依然|一直)(?:在)?占(?:用|着)[^。，]{0,6}(?:GPU|显卡|卡)",
    re.IGNORECASE,
)

_NOT_SCALING = re.compile(
    # "cluster not autoscaling", "isn't autoscaling": the denial right before, never "not using autoscaling".
    _NEG
    + r"\s+(?:(?:is|are|was|were|be|being)\s+)?autoscal(?:e|es|ed|ing)\b|"
    + _NEG
    + _GAP
    + r"(?:scal(?:e|es|ed|ing)(?:\s*(?:-\s*)?(?:up|out))?|spin(?:s|ning)?\s+up|provision\w*|"
    r"launch\w*|add(?:s|ed|ing)?\s+(?:a\s+|any\s+)?(?:new\s+)?(?:gpu\s+)?nodes?"
    r"|creat\w+\s+(?:a\s+|any\s+)?(?:new\s+)?nodes?|"
    r"bring(?:s|ing)?\s+up)\b"
    r"|\b(?:stays?|stuck|remains?|sits?|stayed|remained)\s+at\s+(?:0|zero)\b"
    r"|\bnot\s+from\s+(?:0|zero)\b"
    r"|\bno\s+(?:new\s+)?(?:gpu\s+)?nodes?\s+(?:is\s+|are\s+|was\s+|were\s+|gets?\s+|got\s+|ever\s+)?"
    r"(?:added|created|provisioned|launched|coming|spun\s+up)\b"
    r"|\bunable\s+to\s+scale\b",
    re.IGNORECASE,
)
# The cloud has no machine to give: the launch a scale-up needs fails (cause 9, "Karpenter unable to
# launch", "a cloud error at launch"), said with a cloud, a region or a zone in the sentence.
_NO_CLOUD_CAPACITY = re.compile(
    r"\b(?:no|not\s+enough|insufficient|out\s+of|lack\s+of|ran\s+out\s+of|run(?:ning)?\s+out\s+of)\s+"
    r"(?:[\w.-]+\s+){0,2}?capacity\b"
    r"|" + _NEG + r"\s*(?:\w+\s+)?ha(?:ve|s|d)\s+(?:the\s+|enough\s+|any\s+|sufficient\s+)?"
    r"(?:[\w.-]+\s+)?capacity\b"
    r"|\b(?:spot|on-demand|gpu|[a-z]\d[a-z]*\.\w+)\s+instances?\s+(?:are|is|were|was)\s+(?:not\s+|un)available\b"
    r"|\binsufficientinstancecapacity\b|\bzone_resource_pool_exhausted\w*|\bstock-?outs?\b",
    re.IGNORECASE,
)
_CLOUD = re.compile(
    r"\b(?:aws|ec2|gcp|gce|google\s+cloud|azure|cloud|regions?|(?:availability\s+)?zones?|spot|on-demand"
    r"|(?:us|eu|ap)-[a-z]+-\d[a-z]?)\b|insufficientinstancecapacity|zone_resource_pool",
    re.IGNORECASE,
)
# A node the autoscaler asked for that never comes up: "nodes stuck in launching state".
_STUCK_LAUNCHING = re.compile(
    r"\b(?:stuck|hang(?:s|ing)?|hung|remain(?:s|ed|ing)?|stay(?:s|ed|ing)?|sit(?:s|ting)?|left)\s+"
    r"(?:in\s+|at\s+)?(?:a\s+|the\s+)?[\"'“`]?(?:launching|provisioning)\b",
    re.IGNORECASE,
)
_ZH_NOT_SCALING = re.compile(
    r"(?:不|没有|无法|没)(?:扩容|扩展|扩缩|拉起|弹出|扩)(?!展示)"
    r"|(?:一直|始终)(?:是|为|保持)\s*0\s*(?:个)?(?:节点)?"
)

_START_ERROR = re.compile(
    r"\b(?:error|exception|fail(?:s|ed|ure|ing)?|crash(?:es|ed"
    r"|ing)?|rais(?:e|es|ed|ing)|throws?|traceback)\b[^.;]{0,30}?"
    r"\b(?:in|during|inside|from|at|when|upon|on)\s+(?:the\s+|its\s+|my\s+)?(?:deployment\s+|replica\s+|actor\s+)?"
    r"(?:constructor|__init__|init|initiali[sz]ation|import(?:ing)?)\b"
    r"|\b(?:constructor|__init__|initiali[sz]ation)\b[^.;]{0,20}?\b(?:error"
    r"|errors|fails?|failed|failure|exception|"
    r"crash(?:es|ed)?|raises?|raised|throws?)\b"
    r"|\b(?:bad|broken|missing|failed|failing|wrong)\s+imports?\b|\bimport\s*error\b|\bmodulenotfounderror\b|"
    r"\bno\s+module\s+named\b"
    r"|\b(?:replicas?|deployments?)\b[^.;]{0,30}?\b(?:keeps?\s+"
    r"|are\s+|is\s+|kept\s+)?(?:restarting|crash[- ]?looping|"
    r"fail(?:s|ed|ing)?\s+to\s+start|deploy_failed|never\s+start)\b",
    re.IGNORECASE,
)
_ZH_START_ERROR = re.compile(
    r"(?:构造函数|初始化|__init__|导入|import)[^。，]{0,6}(?:报错|失败|异常|出错)"
    r"|(?:副本|replica|deployment)[^。，]{0,8}(?:一直|反复|不断)?(?:重启|崩溃|启动失败)",
    re.IGNORECASE,
)

_PENDING = re.compile(
    r"\b(?:pending|stuck|hang(?:s|ing)?|hung|unschedulable|waiting\s+to\s+(?:be\s+)?schedul\w+|"
    r"(?:never|not)\s+(?:being\s+|get\s+|gets\s+)?scheduled"
    r"|waiting\s+(?:for\s+)?(?:resources|a\s+node|gpus?))\b",
    re.IGNORECASE,
)
_ZH_PENDING = re.compile(
    r"(?:一直|始终|卡在|处于)[^。，]{0,4}(?:pending|等待|排队)|无法调度|调度不上|卡住", re.IGNORECASE
)


def _clauses(sentence: str) -> list[str]:
    return [part for part in _CONTRAST.split(sentence) if part and part.strip()]


def _undone(clause: str, start: int, end: int) -> bool:
    """Whether the bad state at ``start``-``end`` is denied just before it, or said to be over after it."""
    return bool(_UNDONE.search(clause[max(0, start - 30) : start]) or _ANYMORE.match(clause[end:]))


def _stated(pattern: re.Pattern[str], clause: str, *, bad: bool) -> bool:
    """Whether ``clause`` states the state ``pattern`` reads; a bad state denied just before is none."""
    for match in pattern.finditer(clause):
        if bad and _undone(clause, match.start(), match.end()):
            continue
        return True
    return False


def _is_question(sentence: str) -> bool:
    text = sentence.strip()
    if _ZH_QUESTION.search(text):
        return True
    return text.endswith(("?", "？")) and bool(_YES_NO_QUESTION.match(text))


def sentences(line: str) -> list[str]:
    """The sentences of one line of prose, each short enough to read."""
    found = [s.strip() for s in _SENTENCE.split(line) if s and s.strip()]
    return [s for s in found[:_MAX_SENTENCES_PER_LINE] if len(s) <= MAX_SENTENCE_CHARS]


def _statements(sentence: str) -> list[str]:
    """The clauses of a sentence that state what happens: none for a question, a fix or a
    conditional; no clause of expectation or speculation."""
    if _is_question(sentence) or _FIX.search(sentence) or _CONDITIONAL.match(sentence):
        return []
    return [clause for clause in _clauses(sentence) if not _EXPECTING.search(clause)]


def _gpu_layer(sentence: str) -> SymptomKind:
    if _KUBERNETES_GPU_WORDS.search(sentence):
        return "gpus-not-exposed"
    if _RAY_WORDS.search(sentence):
        return "gpus-not-registered"
    return "gpus-unseen"


def _busy_layer(sentence: str) -> SymptomKind:
    kubernetes, ray = bool(_KUBERNETES_WORDS.search(sentence)), bool(_RAY_WORDS.search(sentence))
    if kubernetes and not ray:
        return "gpus-busy-kubernetes"
    if ray and not kubernetes:
        return "gpus-busy-ray"
    return "gpus-busy"


def _subject(pattern: re.Pattern[str], sentence: str) -> str | None:
    match = pattern.search(sentence)
    return match.group(0).lower() if match else None


def _kind(sentence: str, clauses: list[str]) -> tuple[SymptomKind, str] | None:
    """The one symptom the sentence states, in the order of CAUSES.md's tie-breaks; None if none."""

    def any_clause(pattern: re.Pattern[str], *, bad: bool) -> bool:
        return any(_stated(pattern, clause, bad=bad) for clause in clauses)

    # Every GPU state names a GPU, a card or the stack that serves them: without one, none is read.
    gpu_named = _GPU_HINT.search(sentence) is not None
    gpus_unseen = gpu_named and (
        any_clause(_GPU_DENIED, bad=False)
        or any_clause(_GPU_NOT_DETECTED, bad=False)
        or any_clause(_ZERO_GPUS, bad=True)
        or any_clause(_ZH_GPU_UNSEEN, bad=False)
        or (any_clause(_GPU_DENIED_ELIDED, bad=False) and _GPU_NAMED.search(sentence) is not None)
    )
    stack_broken = gpu_named and any_clause(_STACK_BROKEN, bad=True)
    scaler = _subject(_SCALER_SUBJECT, sentence)
    autoscaler = _subject(_AUTOSCALER, sentence)
    if any_clause(_DIFFER, bad=True) and _BUILD_WORD.search(sentence) and _PART_WORD.search(sentence):
        return "versions-differ", _subject(_BUILD_WORD, sentence) or "version"
    if any_clause(_ZH_DIFFER, bad=True):
        return "versions-differ", "版本"
    # An autoscaler that does not add nodes, or whose template node lacks the GPUs (cause 9).
    if scaler and (any_clause(_NOT_SCALING, bad=False) or any_clause(_ZH_NOT_SCALING, bad=False)):
        return "not-scaling", scaler
    if autoscaler and gpus_unseen:
        return "not-scaling", autoscaler
    if (cloud := _subject(_CLOUD, sentence)) and any_clause(_NO_CLOUD_CAPACITY, bad=True):
        return "not-scaling", cloud
    if (launched := scaler or _subject(_RAY_NODE_SUBJECT, sentence)) and any_clause(
        _STUCK_LAUNCHING, bad=True
    ):
        return "not-scaling", launched
    if (app := _subject(_APP_SUBJECT, sentence)) and (
        any_clause(_START_ERROR, bad=True) or any_clause(_ZH_START_ERROR, bad=True)
    ):
        return "app-start-error", app
    if (node := _subject(_RAY_NODE_SUBJECT, sentence)) and (
        any_clause(_CONNECT_DENIED, bad=False)
        or any_clause(_DROPS_OUT, bad=True)
        or any_clause(_BLOCKED, bad=True)
    ):
        return "cannot-connect", node
    if _ZH_CONNECT_SUBJECT.search(sentence) and any_clause(_ZH_CONNECT, bad=False):
        return "cannot-connect", _subject(_ZH_CONNECT_SUBJECT, sentence) or "节点"
    if gpus_unseen:
        return _gpu_layer(sentence), "gpu"
    if stack_broken:
        # NVML or a driver failing where the raylet starts is Ray's registration (4); on a node, or
        # in a plugin or operator, the node does not expose the GPUs (3).
        ray_side = re.search(r"\braylet\b|\bray\s+(?:start|status)\b", sentence, re.IGNORECASE)
        return ("gpus-not-registered" if ray_side else "gpus-not-exposed"), "gpu"
    if gpu_named and (any_clause(_ALL_BUSY, bad=True) or any_clause(_ZH_BUSY, bad=True)):
        return _busy_layer(sentence), "gpu"
    # GPUs held by work that ended or was left behind: the layer is the work's (a Pod, or Ray work).
    if (gpu_named or _RAY_WORK_SUBJECT.search(sentence)) and (
        any_clause(_HELD, bad=True) or any_clause(_ZH_HELD, bad=False)
    ):
        layer = _busy_layer(sentence)
        if layer != "gpus-busy":
            return layer, "gpu"
    if any_clause(_PENDING, bad=True) or any_clause(_ZH_PENDING, bad=True):
        if pod := _subject(_POD_SUBJECT, sentence):
            return "pod-pending", pod
        if work := _subject(_RAY_WORK_SUBJECT, sentence):
            return "ray-work-pending", work
    return None


def read_symptoms(line: str) -> list[StatedSymptom]:
    """The symptoms the sentences of ``line`` state, one per sentence at most, each quoting it."""
    found: list[StatedSymptom] = []
    for sentence in sentences(line):
        clauses = _statements(sentence.replace("`", ""))
        if not clauses:
            continue
        kind = _kind(sentence.replace("`", ""), clauses)
        if kind is not None:
            found.append(StatedSymptom(kind=kind[0], subject=kind[1], quote=sentence))
    return found


# --- per-unit asks ----------------------------------------------------------------------------------

_COUNT = (
    r"(?P<count>\d{1,3}(?:\.\d{1,3})?|a\s+single|one"
    r"|two|three|four|five|six|eight|sixteen|[一两二三四五六八])"
)
_UNIT = (
    r"(?P<unit>trials?|tasks?|actors?|replicas?|workers?"
    r"|training\s+workers?|bundles?|deployments?|model\s+replicas?|"
    r"vllm\s+engines?|engines?)"
)
_ASK_VERB = (
    r"(?:requests?|requested|requesting|asks?\s+for|asked\s+for"
    r"|asking\s+for|needs?|needed|requires?|required|"
    r"uses?|using|takes?|wants?|gets?|reserves?|with|has|have|=)"
)
_GPU_NOUN = r"(?:gpus?|gpu\s+devices?|cards?|显卡|卡|张卡|块卡)"
_DEMANDS = (
    # "each trial requests 4 GPUs", "every replica needs 2 GPUs", "one worker with 4 GPUs".
    re.compile(
        r"\b(?:each|every|per|a|one|single|the)\s+" + _UNIT + r"\b[^.;,]{0,30}?\b" + _ASK_VERB + r"\s+"
        r"(?:about\s+|exactly\s+)?" + _COUNT + r"\s*(?:x\s*)?(?:[a-z]\d{2,4}\s+)?" + _GPU_NOUN + r"\b",
        re.IGNORECASE,
    ),
    # "2 GPUs for each replica", "4 gpus per trial", "allocate 4 gpus into one worker".
    re.compile(
        r"(?<![\w.])"
        + _COUNT
        + r"\s*"
        + _GPU_NOUN
        + r"\s+(?:for|per|to|on|in|into|of)\s+(?:each|every|one|a|a\s+single|"
        r"per|the)?\s*" + _UNIT + r"\b",
        re.IGNORECASE,
    ),
    # "num_gpus=2 per actor", "gpus_per_trial=4", "resources_per_worker GPU: 4".
    re.compile(
        r"\bnum_gpus\s*=\s*(?P<count>\d{1,3}(?:\.\d{1,3})?)\s+(?:per"
        r"|for\s+each|for\s+every|in\s+each|on\s+each|each)\s+" + _UNIT + r"\b"
        r"|\bgpus?_per_(?P<unit2>trial|worker|actor|replica"
        r"|task)\s*[=:]\s*(?P<count2>\d{1,3}(?:\.\d{1,3})?)\b"
        r"|\bresources_per_(?P<unit3>trial"
        r"|worker)\b[^.;]{0,12}?\bgpu\W{1,4}(?P<count3>\d{1,3}(?:\.\d{1,3})?)\b",
        re.IGNORECASE,
    ),
    # "每个 trial 需要 4 张卡", "每个副本申请 2 个 GPU".
    re.compile(
        r"每(?:个|一个)?\s*(?P<unit>trial|task|actor|replica"
        r"|worker|副本|任务|进程)\s*(?:需要|申请|要|占用|使用|请求)\s*"
        r"(?P<count>\d{1,3}|[一两二三四六八])\s*(?:张|块|个)?\s*(?:GPU|卡|显卡)",
        re.IGNORECASE,
    ),
)
# A sum over the cluster or a count of nodes is no per-unit ask.
_SUMMED = re.compile(
    r"\b(?:in\s+total|total|across|altogether|combined|overall)\b|总共|一共|合计", re.IGNORECASE
)


def read_demands(line: str) -> list[StatedDemand]:
    """Per-unit GPU asks the sentences of ``line`` state ("each trial requests 4 GPUs")."""
    found: list[StatedDemand] = []
    for sentence in sentences(line):
        text = sentence.replace("`", "")
        if _SUMMED.search(text) or _is_question(text) or _FIX.search(text):
            continue
        for pattern in _DEMANDS:
            match = pattern.search(text)
            if match is None:
                continue
            groups = {k: v for k, v in match.groupdict().items() if v}
            count = _number(groups.get("count") or groups.get("count2") or groups.get("count3") or "")
            unit = (groups.get("unit") or groups.get("unit2") or groups.get("unit3") or "").lower()
            if count is None or not 0 < count <= 64 or not unit:
                continue
            found.append(StatedDemand(gpus=count, unit=re.sub(r"s$", "", unit), quote=sentence))
            break
    return found
