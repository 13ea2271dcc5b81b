"""The rule catalogue as a markdown page: ``raydiag rules --format markdown`` (``docs/rules.md``).

One row per rule in an index, then one section per rule: its stable code, cause, layer, severity,
what it reads (a tool's output, a person's retelling), its detector with the parameters it is given
(a text rule's patterns verbatim), the rules it supersedes, the formats its firing cases are read
as, and the cases themselves (``tests/cases/<rule>/{fires,quiet}/``). Everything comes from the
rule files and the case files; nothing here is written per rule, so the page is regenerated, never
edited (``make rules-doc``), and a test fails while the committed page is stale.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from bot.catalogue import Catalogue, Rule
from bot.render.messages import Lang, say
from bot.render.template import fill

COMMAND = "raydiag rules --format markdown > docs/rules.md"
OUTCOMES = ("fires", "quiet")
# Parameters shown as pattern lists, in this order; the others as `key: value`.
PATTERN_PARAMS = ("patterns", "retold", "exclude")
UNREAD = "no known output format recognised"
# A case that is a scenario of tests/support/scenarios.py rather than a paste or a manifest.
SCENARIO_SUFFIX = ".scenario.yaml"


def default_cases_dir(rules_dir: Path) -> Path:
    """``tests/cases`` beside the rules in a checkout (an installed package ships no cases)."""
    return rules_dir.resolve().parent / "tests" / "cases"


def case_files(cases_dir: Path, rule_id: str, outcome: str) -> list[Path]:
    folder = cases_dir / rule_id / outcome
    return sorted(p for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []


def _formats_read(paths: Iterable[Path], lang: Lang) -> list[str]:
    """The formats the readers recognise in the firing cases (the paste notes' labels); a scenario
    is diagnosed as a collected snapshot and a manifest by ``raydiag lint``."""
    from bot.collect.paste import parse_paste  # noqa: PLC0415 - lazy: only the markdown catalogue reads cases

    labels: set[str] = set()
    for path in paths:
        if path.name.endswith(SCENARIO_SUFFIX):
            labels.add(say("rules_doc.kind.scenario", lang))
        elif path.suffix == ".yaml":
            labels.add(say("rules_doc.kind.manifest", lang))
        elif path.suffix == ".txt":
            labels.update(parse_paste(path.read_text(encoding="utf-8")).notes)
    return sorted(labels - {UNREAD})


def _escaped(text: str) -> str:
    """A title's ``<pod>`` stand-ins shown as text, not read as HTML tags."""
    return text.replace("<", "\\<").replace(">", "\\>")


def _cause(rule: Rule, lang: Lang) -> str:
    if rule.cause is None:
        return say("rules_doc.no_cause", lang)
    return say("quiz.about_cause", lang, cause=rule.cause, name=say(f"quiz.cause.{rule.cause}", lang))


def _value(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def _params(params: Mapping[str, Any], lang: Lang) -> list[str]:
    lines = []
    plain = {k: v for k, v in params.items() if k not in PATTERN_PARAMS}
    if plain:
        shown = "; ".join(f"`{k}: {_value(v)}`" for k, v in sorted(plain.items()))
        lines.append(f"- {say('rules_doc.params', lang)}: {shown}")
    for key in PATTERN_PARAMS:
        patterns = params.get(key) or []
        if patterns:
            lines += [f"- {say(f'rules_doc.{key}', lang)}:", "", "  ```text"]
            lines += [f"  {p}" for p in patterns]
            lines += ["  ```", ""]
    return lines


def _case_list(paths: list[Path], root: Path) -> str:
    return ", ".join(f"[`{p.name}`](../{p.relative_to(root).as_posix()})" for p in paths) or "—"


def rules_markdown(catalogue: Catalogue, cases_dir: Path | None, lang: Lang = "en") -> str:
    """The whole page, deterministic for the same rules and cases."""
    rules = sorted(catalogue, key=lambda r: r.code)
    root = cases_dir.resolve().parents[1] if cases_dir is not None else None
    have_cases = cases_dir is not None and cases_dir.is_dir()
    cases: dict[str, dict[str, list[Path]]] = {
        rule.id: {o: case_files(cases_dir, rule.id, o) if have_cases and cases_dir else [] for o in OUTCOMES}
        for rule in rules
    }
    out = [
        f"# {say('rules_doc.title', lang)}",
        "",
        say("rules_doc.generated", lang, command=f"`{COMMAND}`", make="`make rules-doc`", count=len(rules)),
        "",
    ]
    if not have_cases:
        out += [say("rules_doc.no_cases", lang), ""]
    columns = ("code", "rule", "cause", "layer", "severity", "reads", "fires", "quiet")
    out.append("| " + " | ".join(say(f"rules_doc.col.{c}", lang) for c in columns) + " |")
    out.append("|" + "---|" * len(columns))
    for rule in rules:
        row = (
            rule.code,
            f"[{rule.id}](#{rule.code.lower()})",
            str(rule.cause) if rule.cause is not None else "—",
            rule.layer,
            rule.severity,
            ", ".join(rule.reads),
            str(len(cases[rule.id]["fires"])),
            str(len(cases[rule.id]["quiet"])),
        )
        out.append("| " + " | ".join(row) + " |")
    out.append("")
    for rule in rules:
        fires, quiet = cases[rule.id]["fires"], cases[rule.id]["quiet"]
        out += [
            f'<a id="{rule.code.lower()}"></a>',
            f"## {rule.code} `{rule.id}`",
            "",
            _escaped(fill(rule.text[lang].title, {})),
            "",
            f"- {_cause(rule, lang)}",
            f"- {say('rules_doc.col.layer', lang)}: `{rule.layer}`; {say('rules_doc.stage', lang)}: "
            f"`{rule.stage}`; {say('rules_doc.col.severity', lang)}: `{rule.severity}`; "
            f"{say('rules_doc.priority', lang)}: {rule.priority}",
            f"- {say('rules_doc.col.reads', lang)}: {', '.join(f'`{r}`' for r in rule.reads)}",
            f"- {say('rules_doc.detector', lang)}: `{rule.detector}`",
            *_params(rule.params, lang),
        ]
        if rule.supersedes:
            out.append(
                f"- {say('rules_doc.supersedes', lang)}: {', '.join(f'`{s}`' for s in rule.supersedes)}"
            )
        if have_cases and root is not None:
            formats = _formats_read(fires, lang)
            shown = ", ".join(f"`{f}`" for f in formats) or "—"
            out += [
                f"- {say('rules_doc.formats', lang)}: {shown}",
                f"- {say('rules_doc.col.fires', lang)} ({len(fires)}): {_case_list(fires, root)}",
                f"- {say('rules_doc.col.quiet', lang)} ({len(quiet)}): {_case_list(quiet, root)}",
            ]
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"
