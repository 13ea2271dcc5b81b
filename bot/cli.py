"""The ``raydiag`` command line: the same diagnosis as the Slack bot, from a terminal.

Contract (used by checks outside the repo): the result alone goes to stdout; exit code 0 when the
diagnosis ran, whatever it found; 2 with a one-line message on stderr for bad usage or unreadable
input. ``lint`` exits 1 when a finding reaches ``--fail-on`` (default warning) or a check could
not run, 0 otherwise; a path that does not exist or a file that is not YAML is bad usage (2).
``verify`` exits 1 when a step of the verification order failed, 0 when none did.

A command runs for about a second and exits, and most of that second is imports. ``entrypoint`` (the
``raydiag`` script and ``python -m bot``) therefore holds the cyclic garbage collector off while a
command runs: it would otherwise walk, a hundred and fifty times, the objects the imports create
(pydantic's schemas, the Kubernetes client's models), which are never garbage; about a third of
``diagnose --cluster``. ``serve`` turns it back on, with what start-up made frozen out of its
reach. And once the answer is written and the exit handlers have run (they remove the Kubernetes
client's temporary certificate files, flush logs), the process exits without the interpreter's
teardown of some 700 modules, another 0.2 s nobody waits for on purpose.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TextIO

# Only the standard library at the top (the progress line is nothing more): `raydiag --help` and bad
# usage answer without loading the rule catalogue, the models or any client. Each command imports
# its own machinery when it runs, where that machinery costs 5 % of a command that does not need it
# (BENCHMARKS.md, "Start-up tricks"); cheaper imports stay here.
from bot.collect.progress import StderrProgress

if TYPE_CHECKING:
    from bot.catalogue import Catalogue
    from bot.collect.live import Target
    from bot.diagnoser import Meter
    from bot.diagnosis import Diagnosis
    from bot.render.messages import Lang
    from bot.snapshot.model import Snapshot

MAX_PASTE_BYTES = 64 * 1024 * 1024
EXIT_OK = 0
EXIT_FINDINGS = 1  # `lint`: a finding reached --fail-on; `verify`: a step failed
MAX_PROBE_TIMEOUT_S = 900.0
EXIT_USAGE = 2


class UsageError(Exception):
    """Bad usage or unreadable input: printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _add_target_options(parser: argparse.ArgumentParser, *, ray_cluster: bool = True) -> None:
    """Where a live cluster is read from; ``ray_cluster=False`` for commands that read only its
    nodes (``lint --cluster``), which have no namespace or dashboard to choose."""
    if ray_cluster:
        parser.add_argument(
            "--namespace", help="namespace of the RayCluster (default: from config, else default)"
        )
    else:
        parser.set_defaults(namespace=None, dashboard_url=None)
    parser.add_argument(
        "--kubeconfig", help="kubeconfig file (default: in-cluster, then KUBECONFIG/~/.kube/config)"
    )
    parser.add_argument("--context", help="kubeconfig context")
    if ray_cluster:
        parser.add_argument(
            "--dashboard-url", help="Ray dashboard URL (default: http://<cluster>-head-svc.<ns>.svc...:8265)"
        )
    parser.add_argument("--config", type=Path, help="raydiag config file (YAML)")
    parser.add_argument("--deadline", type=float, help="seconds the whole collection may take")


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

    diagnose = commands.add_parser("diagnose", help="diagnose a live cluster (--cluster) or a snapshot file")
    source = diagnose.add_mutually_exclusive_group(required=True)
    source.add_argument("--snapshot", type=Path, help="snapshot or bundle JSON file")
    source.add_argument("--cluster", help="RayCluster name (or a cluster name from --config)")
    _add_target_options(diagnose)
    _add_output_options(diagnose)

    collect = commands.add_parser("collect", help="read a live cluster into a snapshot file")
    collect.add_argument("--cluster", required=True, help="RayCluster name (or a cluster name from --config)")
    collect.add_argument("-o", "--output", required=True, help="snapshot file to write, or - for stdout")
    _add_target_options(collect)

    capacity = commands.add_parser(
        "capacity", help="draw where the GPUs are, layer by layer, as a PNG and print the figures"
    )
    source = capacity.add_mutually_exclusive_group(required=True)
    source.add_argument("--snapshot", type=Path, help="snapshot or bundle JSON file")
    source.add_argument("--cluster", help="RayCluster name (or a cluster name from --config)")
    capacity.add_argument("-o", "--output", type=Path, required=True, help="PNG file to write")
    _add_target_options(capacity)
    capacity.add_argument("--format", choices=("text", "json"), default="text")
    capacity.add_argument("--lang", choices=("en", "zh"), default="en")

    serve = commands.add_parser("serve", help="run the Slack bot (Socket Mode, or --http)")
    serve.add_argument("--http", action="store_true", help="serve POST /slack/events instead of Socket Mode")
    serve.add_argument("--host", default="0.0.0.0", help="HTTP listen address (default 0.0.0.0)")
    serve.add_argument("--port", type=int, default=3000, help="HTTP port (default 3000)")

    lint = commands.add_parser(
        "lint",
        help="check RayCluster, RayJob and RayService manifests before they deploy (exit 1 on findings)",
    )
    lint.add_argument(
        "paths", nargs="+", metavar="PATH", help="manifest file, directory of *.yaml/*.yml, or - for stdin"
    )
    lint.add_argument("--format", choices=("text", "json", "sarif"), default="text")
    lint.add_argument(
        "--fail-on",
        choices=("warning", "critical"),
        default="warning",
        help="exit 1 when a finding is at least this severe (default warning)",
    )
    lint.add_argument("--lang", choices=("en", "zh"), default="en")
    against = lint.add_mutually_exclusive_group()
    against.add_argument(
        "--nodes",
        action="append",
        metavar="FILE",
        help="node list the groups must fit: `kubectl get nodes -o json` output or YAML of Node objects "
        "(repeatable)",
    )
    against.add_argument(
        "--cluster",
        help="hold the groups against this cluster's live nodes and their labels "
        "(a RayCluster name, or a cluster name from --config)",
    )
    _add_target_options(lint, ray_cluster=False)

    verify = commands.add_parser(
        "verify",
        help="run the verification order on a live cluster: Pods, Ray nodes and GPUs, a GPU probe per "
        "pool, Serve, leftover holders (exit 1 when a step fails)",
    )
    verify.add_argument("--cluster", required=True, help="RayCluster name (or a cluster name from --config)")
    _add_target_options(verify)
    verify.add_argument(
        "--timeout", type=float, default=120.0, help="seconds each probe may wait for a GPU (default 120)"
    )
    verify.add_argument(
        "--start-timeout",
        type=float,
        default=120.0,
        help="seconds each probe job may take to start before that wait (default 120)",
    )
    verify.add_argument("--format", choices=("text", "json"), default="text")
    verify.add_argument("--lang", choices=("en", "zh"), default="en")

    rules = commands.add_parser("rules", help="list the rule catalogue")
    rules.add_argument("--lang", choices=("en", "zh"), default="en")
    rules.add_argument(
        "--format",
        choices=("text", "markdown"),
        default="text",
        help="text: one line a rule; markdown: the catalogue page with patterns and cases (docs/rules.md)",
    )
    rules.add_argument(
        "--cases", type=Path, help="the rule cases folder for markdown (default: tests/cases beside rules/)"
    )

    quiz = commands.add_parser("quiz", help="the onboarding quiz: questions here, answers typed as numbers")
    quiz.add_argument("--lang", choices=("en", "zh"), default="en")
    quiz.add_argument("--db", help="state database: a SQLite file or a URL (default: the bot's default)")
    quiz.add_argument("--config", type=Path, help="raydiag config file whose state.url keeps the scores")
    quiz.add_argument("--user", help="whose progress to use (default: your login name)")
    quiz_mode = quiz.add_mutually_exclusive_group()
    quiz_mode.add_argument("--stats", action="store_true", help="show the team's results")
    quiz_mode.add_argument("--reset", action="store_true", help="forget your answers and start over")

    corpus = commands.add_parser("corpus", help="users' verdicts from Slack as test corpus cases")
    corpus_commands = corpus.add_subparsers(
        dest="corpus_command", metavar="{export}", required=True, parser_class=_Parser
    )
    export = corpus_commands.add_parser(
        "export", help="write every diagnosis people gave a verdict on as a tests/corpus batch folder"
    )
    export.add_argument(
        "--out", type=Path, required=True, help="the batch folder to write (created if needed)"
    )
    export.add_argument("--db", help="state database: a SQLite file or a URL (default: the bot's default)")
    export.add_argument("--config", type=Path, help="raydiag config file whose state.url keeps the verdicts")
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
    from bot.render.json_report import render_json  # noqa: PLC0415 - lazy: commands that diagnose
    from bot.render.text_report import render_markdown, render_text  # noqa: PLC0415 - lazy: commands that diagnose

    if fmt == "json":
        return render_json(diagnosis, catalogue, lang) + "\n"
    if fmt == "markdown":
        return render_markdown(diagnosis, catalogue, lang)
    return render_text(diagnosis, catalogue, lang)


