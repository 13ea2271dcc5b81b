"""List the candidate messages of Ray's source for the message inventory (``tests/inventory/ray-*.yaml``).

The inventory is written by hand, entry by entry, from the source; this script only finds the places
to read. It scans Ray's Python (``logger.warning(...)``, ``cli_logger.error(...)``, the autoscaler's
event summarizer and event logger, Serve's controller) and C++ (``RAY_LOG(WARNING) << "..."``) for
log calls whose literal text speaks of scheduling, resources, GPUs, connectivity, scaling or
start-up, and prints each with its file, line and the joined string literals of the call. Two kinds
of tree are read:

- a git mirror (``fetch`` of ``ray-project/ray`` puts one under ``/work/.mirror/``), at a tag:
  ``extract_ray.py --git /work/.mirror/ray-project+ray/repo --ref ray-2.9.3``;
- an unpacked wheel, whose ``ray/`` package holds the Python sources of that release (the C++ is
  compiled in, so ``--strings`` lists the literal fragments of the raylet and GCS binaries instead):
  ``pip download --no-deps ray==2.9.3`` then ``unzip`` it and ``extract_ray.py --dir DIR/ray``.

    .venv/bin/python tools/inventory/extract_ray.py --dir .venv/lib/python3.12/site-packages/ray \\
        --part autoscaler-v2 --strings

It is run by hand when a source tree is at hand, never at test time; what it prints is a list of
candidates to read in context, not entries (a message's cause comes from CAUSES.md, not from here).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

# Which files belong to which inventory file (path prefixes relative to the ``ray`` package for
# Python; the C++ lives under ``src/ray`` in the repository).
PARTS: dict[str, tuple[str, ...]] = {
    "core": (
        "_private/worker.py",
        "_private/node.py",
        "_private/services.py",
        "_private/utils.py",
        "_private/accelerators/",
        "_private/resource_spec.py",
        "_private/runtime_env/",
        "_private/gcs_utils.py",
        "_private/log_monitor.py",
        "util/placement_group.py",
        "scripts/scripts.py",
        "exceptions.py",
        "src/ray/raylet/",
        "src/ray/gcs/",
        "src/ray/core_worker/",
        "src/ray/common/",
    ),
    "autoscaler-v1": ("autoscaler/_private/",),
    "autoscaler-v2": ("autoscaler/v2/", "autoscaler/_private/kuberay/"),
    "serve": ("serve/_private/", "serve/schema.py", "serve/api.py"),
}

# The topics the inventory covers; a candidate's literal text must name one of them.
TOPICS = re.compile(
    r"schedul|resource|GPU|CUDA|NVML|accelerator|placement|infeasib|pending|node|GCS|connect|"
    r"version mismatch|launch|terminat|autoscal|scale|replica|deploy|health|runtime.?env|"
    r"memory|OOM|timeout|timed out|dead|died|failed|unable|cannot|could not",
    re.IGNORECASE,
)
# A Python log call (logger/cli_logger/event summarizer/print) and the start of a C++ RAY_LOG.
PY_CALL = re.compile(
    r"\b(?:logger|cli_logger|log|_logger|event_summarizer|self\.event_logger|event_logger)\s*\.\s*"
    r"(warning|warn|error|exception|info|critical|add|add_once_per_interval|print|abort)\s*\("
)
PY_PUSH = re.compile(r"\b(?:push_error_to_driver|_raise_error|raise\s+\w*(?:Error|Exception))\s*\(")
CC_CALL = re.compile(r"RAY_LOG\((WARNING|ERROR|INFO|FATAL)\)|RAY_LOG_EVERY_MS\((WARNING|ERROR|INFO)")
STRING = re.compile(r"""(?:[rbfRBF]{0,2})("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')""")


@dataclass(frozen=True)
class Candidate:
    path: str
    line: int
    level: str
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: [{self.level}] {self.text}"


def _literals(call: str) -> str:
    """The string literals of a call joined as the tool joins them (``{...}`` marks what is formatted)."""
    parts = []
    for match in STRING.finditer(call):
        body = match.group(1)[1:-1]
        parts.append(re.sub(r"\{[^{}]*\}", "{…}", body))
    return "".join(parts).replace("\\n", " ").strip()


