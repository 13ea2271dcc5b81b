"""List the KubeRay operator's candidate messages for the inventory (``tests/inventory/kuberay.yaml``).

The inventory is written by hand from the source; this script finds what to read. It runs
``git grep`` on a mirror of ``ray-project/kuberay`` (``fetch`` puts one under ``/work/.mirror/``; a
mirror has no work tree, so nothing is checked out) at one or more tags, and prints, per tag:

- every event the controllers record (``Recorder.Event``/``Eventf``): its type, reason and format;
- every status ``Message``/``Reason`` the controllers set, and condition reasons/messages;
- every ``logger.Info``/``logger.Error`` (and ``log.Info``/``log.Error`` of v0.x-v1.2) message;
- the ``echo`` lines of the injected ``wait-gcs-ready`` init container.

With several tags, ``--diff`` prints only what is new or gone between consecutive tags, which is how
an entry's version range is found.

    .venv/bin/python tools/inventory/extract_kuberay.py --git /work/.mirror/ray-project+kuberay/repo \\
        --ref v1.0.0 --ref v1.3.0 --ref v1.7.0 --diff

It is run by hand when the mirror is at hand, never at test time; what it prints are candidates to
read in context, not entries (a message's cause comes from CAUSES.md, not from here).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

SOURCES = ("ray-operator/controllers/ray", "ray-operator/apis/ray", "ray-operator/main.go")
# One pattern per kind of candidate; each names the group that holds the message.
PATTERNS: dict[str, re.Pattern[str]] = {
    "event": re.compile(
        r"Recorder\.Eventf?\((?P<args>.*)$",
    ),
    "status": re.compile(r"(?:Status\.(?:Message|Reason)|Message|Reason)\s*[:=]\s*(?P<args>.*)$"),
    "log": re.compile(r"\b(?:logger|log|r\.Log)\.(?:Info|Error)\((?P<args>.*)$"),
    "init": re.compile(r"\becho \"(?P<args>[^\"]*)\""),
}
QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"|`([^`]*)`')
EVENT_TYPE = re.compile(r"EventType(Normal|Warning)")
REASON = re.compile(r"(?:utils|rayv1)\.([A-Z][A-Za-z]+)|\"([A-Z][A-Za-z]+)\"")


@dataclass(frozen=True)
class Candidate:
    kind: str
    path: str
    line: int
    detail: str

    def key(self) -> tuple[str, str]:
        return (self.kind, self.detail)

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: [{self.kind}] {self.detail}"


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False)
    return done.stdout


def _files(repo: Path, ref: str) -> list[str]:
    listed = _git(repo, "ls-tree", "-r", "--name-only", ref, "--", *SOURCES).splitlines()
    return [p for p in listed if p.endswith(".go") and not p.endswith("_test.go")]


def _describe(kind: str, text: str) -> str:
    strings = [a or b for a, b in QUOTED.findall(text)]
    if kind == "event":
        event_type = EVENT_TYPE.search(text)
        reasons = [
            a or b for a, b in REASON.findall(text) if (a or b) not in {"CreateAction", "UpdateAction"}
        ]
        reason = reasons[0] if reasons else "?"
        head = f"{event_type.group(1) if event_type else '?'} {reason}"
        return f"{head}: {' '.join(s for s in strings if s != reason)}"
    return " ".join(strings) if strings else text.strip()[:160]


def candidates(repo: Path, ref: str) -> Iterator[Candidate]:
    for path in _files(repo, ref):
        lines = _git(repo, "show", f"{ref}:{path}").splitlines()
        for number, line in enumerate(lines):
            for kind, pattern in PATTERNS.items():
                match = pattern.search(line)
                if not match:
                    continue
                # A call's arguments often continue on the next lines: read up to three more.
                text = " ".join([match.group("args"), *lines[number + 1 : number + 4]])
                if kind == "status" and '"' not in match.group("args") and "Sprintf" not in text:
                    continue
                detail = _describe(kind, text if kind != "init" else match.group("args"))
                if detail:
                    yield Candidate(kind, path, number + 1, detail)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--git", type=Path, required=True, help="a git mirror of ray-project/kuberay")
    parser.add_argument(
        "--ref", action="append", required=True, help="a tag to read (repeatable), e.g. v1.7.0"
    )
    parser.add_argument("--kind", choices=sorted(PATTERNS), action="append", help="only these kinds")
    parser.add_argument(
        "--diff", action="store_true", help="print only what changes between consecutive refs"
    )
    args = parser.parse_args(argv)
    previous: dict[tuple[str, str], Candidate] | None = None
    for ref in args.ref:
        found = {c.key(): c for c in candidates(args.git, ref) if not args.kind or c.kind in args.kind}
        print(f"== {ref}: {len(found)} candidates")
        if args.diff and previous is not None:
            for key in sorted(found.keys() - previous.keys()):
                print(f"+ {found[key]}")
            for key in sorted(previous.keys() - found.keys()):
                print(f"- {previous[key]}")
        else:
            for candidate in sorted(found.values(), key=lambda c: (c.path, c.line)):
                print(candidate)
        previous = found
    return 0


if __name__ == "__main__":
    sys.exit(main())