def list_rules(catalogue: Catalogue, lang: Lang) -> str:
    from bot.render.template import fill  # noqa: PLC0415 - lazy: `rules` only

    lines = []
    for rule in sorted(catalogue, key=lambda r: r.code):
        cause = f"{rule.cause:>2}" if rule.cause else " -"
        title = fill(rule.text[lang].title, {})
        lines.append(f"{rule.code}  {cause}  {rule.layer:<11} {rule.severity:<8} {rule.id:<40} {title}")
    return "\n".join(lines) + "\n"


def _rules_page(args: argparse.Namespace, catalogue: Catalogue) -> str:
    from bot.catalogue import default_rules_dir  # noqa: PLC0415 - lazy: `rules --format markdown` only
    from bot.render.rules_doc import default_cases_dir, rules_markdown  # noqa: PLC0415 - lazy: `rules` only

    cases = args.cases if args.cases is not None else default_cases_dir(default_rules_dir())
    return rules_markdown(catalogue, cases, args.lang)


def _target(args: argparse.Namespace) -> tuple[Target, float, float]:
    from bot.collect.live import Target  # noqa: PLC0415 - lazy: live collection loads the Kubernetes client
    from bot.config import NAME, ClusterConfig, Config, ConfigError, load_config  # noqa: PLC0415 - lazy: live commands

    settings = Config()
    if args.config is not None:
        try:
            settings = load_config(args.config)
        except ConfigError as error:
            raise UsageError(str(error)) from error
    name = args.cluster
    configured = settings.cluster(name)
    if configured is None and (not NAME.match(name) or (args.namespace and not NAME.match(args.namespace))):
        raise UsageError(f"{name!r} is not a valid RayCluster name (lower-case letters, digits and '-')")
    if configured is None and args.config is not None and settings.clusters:
        known = ", ".join(c.name for c in settings.clusters)
        raise UsageError(f"cluster {name!r} is not in {args.config}; configured: {known}")
    base = configured or ClusterConfig(name=name)
    target = Target(
        cluster=base.name,
        namespace=args.namespace or base.namespace,
        raycluster=base.raycluster,
        kubeconfig=args.kubeconfig or base.kubeconfig,
        context=args.context or base.context,
        dashboard_url=args.dashboard_url or base.dashboard_url,
    )
    deadline = args.deadline if args.deadline is not None else settings.collection.deadline_s
    if deadline <= 0:
        raise UsageError("--deadline must be a positive number of seconds")
    return target, deadline, settings.collection.call_timeout_s


