"""List the Go source's messages the Kubernetes-side inventory files do not hold yet.

The inventory (``tests/inventory/{kube-scheduler,kubelet,cluster-autoscaler,karpenter,
nvidia-device-plugin,gpu-operator}.yaml``) is written by hand, entry by entry, from the source; this
script finds the places to read. It greps a git mirror of the tool (``fetch`` puts one under
``/work/.mirror/<owner>+<name>/repo``) at a ref for the calls that print a message (klog and logr
calls, event recorders, ``fmt.Errorf``, status reasons, the scheduler plugins' ``ErrReason``
constants, logrus in the GPU operator's validator), keeps those whose literal text speaks of
scheduling, resources, GPUs, scaling or start-up, and prints each with its path and line, marked
``held`` when an inventoried message of that tool already contains it (its format verbs
filled in) and ``new`` otherwise.

    .venv/bin/python tools/inventory/extract_kubernetes_side.py cluster-autoscaler \\
        --git /work/.mirror/kubernetes+autoscaler/repo --ref cluster-autoscaler-1.34.0 --new

It is run by hand when a mirror is at hand, never at test time; what it prints is candidates to
read in context, not entries (an entry's cause comes from CAUSES.md, not from here).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script: the repo root holds the packages
    sys.path.insert(0, str(ROOT))

from tools.inventory.instantiate import load  # noqa: E402


@dataclass(frozen=True)
class Source:
    """Where a tool's messages live in its repository."""

    paths: tuple[str, ...]


SOURCES: dict[str, Source] = {
    "kube-scheduler": Source(
        (
            "pkg/scheduler/framework/plugins/",
            "pkg/scheduler/framework/types.go",
            "pkg/scheduler/schedule_one.go",
            "pkg/scheduler/framework/preemption/",
        )
    ),
    "kubelet": Source(
        (
            "pkg/kubelet/lifecycle/",
            "pkg/kubelet/cm/devicemanager/",
            "pkg/kubelet/images/",
            "pkg/kubelet/kuberuntime/",
            "pkg/kubelet/eviction/",
            "pkg/kubelet/events/",
        )
    ),
    "cluster-autoscaler": Source(
        (
            "cluster-autoscaler/core/",
            "cluster-autoscaler/processors/status/",
            "cluster-autoscaler/clusterstate/",
        )
    ),
    "karpenter": Source(
        (
            "pkg/controllers/provisioning/",
            "pkg/controllers/nodeclaim/lifecycle/",
            "pkg/scheduling/",
            "pkg/cloudprovider/",
        )
    ),
    "nvidia-device-plugin": Source(("cmd/nvidia-device-plugin/", "internal/plugin/", "internal/rm/")),
    "gpu-operator": Source(("cmd/nvidia-validator/", "validator/", "controllers/", "assets/")),
}

# The calls that print a message, in these tools' Go (and the init containers' shell in assets/).
CALLS = re.compile(
    r"\b(?:klog\.\w+|log\.\w+|logger\.\w+|Log\.\w+|\.Eventf?|fmt\.Errorf|errors\.New|NewStatus|"
    r"NewSkippedReasons|NewRejectedReasons|Message:|ErrReason\w*\s*(?:ConflictReason\s*)?=|echo)\b"
)
TOPICS = re.compile(
    r"node|pod|schedul|resource|gpu|nvml|device|insufficient|taint|affinity|selector|volume|claim|"
    r"scale|group|capacity|instance|limit|quota|backoff|back-off|image|container|driver|toolkit|"
    r"plugin|validat|waiting|unhealthy|xid|nodepool|provisioner",
    re.IGNORECASE,
)
# What git grep (POSIX ERE) preselects; CALLS decides.
_GREP = r"klog\.|log\.|logger\.|Log\.|Event|Errorf|errors\.New|NewStatus|Reasons\(|Message:|ErrReason|echo"
_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')
_VERB = re.compile(r"%[-+# 0-9.]*[a-zA-Z]")


@dataclass(frozen=True)
class Candidate:
    path: str
    line: int
    text: str
    held: bool


def _grep(git: Path, ref: str, paths: Sequence[str]) -> Iterator[tuple[str, int, str]]:
    done = subprocess.run(
        [
            "git",
            "-C",
            str(git),
            "grep",
            "-n",
            "-I",
            "-E",
            _GREP,
            ref,
            "--",
            *paths,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    for row in done.stdout.splitlines():
        _, path, number, code = row.split(":", 3)
        if path.endswith("_test.go") or "/vendor/" in path or not CALLS.search(code):
            continue
        yield path, int(number), code


def _literal_pattern(text: str) -> re.Pattern[str]:
    """A Go literal as a regex: each format verb matches any text, the rest itself."""
    parts = _VERB.split(text.replace('\\"', '"'))
    return re.compile(".+?".join(re.escape(part) for part in parts), re.DOTALL)


def candidates(tool: str, git: Path, ref: str) -> list[Candidate]:
    inventories, _ = load()
    messages = [e.message() for i in inventories if i.tool == tool for e in i.entries]
    found = []
    for path, number, code in _grep(git, ref, SOURCES[tool].paths):
        text = " ".join(m.group(1) for m in _LITERAL.finditer(code))
        if not text.strip() or not TOPICS.search(text):
            continue
        # Held: some inventoried message contains the literal, its format verbs filled in.
        literal = _literal_pattern(text)
        held = any(literal.search(message) for message in messages)
        found.append(Candidate(path, number, text, held))
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("tool", choices=sorted(SOURCES))
    parser.add_argument("--git", type=Path, required=True, help="the tool's git mirror (…/repo)")
    parser.add_argument("--ref", default="HEAD", help="tag or commit to read (default HEAD)")
    parser.add_argument("--new", action="store_true", help="only the messages no template holds")
    args = parser.parse_args(argv)
    for candidate in candidates(args.tool, args.git, args.ref):
        if args.new and candidate.held:
            continue
        mark = "held" if candidate.held else "new "
        print(f"{mark}  {candidate.path}:{candidate.line}: {candidate.text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