def _call_text(lines: Sequence[str], start: int, opener: int) -> str:
    """The text of a call from its opening parenthesis to the matching one (at most 25 lines)."""
    depth = 0
    out: list[str] = []
    for line in lines[start : start + 25]:
        segment = line[opener:] if not out else line
        opener = 0
        for index, char in enumerate(segment):
            if char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
                if depth == 0:
                    out.append(segment[: index + 1])
                    return "\n".join(out)
        out.append(segment)
    return "\n".join(out)


def _cc_statement(lines: Sequence[str], start: int) -> str:
    out = []
    for line in lines[start : start + 25]:
        out.append(line)
        if line.rstrip().endswith(";"):
            break
    return "\n".join(out)


def scan_python(path: str, text: str) -> Iterator[Candidate]:
    lines = text.splitlines()
    for number, line in enumerate(lines):
        for match in list(PY_CALL.finditer(line)) + list(PY_PUSH.finditer(line)):
            level = match.group(1) if match.re is PY_CALL else "raise"
            literal = _literals(_call_text(lines, number, match.start()))
            if literal and TOPICS.search(literal):
                yield Candidate(path, number + 1, level, literal)


def scan_cc(path: str, text: str) -> Iterator[Candidate]:
    lines = text.splitlines()
    for number, line in enumerate(lines):
        match = CC_CALL.search(line)
        if match:
            literal = _literals(_cc_statement(lines, number))
            if literal and TOPICS.search(literal):
                yield Candidate(path, number + 1, match.group(1) or match.group(2), literal)


def _in_part(path: str, part: str | None) -> bool:
    prefixes = PARTS.get(part, ()) if part else tuple(p for ps in PARTS.values() for p in ps)
    relative = path.split("python/ray/", 1)[-1]
    return relative.startswith(prefixes) or path.startswith(prefixes)


def from_dir(root: Path, part: str | None) -> Iterator[tuple[str, str]]:
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        vendored = "/tests/" in f"/{relative}" or "thirdparty" in relative
        if path.suffix in {".py", ".cc", ".h"} and not vendored and _in_part(relative, part):
            yield relative, path.read_text(encoding="utf-8", errors="replace")


def from_git(repo: Path, ref: str, part: str | None) -> Iterator[tuple[str, str]]:
    """The files of ``ref`` that hold a log call, read with ``git grep``/``git show`` (nothing is
    checked out: a mirror has no work tree)."""
    pattern = r"logger\.|RAY_LOG(|cli_logger\.|event_summarizer\.|event_logger\."
    listed = subprocess.run(
        ["git", "-C", str(repo), "grep", "-l", "-E", pattern, ref, "--", "python/ray", "src/ray"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.splitlines()
    for item in listed:
        path = item.split(":", 1)[1]
        if "/tests/" in path or "_test." in path or not _in_part(path, part):
            continue
        shown = subprocess.run(
            ["git", "-C", str(repo), "show", f"{ref}:{path}"], capture_output=True, text=True, check=False
        )
        yield path, shown.stdout


def binary_strings(root: Path) -> Iterator[Candidate]:
    """The literal fragments of the compiled raylet and GCS server (C++ messages of a wheel)."""
    for binary in ("core/src/ray/raylet/raylet", "core/src/ray/gcs/gcs_server"):
        path = root / binary
        if not path.exists():
            continue
        data = path.read_bytes()
        for match in re.finditer(rb"[\x20-\x7e]{24,}", data):
            text = match.group().decode("ascii")
            if TOPICS.search(text) and " " in text and not text.startswith("_Z"):
                yield Candidate(binary, 0, "strings", text)


def candidates(files: Iterable[tuple[str, str]]) -> Iterator[Candidate]:
    for path, text in files:
        scan = scan_cc if path.endswith((".cc", ".h")) else scan_python
        yield from scan(path, text)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--git", type=Path, help="a git mirror of ray-project/ray (no work tree needed)")
    source.add_argument("--dir", type=Path, help="a source folder, e.g. an unpacked wheel's ray/ package")
    parser.add_argument("--ref", default="HEAD", help="the tag or commit to read in --git (e.g. ray-2.9.3)")
    parser.add_argument("--part", choices=sorted(PARTS), help="only the files of one inventory file")
    parser.add_argument("--strings", action="store_true", help="also list the compiled binaries' literals")
    args = parser.parse_args(argv)
    files = from_git(args.git, args.ref, args.part) if args.git else from_dir(args.dir, args.part)
    count = 0
    for candidate in candidates(files):
        print(candidate)
        count += 1
    if args.strings and args.dir:
        for candidate in binary_strings(args.dir):
            print(candidate)
            count += 1
    print(f"{count} candidates", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
