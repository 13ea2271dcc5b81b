""" "Seen before": the shipped index of resolved reports, the closest three, and the fallback finding.

The index (bot/similar/reports.json) must equal what tools/build_similar_index.py writes from
tests/corpus today; the closest reports are ordered by score, one per thread; every renderer shows
them; and the finding made from likeness alone stays ``info``, says so, and never makes a verdict.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from bot.catalogue import default_catalogue
from bot.deliver.blocks.thread import render_thread
from bot.diagnoser import NO_METER, Diagnoser
from bot.diagnosis import SIMILAR_RULE, Diagnosis, SimilarReport, only_stated
from bot.render.json_report import report_dict
from bot.render.slack import MAX_BLOCKS
from bot.render.text_report import render_markdown, render_text
from bot.similar import agreed_cause, seen_before
from bot.similar import fallback as similar_fallback
from bot.similar.index import INDEX_FILE, Index, default_index, load_index, report_of
from bot.similar.tokens import STOP_WORDS, query_words
from bot.similar.weights import scorer

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import build_similar_index  # noqa: E402

# A description in words: no reader claims it, and the closest resolved reports are Ray threads
# where a live actor kept the only GPU (cause 5).
UNRECOGNISED = "my tasks are pending forever, the actor holds the GPU and the placement group waits"
# Two pastes of one thread (ray-project/ray#15594), kept in two batches of the corpus.
PAIR = (
    "shared-examples/ray-15594-second-gpu-actor-waits-on-first",
    "found-heldout4/ray-15594-second-1gpu-actor-waits-first-actor-holds-only-gpu",
)


@pytest.fixture(scope="module")
def diagnoser() -> Iterator[Diagnoser]:
    made = Diagnoser(None, metrics=NO_METER)
    yield made
    made.shutdown()


@pytest.fixture(scope="module")
def unrecognised(diagnoser: Diagnoser) -> Diagnosis:
    return diagnoser.explain(UNRECOGNISED, "cli")


def _report(id: str, causes: list[int], healthy: bool = False, score: float = 1.0) -> SimilarReport:
    return SimilarReport(
        id=id,
        causes=causes,
        resolution="r",
        address=f"https://example.test/{id}",
        score=score,
        healthy=healthy,
    )


# --- the index --------------------------------------------------------------------------------------


def test_the_shipped_index_is_current_with_the_corpus() -> None:
    fresh = build_similar_index.render(build_similar_index.build())
    assert INDEX_FILE.read_text(encoding="utf-8") == fresh, (
        "run: .venv/bin/python tools/build_similar_index.py"
    )


def test_the_check_fails_on_a_stale_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / "reports.json"
    stale.write_text(
        INDEX_FILE.read_text(encoding="utf-8").replace('"causes":[5]', '"causes":[6]', 1), encoding="utf-8"
    )
    monkeypatch.setattr(build_similar_index, "INDEX_FILE", stale)
    assert build_similar_index.main(["--check"]) == 1
    monkeypatch.setattr(build_similar_index, "INDEX_FILE", INDEX_FILE)
    assert build_similar_index.main(["--check"]) == 0


def test_the_index_holds_thread_and_quiet_cases_and_no_pasted_text() -> None:
    reports = load_index().reports
    corpus = build_similar_index.corpus_reports()
    assert [r.id for r in reports] == [c.entry["id"] for c in corpus]
    kinds = {
        f"{expected.parent.name}/{Path(entry['file']).stem}": entry.get("kind", "thread")
        for expected in (ROOT / "tests" / "corpus").glob("*/expected.json")
        for entry in json.loads(expected.read_text(encoding="utf-8"))
    }
    assert {r.id for r in reports} == {id for id, kind in kinds.items() if kind in ("thread", "quiet")}
    assert all(r.healthy == (kinds[r.id] == "quiet") for r in reports)
    assert {r.healthy for r in reports} == {True, False}
    assert all(not r.causes for r in reports if r.healthy)
    threads = [r for r in reports if not r.healthy]
    assert threads and all(r.address.startswith("https://") for r in threads)
    assert all(0 < len(r.resolution) <= build_similar_index.RESOLUTION_LIMIT for r in reports)
    # Words as counts, not the text: no paste's longest line is in the file.
    shipped = INDEX_FILE.read_text(encoding="utf-8")
    longest = {c.entry["id"]: max(c.text.splitlines(), key=len, default="").strip() for c in corpus}
    quoted = [id for id, line in longest.items() if len(line) >= 20 and line in shipped]
    assert quoted == []


def test_one_thread_has_one_spelling_and_the_first_sentence_survives_abbreviations() -> None:
    spellings = (
        "ray-project/ray#15594 (https://github.com/ray-project/ray/issues/15594)",
        "github.com/ray-project/ray/issues/15594",
    )
    assert {build_similar_index.thread_of(s) for s in spellings} == {"ray-project/ray#15594"}
    assert build_similar_index.address_of(spellings[1]) == "https://github.com/ray-project/ray/issues/15594"
    sentence = build_similar_index.first_sentence("A plugin, e.g. the NVIDIA one, failed. Then it was fixed.")
    assert sentence == "A plugin, e.g. the NVIDIA one, failed."
    long = build_similar_index.first_sentence("word " * 100)
    assert len(long) == build_similar_index.RESOLUTION_LIMIT and long.endswith("…")


# --- the closest three ------------------------------------------------------------------------------


def test_our_stop_words_are_bm25s_english_list() -> None:
    from bm25s.stopwords import STOPWORDS_EN

    assert frozenset(STOPWORDS_EN) == STOP_WORDS


def test_scoring_a_paste_loads_neither_numpy_nor_bm25s() -> None:
    code = (
        "import sys; from bot.diagnosis import Diagnosis; from bot.similar import seen_before; "
        "d = seen_before('ray status: pending placement group, 0/4 nodes are available', Diagnosis()); "
        "assert d.similar, d; print(sorted({'numpy', 'bm25s'} & set(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


def test_the_weights_score_as_bm25s_does() -> None:
    # The index is built as the generator builds the shipped one (whose equality with a fresh build
    # is the staleness test above), and scored without bm25s; bm25s scores the same reports itself.
    corpus = build_similar_index.corpus_reports()
    retriever = scorer([c.terms for c in corpus])
    index = Index.build([report_of(c.entry) for c in corpus], [c.terms for c in corpus])
    for case in corpus[::40]:
        words = query_words(case.text)
        ours, _ = index.scores(words)
        theirs = retriever.get_scores([w for w in words if w in retriever.vocab_dict])  # type: ignore[attr-defined]
        assert ours == pytest.approx([float(x) for x in theirs], abs=1e-3 * len(words))
        assert max(range(len(ours)), key=ours.__getitem__) == int(theirs.argmax())


def test_the_closest_three_are_ordered_and_a_known_pair_finds_itself() -> None:
    corpus = [c for c in build_similar_index.corpus_reports()]
    held, partner = PAIR
    kept = [c for c in corpus if c.entry["id"] != held]
    index = Index.build([report_of(c.entry) for c in kept], [c.terms for c in kept])
    text = (ROOT / "tests" / "corpus" / f"{held}.txt").read_text(encoding="utf-8")
    nearest = index.nearest(text, 3)
    assert len(nearest) == 3
    assert nearest[0].report.id == partner  # the other paste of the same thread comes first
    scores = [match.score for match in nearest]
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[1]
    assert len({match.report.thread for match in nearest}) == 3  # one per thread


def test_two_pastes_of_one_thread_count_once() -> None:
    text = (ROOT / "tests" / "corpus" / f"{PAIR[0]}.txt").read_text(encoding="utf-8")
    nearest = default_index().nearest(text, 3)
    ids = [match.report.id for match in nearest]
    assert ids[0] in PAIR and not set(PAIR) <= set(ids)


# --- the diagnosis and its renderers ----------------------------------------------------------------


def test_a_recognised_paste_gets_the_closest_reports_and_no_likeness_finding(diagnoser: Diagnoser) -> None:
    text = (
        ROOT / "tests" / "corpus" / "shared-examples" / "ray-50348-single-task-16gpu-on-two-8gpu-nodes.txt"
    ).read_text(encoding="utf-8")
    diagnosis = diagnoser.explain(text, "cli")
    assert diagnosis.verdict_layer != "unknown"
    assert len(diagnosis.similar) == 3
    assert diagnosis.similar[0].id == "shared-examples/ray-50348-single-task-16gpu-on-two-8gpu-nodes"
    assert all(f.rule != SIMILAR_RULE for f in diagnosis.findings)


def test_json_carries_similar_as_documented(unrecognised: Diagnosis) -> None:
    report = report_dict(unrecognised, default_catalogue(), "en")
    similar = report["similar"]
    assert len(similar) == 3
    keys = {"id", "causes", "resolution", "address", "score", "shared_words", "healthy"}
    assert all(set(r) == keys for r in similar)
    assert all(r["shared_words"] >= 3 for r in similar)
    assert [r["score"] for r in similar] == sorted((r["score"] for r in similar), reverse=True)
    assert similar[0]["address"].startswith("https://github.com/")
    json.dumps(report)  # plain JSON
    assert report["verdict"]["layer"] == "unknown"


@pytest.mark.parametrize(("lang", "heading"), [("en", "Seen before"), ("zh", "以往相似案例")])
def test_text_and_markdown_show_seen_before(unrecognised: Diagnosis, lang: str, heading: str) -> None:
    catalogue = default_catalogue()
    text = render_text(unrecognised, catalogue, lang)  # type: ignore[arg-type]
    markdown = render_markdown(unrecognised, catalogue, lang)  # type: ignore[arg-type]
    for out in (text, markdown):
        assert heading in out
        for report in unrecognised.similar:
            assert report.address in out and report.resolution in out
    assert f"## {heading}" in markdown


def test_slack_thread_shows_seen_before_in_valid_blocks(unrecognised: Diagnosis) -> None:
    from slack_sdk.models.blocks import Block

    for lang in ("en", "zh"):
        messages = render_thread(unrecognised, default_catalogue(), lang)  # type: ignore[arg-type]
        last = messages[-1]
        assert last["blocks"][0]["type"] == "header"
        assert last["blocks"][0]["text"]["text"] == ("Seen before" if lang == "en" else "以往相似案例")
        for message in messages:
            assert len(message["blocks"]) <= MAX_BLOCKS
            for raw in message["blocks"]:
                block = Block.parse(raw)
                assert block is not None
                block.validate_json()
        shown = json.dumps(last, ensure_ascii=False)
        assert all(r.address in shown for r in unrecognised.similar)


def test_slack_stays_quiet_when_healthy_and_caps_blocks_when_long(diagnoser: Diagnoser) -> None:
    healthy = (
        ROOT / "tests" / "corpus" / "found-quiet" / "ray-35411-ray-status-v-is-idle-no-demands.txt"
    ).read_text(encoding="utf-8")
    diagnosis = diagnoser.explain(healthy, "cli")
    assert diagnosis.verdict_layer == "healthy" and diagnosis.similar
    assert len(render_thread(diagnosis, default_catalogue(), "en")) == 1
    many = replace(diagnosis, similar=[_report(f"r{n}", [5], score=60 - n) for n in range(60)])
    from bot.deliver.blocks.thread import seen_before_message

    assert len(seen_before_message(many, "en")["blocks"]) == MAX_BLOCKS


# --- the fallback finding ---------------------------------------------------------------------------


def test_nothing_recognised_gets_an_info_finding_that_says_where_it_comes_from(
    unrecognised: Diagnosis,
) -> None:
    assert unrecognised.verdict_layer == "unknown"
    # The sentence's own words only give the open "Ray work is said to wait" note (no cause, no
    # tool output read), which leaves the verdict unknown and the likeness finding its place.
    [finding] = [f for f in unrecognised.findings if f.rule == SIMILAR_RULE]
    assert all(only_stated(f) and f.cause is None for f in unrecognised.findings if f is not finding)
    assert finding.severity == "info"
    assert finding.cause == 5 and finding.code == "RD0500"
    assert finding.evidence and all(e.source.startswith("resolved report ") for e in finding.evidence)
    catalogue = default_catalogue()
    english = render_text(unrecognised, catalogue, "en")
    chinese = render_text(unrecognised, catalogue, "zh")
    assert "not from anything read in this text" in english and "[INFO]" in english
    assert "来自与那些报告的相似性" in chinese and "[提示]" in chinese
    report = report_dict(unrecognised, catalogue, "en")
    assert {f["severity"] for f in report["findings"]} == {"info"}
    assert [f["cause"] for f in report["findings"] if f["cause"] is not None] == [5]


@pytest.mark.parametrize(
    ("causes", "agreed"),
    [
        ([[5], [5], [4]], 5),
        ([[4], [5], [5]], 5),
        ([[5], [4], [3]], None),
        ([[], [], [5]], None),  # healthy reports vote for nothing
        ([[3, 1], [1], [3]], 3),  # a tie goes to the nearer report's cause
        ([[5, 5], [4], [3]], None),  # one report is one vote
        ([], None),
    ],
)
def test_the_agreed_cause_needs_two_of_the_three(causes: list[list[int]], agreed: int | None) -> None:
    reports = [_report(f"r{n}", c, healthy=not c) for n, c in enumerate(causes)]
    assert agreed_cause(reports) == agreed


def test_the_likeness_finding_never_warns_and_never_makes_a_verdict() -> None:
    similar = [_report("a", [2]), _report("b", [2]), _report("c", [1])]
    finding = similar_fallback.likeness_finding(2, similar)
    assert finding.severity == "info" and finding.cause == 2 and finding.layer == "kubernetes"
    diagnosis = Diagnosis(findings=[finding], similar=similar)
    assert diagnosis.verdict_layer == "unknown"
    # Where a rule spoke, the fallback stays out.
    recognised = Diagnosis(figures={"ray_nodes": "2"})
    assert seen_before(UNRECOGNISED, recognised).findings == []


# --- bad input --------------------------------------------------------------------------------------


# The last: one common word ("cluster") shared with a report is chance, not likeness (MIN_SHARED).
@pytest.mark.parametrize(
    "text", ["", "   \n\t", "!!! 123 456 ---", "\x00\ufffd" * 100, "hello, this is not a cluster"]
)
def test_empty_or_wordless_input_has_no_similar_and_no_finding(diagnoser: Diagnoser, text: str) -> None:
    diagnosis = diagnoser.explain(text, "cli")
    assert diagnosis.similar == [] and diagnosis.findings == []
    assert json.loads(json.dumps(report_dict(diagnosis, default_catalogue(), "en")))["similar"] == []


def test_a_huge_paste_is_bounded() -> None:
    line = "Warning FailedScheduling pod/ray-worker 0/8 nodes are available: 8 Insufficient nvidia.com/gpu\n"
    huge = line * 60_000 + "".join(f"token{n} " for n in range(200_000))  # ~7 MB
    started = time.perf_counter()
    diagnosis = seen_before(huge, Diagnosis())
    assert time.perf_counter() - started < 5
    assert 0 < len(diagnosis.similar) <= 3


def test_a_broken_index_costs_seen_before_not_the_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(text: str, k: int = 3) -> list[SimilarReport]:
        raise ValueError("damaged index")

    monkeypatch.setattr(similar_fallback, "similar_reports", broken)
    diagnosis = Diagnosis(notes=["kept"])
    assert seen_before(UNRECOGNISED, diagnosis) == diagnosis
