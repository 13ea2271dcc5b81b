"""A small reader for the Dockerfile and .dockerignore, enough to check the rules the image keeps.

``instructions`` joins continued lines, drops comments and parser directives, and splits the file
into stages; ``Instruction.exec_form`` reads the JSON form of CMD, ENTRYPOINT and HEALTHCHECK.
``DockerIgnore`` answers whether a path of the repository is sent to the builder, with the
.dockerignore rules (last matching pattern wins, ``!`` re-includes, a matching directory takes its
contents, ``**`` spans directories).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath


@dataclass(frozen=True)
class Instruction:
    keyword: str
    arguments: str
    line: int

    def exec_form(self) -> list[str]:
        text = self.arguments
        if self.keyword == "HEALTHCHECK":
            text = text[text.index("CMD") + len("CMD") :].strip()
        parsed = json.loads(text)
        assert isinstance(parsed, list) and all(isinstance(p, str) for p in parsed)
        return parsed

    def flags(self) -> dict[str, str]:
        return dict(re.findall(r"--([a-z-]+)=(\S+)", self.arguments))


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[Instruction] = field(default_factory=list)

    def all(self, keyword: str) -> list[Instruction]:
        return [i for i in self.instructions if i.keyword == keyword]

    def env(self) -> dict[str, str]:
        values: dict[str, str] = {}
        for instruction in self.all("ENV"):
            for key, value in re.findall(r"(\w+)=(\S+)", instruction.arguments):
                values[key] = value
        return values


def instructions(path: Path) -> list[Instruction]:
    found: list[Instruction] = []
    pending, start = "", 0
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if pending and line.startswith("#"):
            continue  # a comment inside a continued instruction
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        text = pending + line
        pending = ""
        keyword, _, arguments = text.partition(" ")
        found.append(Instruction(keyword.upper(), " ".join(arguments.split()), start))
    assert not pending, f"{path}: the last instruction ends with a line continuation"
    return found


def stages(path: Path) -> list[Stage]:
    result: list[Stage] = []
    for instruction in instructions(path):
        if instruction.keyword == "FROM":
            parts = instruction.arguments.split()
            base = next(p for p in parts if not p.startswith("--"))
            name = parts[parts.index("AS") + 1] if "AS" in parts else None
            result.append(Stage(base, name))
        else:
            assert result, f"{instruction.keyword} before the first FROM (line {instruction.line})"
            result[-1].instructions.append(instruction)
    return result


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    parts: list[str] = []
    index = 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            parts.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("**", index):
            parts.append(".*")
            index += 2
        elif pattern[index] == "*":
            parts.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            parts.append("[^/]")
            index += 1
        else:
            parts.append(re.escape(pattern[index]))
            index += 1
    return re.compile("".join(parts) + r"\Z")


@dataclass(frozen=True)
class DockerIgnore:
    rules: tuple[tuple[bool, re.Pattern[str]], ...]  # (re-include, pattern)

    @classmethod
    def read(cls, path: Path) -> DockerIgnore:
        rules = []
        for raw in path.read_text(encoding="utf-8").splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            negated = line.startswith("!")
            pattern = line[1:] if negated else line
            pattern = str(PurePosixPath(pattern.strip("/")))
            rules.append((negated, _pattern_regex(pattern)))
        return cls(tuple(rules))

    def sends(self, relative: str) -> bool:
        """Whether this repository path reaches the builder."""
        path = PurePosixPath(relative)
        candidates = [str(path), *(str(p) for p in path.parents if str(p) != ".")]
        excluded = False
        for negated, pattern in self.rules:
            if any(pattern.match(c) for c in candidates):
                excluded = not negated
        return not excluded
