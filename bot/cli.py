"""The ``raydiag`` command line: the same diagnosis as the Slack bot, from a terminal.

Contract (used by checks outside the repo): the result alone goes to stdout; exit code 0 when the
diagnosis ran, whatever it found; 2 with a one-line message on stderr for bad usage or unreadable
input.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn, TextIO

from bot.catalogue import Catalogue, RuleError, default_catalogue
from bot.classify import classify
from bot.diagnosis import Diagnosis
from bot.render import render_json, render_markdown, render_text
from bot.render.localize import fill
from bot.render.messages import Lang
from bot.snapshot.files import SnapshotError, load_snapshot

MAX_PASTE_BYTES = 64 * 1024 * 1024
EXIT_OK = 0
EXIT_USAGE = 2


class UsageError(Exception):
    """Bad usage or unreadable input: printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _add_output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    parser.add_argument("--lang", choices=("en", "zh"), default="en")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="raydiag", description="Why is my Ray work on Kubernetes stuck?")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    explain = commands.add_parser(
        "explain", help="diagnose pasted output (ray status, kubectl describe, logs)"
    )
    explain.add_argument("path", nargs="?", default="-", help="file with the pasted text, or - for stdin")
    _add_output_options(explain)

    diagnose = commands.add_parser("diagnose", help="diagnose a snapshot file")
    diagnose.add_argument("--snapshot", required=True, type=Path, help="snapshot or bundle JSON file")
    _add_output_options(diagnose)

    rules = commands.add_parser("rules", help="list the rule catalogue")
    rules.add_argument("--lang", choices=("en", "zh"), default="en")
    return parser


def _read_text(path: str, stdin: TextIO) -> str:
    if path == "-":
        data = stdin.buffer.read(MAX_PASTE_BYTES + 1) if hasattr(stdin, "buffer") else stdin.read().encode()
    else:
        try:
            with open(path, "rb") as handle:
                data = handle.read(MAX_PASTE_BYTES + 1)
        except OSError as error:
            raise UsageError(f"cannot read {path}: {error.strerror or error}") from error
    if len(data) > MAX_PASTE_BYTES:
        raise UsageError(f"input is larger than {MAX_PASTE_BYTES // (1024 * 1024)} MiB")
    return data.decode("utf-8", errors="replace")


def render(diagnosis: Diagnosis, catalogue: Catalogue, fmt: str, lang: Lang) -> str:
    if fmt == "json":
        return render_json(diagnosis, catalogue, lang) + "\n"
    if fmt == "markdown":
        return render_markdown(diagnosis, catalogue, lang)
    return render_text(diagnosis, catalogue, lang)


def list_rules(catalogue: Catalogue, lang: Lang) -> str:
    lines = []
    for rule in sorted(catalogue, key=lambda r: r.code):
        cause = f"{rule.cause:>2}" if rule.cause else " -"
        title = fill(rule.text[lang].title, {})
        lines.append(f"{rule.code}  {cause}  {rule.layer:<11} {rule.severity:<8} {rule.id:<40} {title}")
    return "\n".join(lines) + "\n"


def run(argv: Sequence[str], stdin: TextIO, stdout: TextIO) -> int:
    args = build_parser().parse_args(argv)
    catalogue = default_catalogue()
    if args.command == "rules":
        stdout.write(list_rules(catalogue, args.lang))
        return EXIT_OK
    if args.command == "explain":
        from bot.collect.paste import parse_paste

        snapshot = parse_paste(_read_text(args.path, stdin))
    else:
        try:
            snapshot = load_snapshot(args.snapshot)
        except SnapshotError as error:
            raise UsageError(str(error)) from error
    diagnosis = classify(snapshot, catalogue)
    stdout.write(render(diagnosis, catalogue, args.format, args.lang))
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return run(sys.argv[1:] if argv is None else argv, sys.stdin, sys.stdout)
    except UsageError as error:
        print(f"raydiag: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except RuleError as error:
        print(f"raydiag: invalid rule catalogue: {error}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