def _collect(args: argparse.Namespace, found: tuple[Target, float, float] | None = None) -> Snapshot:
    from bot.collect.live import collect_live  # noqa: PLC0415 - lazy: live collection loads the Kubernetes client

    target, deadline, call_timeout = found or _target(args)
    with StderrProgress() as progress:
        return collect_live(target, deadline_s=deadline, call_timeout_s=call_timeout, progress=progress)


def _judge(snapshot: Snapshot, catalogue: Catalogue, meter: Meter | None) -> Diagnosis:
    """A snapshot's diagnosis by the same Diagnoser as every trigger of the bot; a terminal has no
    /metrics, so by default nothing is counted, and its one diagnosis needs no pool."""
    from bot.diagnoser import NO_METER, Diagnoser  # noqa: PLC0415 - lazy: loads every detector

    diagnoser = Diagnoser(None, catalogue=catalogue, metrics=meter or NO_METER)
    try:
        return diagnoser.judge(snapshot, "cli")
    finally:
        diagnoser.shutdown()


def _verify(args: argparse.Namespace, catalogue: Catalogue, stdout: TextIO, meter: Meter | None) -> int:
    """The verification order of CAUSES.md on a live cluster, now: exit 1 when a step failed."""
    from bot.probes.pools import probe_pools  # noqa: PLC0415 - lazy: `verify` only (loads Ray's job client)
    from bot.probes.verification import passed, pools_of, verification  # noqa: PLC0415 - lazy: `verify` only
    from bot.render.verify_text import render_verify_json, render_verify_text  # noqa: PLC0415 - lazy: `verify` only

    for option, value in (("--timeout", args.timeout), ("--start-timeout", args.start_timeout)):
        if not 0 < value <= MAX_PROBE_TIMEOUT_S:
            raise UsageError(f"{option} must be more than 0 and at most {MAX_PROBE_TIMEOUT_S:g} seconds")
    found = _target(args)
    target = found[0]
    diagnosis = _judge(_collect(args, found), catalogue, meter)
    pools = pools_of(diagnosis)
    if pools:
        print(
            f"raydiag: probing {len(pools)} GPU pool(s) ({', '.join(pools)}), each waits at most "
            f"{args.timeout:g}s",
            file=sys.stderr,
        )
    url = target.dashboard_url or target.default_dashboard_url()
    probes = probe_pools(
        url,
        pools,
        diagnosis.capacity.ray_gpu_nodes,
        timeout_s=args.timeout,
        start_timeout_s=args.start_timeout,
        poll_s=0.5,
    )
    steps = verification(diagnosis, probes)
    versions = diagnosis.versions.known()
    if args.format == "json":
        stdout.write(render_verify_json(target.cluster, versions, steps, probes) + "\n")
    else:
        stdout.write(render_verify_text(target.cluster, versions, steps, probes, args.lang, args.timeout))
    return EXIT_OK if passed(steps) else EXIT_FINDINGS


def _snapshot(args: argparse.Namespace) -> Snapshot:
    """The snapshot file given with --snapshot, else a live collection of --cluster."""
    from bot.read.snapshot_file import SnapshotError, load_snapshot  # noqa: PLC0415 - lazy: --snapshot only

    if args.snapshot is None:
        return _collect(args)
    try:
        return load_snapshot(args.snapshot)
    except SnapshotError as error:
        raise UsageError(str(error)) from error


def _capacity(args: argparse.Namespace, catalogue: Catalogue, meter: Meter | None) -> str:
    """Write the capacity chart to --output; the figures, as a table or JSON, are the result."""
    import dataclasses  # noqa: PLC0415 - lazy: `capacity --format json` only
    import json  # noqa: PLC0415 - lazy: `capacity --format json` only

    from bot.render.capacity import capacity_table, gap_summary  # noqa: PLC0415 - lazy: `capacity` only
    from bot.render.capacity_chart import render_capacity_png  # noqa: PLC0415 - lazy: loads matplotlib
    from bot.render.messages import say  # noqa: PLC0415 - lazy: `capacity` only

    output: Path = args.output
    if output.is_dir():
        raise UsageError(f"{output} is a directory; give the PNG a file name, e.g. {output / 'capacity.png'}")
    if not output.parent.is_dir():
        raise UsageError(f"cannot write {output}: {output.parent} is not a directory")
    snapshot = _snapshot(args)
    cluster = snapshot.cluster or args.cluster or args.snapshot.stem
    figures = _judge(snapshot, catalogue, meter).capacity
    png = render_capacity_png(figures, cluster=cluster, lang=args.lang)
    try:
        output.write_bytes(png)
    except OSError as error:
        raise UsageError(f"cannot write {output}: {error.strerror or error}") from error
    if args.format == "json":
        from bot.snapshot.data import dump  # noqa: PLC0415 - lazy: only these commands write models

        report = {
            "cluster": cluster,
            "chart": str(output),
            "summary": gap_summary(figures, args.lang),
            "models": [dataclasses.asdict(row) for row in figures.models],
            "capacity": dump(figures, mode="json"),
        }
        return json.dumps(report, ensure_ascii=False) + "\n"
    return (
        capacity_table(figures, cluster=cluster, lang=args.lang)
        + say("capacity.chart", args.lang, path=output)
        + "\n"
    )


def _lint(args: argparse.Namespace, catalogue: Catalogue, stdin: TextIO, stdout: TextIO) -> int:
    """Check the manifests, against a node list or the live cluster's nodes and the config's
    conventions when given; exit 1 when a finding reaches --fail-on (or a check could not run)."""
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415 - lazy: `lint --format sarif` only

    from bot.classify.lint import collection_findings, lint_rules, lint_snapshot  # noqa: PLC0415 - lazy: loads every detector
    from bot.collect.manifests_lint import (  # noqa: PLC0415 - lazy: `lint` only
        STDIN,
        Manifest,
        ManifestError,
        expand_paths,
        read_bytes,
        read_live_nodes,
        read_manifests,
        read_node_files,
        snapshot_of,
    )
    from bot.config import ConfigError, load_config  # noqa: PLC0415 - lazy: `lint --config` only
    from bot.diagnosis import Diagnosis  # noqa: PLC0415 - lazy: `lint` only
    from bot.render.json_report import render_json  # noqa: PLC0415 - lazy: `lint` only
    from bot.render.lint_report import (  # noqa: PLC0415 - lazy: `lint` only
        LintResult,
        Located,
        lint_diagnosis,
        render_lint_text,
        render_sarif,
    )

    if args.paths.count(STDIN) > 1:
        raise UsageError("- (standard input) may be given once")
    gpu_models: list[dict[str, str]] = []
    if args.config is not None:
        from bot.snapshot.data import dump  # noqa: PLC0415 - lazy: only these commands write models

        try:
            gpu_models = [dump(entry) for entry in load_config(args.config).conventions.gpu_models]
        except ConfigError as error:
            raise UsageError(str(error)) from error
    rules = lint_rules(catalogue, gpu_models)
    manifests: list[Manifest] = []
    try:
        files = expand_paths(args.paths)
        nodes = read_node_files(args.nodes) if args.nodes else None
        for path in files:
            data = None
            if path == STDIN:
                data = stdin.buffer.read() if hasattr(stdin, "buffer") else stdin.read().encode()
            manifests.extend(read_manifests(read_bytes(path, data), path))
    except ManifestError as error:
        raise UsageError(str(error)) from error
    # The live nodes are read once, after every file has been read: bad usage costs no API call.
    unread = Diagnosis()
    if args.cluster is not None:
        target, deadline, call_timeout = _target(args)
        nodes, node_errors = read_live_nodes(target, deadline, call_timeout)
        unread = collection_findings(node_errors, catalogue) if node_errors else unread
    located: list[Located] = []
    errors = list(unread.errors)
    for manifest in manifests:
        diagnosis = lint_snapshot(snapshot_of(manifest, nodes, live=args.cluster is not None), rules)
        errors.extend(diagnosis.errors)
        located.extend(
            Located(f, manifest.path, manifest.line, manifest.label, manifest.cluster.namespace)
            for f in diagnosis.findings
        )
    result = LintResult(
        located=located,
        failures=Diagnosis(errors=errors),
        files=len(files),
        objects=len(manifests),
        general=list(unread.findings),
    )
    if args.format == "json":
        stdout.write(render_json(lint_diagnosis(result), catalogue, args.lang) + "\n")
    elif args.format == "sarif":
        try:
            tool_version = version("raydiag")
        except PackageNotFoundError:
            tool_version = "unknown"
        stdout.write(render_sarif(result, catalogue, args.lang, tool_version))
    else:
        stdout.write(render_lint_text(result, catalogue, args.lang))
    return EXIT_FINDINGS if result.reaches(args.fail_on) else EXIT_OK


def run(argv: Sequence[str], stdin: TextIO, stdout: TextIO, meter: Meter | None = None) -> int:
    args = build_parser().parse_args(argv)
    from bot.catalogue import default_catalogue  # noqa: PLC0415 - lazy: `--help` and bad usage need no rules

    # Loaded first by every command, so that an invalid rule file stops each one the same way.
    catalogue = default_catalogue()
    if args.command == "serve":
        from bot.serve import StartupError, serve  # noqa: PLC0415 - lazy: loads Slack and the whole service

        long_running()
        try:
            serve(args.http, args.host, args.port)
        except StartupError as error:
            raise UsageError(str(error)) from error
        return EXIT_OK
    if args.command == "lint":
        return _lint(args, catalogue, stdin, stdout)
    if args.command == "verify":
        return _verify(args, catalogue, stdout, meter)
    if args.command == "rules":
        stdout.write(
            _rules_page(args, catalogue) if args.format == "markdown" else list_rules(catalogue, args.lang)
        )
        return EXIT_OK
    if args.command == "quiz":
        from bot.quiz.terminal import QuizCommandError, run_quiz_command  # noqa: PLC0415 - lazy: `quiz` only

        try:
            run_quiz_command(
                db=args.db,
                config=args.config,
                user=args.user,
                lang=args.lang,
                stats=args.stats,
                reset=args.reset,
                stdin=stdin,
                stdout=stdout,
            )
        except QuizCommandError as error:
            raise UsageError(str(error)) from error
        return EXIT_OK
    if args.command == "corpus":
        from bot.corpus.export import ExportError, run_export  # noqa: PLC0415 - lazy: `corpus` only

        try:
            stdout.write(run_export(args.db, args.config, args.out))
        except ExportError as error:
            raise UsageError(str(error)) from error
        return EXIT_OK
    if args.command == "collect":
        snapshot = _collect(args)
        text = snapshot.to_json() + "\n"
        if args.output == "-":
            stdout.write(text)
        else:
            try:
                Path(args.output).write_text(text, encoding="utf-8")
            except OSError as error:
                raise UsageError(f"cannot write {args.output}: {error.strerror or error}") from error
        return EXIT_OK
    if args.command == "capacity":
        stdout.write(_capacity(args, catalogue, meter))
        return EXIT_OK
    if args.command != "explain":
        diagnosis = _judge(_snapshot(args), catalogue, meter)
    else:
        from bot.diagnoser import NO_METER, Diagnoser  # noqa: PLC0415 - lazy: loads every detector

        # The same Diagnoser as every trigger of the bot (see ``_judge``).
        diagnoser = Diagnoser(None, catalogue=catalogue, metrics=meter or NO_METER)
        try:
            diagnosis = diagnoser.explain(_read_text(args.path, stdin), "cli")
        finally:
            diagnoser.shutdown()
    stdout.write(render(diagnosis, catalogue, args.format, args.lang))
    return EXIT_OK


def _is_rule_error(error: Exception) -> bool:
    """A ``RuleError`` can only come from a loaded catalogue module; importing it to ask would not be lazy."""
    catalogue = sys.modules.get("bot.catalogue")
    return catalogue is not None and isinstance(error, catalogue.RuleError)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return run(sys.argv[1:] if argv is None else argv, sys.stdin, sys.stdout)
    except UsageError as error:
        print(f"raydiag: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK
    except ValueError as error:
        if not _is_rule_error(error):
            raise
        print(f"raydiag: invalid rule catalogue: {error}", file=sys.stderr)
        return EXIT_USAGE


def long_running() -> None:
    """A process that stays (the bot) collects its garbage: what start-up made is frozen (never
    collected, and never walked again), and the collector is on from here."""
    gc.freeze()
    gc.enable()


def entrypoint() -> None:
    """The ``raydiag`` command: ``main`` with the collector held off, then a quick exit (see above)."""
    gc.disable()
    code = main()
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (`raydiag rules | head`): nothing left to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.stderr.flush()
    atexit._run_exitfuncs()  # what `sys.exit` would run first: temporary files, logging
    os._exit(code)


if __name__ == "__main__":
    entrypoint()
