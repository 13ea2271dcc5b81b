"""Ray Tune's and Ray Train's status output: how many trials wait, how many run, what each asks.

Tune has printed its progress in three layouts (read off ``ray/tune/progress_reporter.py``,
``ray/tune/experimental/output.py`` and the older ``trial_runner.py``):

* before 0.7: ``== Status ==``, then one section per state, ``PENDING trials:`` followed by
  `` - <name>:\\tPENDING`` lines (``RUNNING`` ones add ``[pid=...]``), each section printed only
  when it has a trial;
* 0.7 to 2.4: ``Number of trials: 18/100 (17 PENDING, 1 RUNNING)`` (the ``/100`` only when the
  number of samples is known) and a ``psql`` table, ``| Trial name | status | loc |``;
* 2.5 on (the AIR output engine): ``Trial status: 1 RUNNING | 7 PENDING`` and a box-drawn table.

The summary line counts every trial; tables and lists are often cut, so rows only count what they
show. The cluster's totals (``Resources requested: 10/10 CPUs, 2/2 GPUs``, later ``Logical resource
usage: ...``) are read with the other Tune messages in ``ray_messages``.

What one trial asks for is rarely printed; users paste their code instead, and the code reader
(:mod:`bot.read.python_code`, which reads ``ScalingConfig``, ``resources_per_trial`` and
``tune.with_resources``) hands the request here with :func:`set_request`. The request becomes a
demand only once the paste shows trials waiting, so a healthy run with its code pasted asks nothing.
"""

from __future__ import annotations

import re

from bot.read.formats import Format, Tag
from bot.read.found import Found, TuneProgress
from bot.snapshot.ray import Demand

FORMAT = Format("ray tune status table", Tag.RAY_TUNE_STATUS)

_STATES = ("PENDING", "RUNNING", "TERMINATED", "ERROR", "PAUSED")
_STATE = "|".join(_STATES)
_SUMMARY = re.compile(r"Number of trials: \d+(?:/(?:\d+|infinite))? \((?P<body>[^)\n]{0,400})\)")
_SUMMARY_ITEM = re.compile(rf"(?P<count>\d+) (?P<state>{_STATE})\b|'(?P<state2>{_STATE})': (?P<count2>\d+)")
_NEW_SUMMARY = re.compile(rf"Trial status: (?P<body>(?:\d+ (?:{_STATE})(?: \| )?)+)")
_SECTION = re.compile(rf"^(?P<state>{_STATE}) trials:\s*$")
# ``| TorchTrainer_c40be_00000 | PENDING  |`` (psql), ``│ train_fn_8a3f2_00000   RUNNING  ...``
# (2.5+): Tune names trials ``<trainable>_<trial id>``, the id being ``<5 hex>_<5 digits>``
# (``BasicVariantGenerator``: a uuid1 prefix and a counter). Scripts that print ``trial.trial_id``
# and ``trial.status`` themselves (a scheduler's callbacks) show the bare id: ``082e0_00004 PAUSED``.
_TABLE_ROW = re.compile(
    rf"^[|│]?\s*(?P<name>(?:[\w.-]+_)?[0-9a-f]{{5}}_\d{{5}}(?:_\S*)?)\s*[|│]?\s+(?P<state>{_STATE})\b"
)
# `` - train_model_3_lr=0.01,...:\tPENDING`` (before 0.7; the markdown dash may be stripped).
_LIST_ROW = re.compile(rf"^(?:-\s+)?(?P<name>[\w.-]+_\d+(?:_[^\s:]*)?):\s+(?P<state>{_STATE})\b")
# Read for its figures in ``ray_messages``; quoted here as the trials' evidence.
_USAGE = re.compile(r"(?:Resources requested|Logical resource usage): [^\n]{1,300}")
_MAX_ROWS = 5000
_MAX_QUOTES = 6


def _progress(found: Found) -> TuneProgress:
    if found.tune is None:
        found.tune = TuneProgress()
    return found.tune


def _quote(progress: TuneProgress, text: str) -> None:
    if len(progress.quotes) < _MAX_QUOTES and text not in progress.quotes:
        progress.quotes.append(text[:300])


def _read_counts(text: str, found: Found) -> bool:
    if match := _SUMMARY.search(text) or _NEW_SUMMARY.search(text):
        counts: dict[str, int] = {}
        for item in _SUMMARY_ITEM.finditer(match.group("body")):
            state = item.group("state") or item.group("state2")
            counts[state] = counts.get(state, 0) + int(item.group("count") or item.group("count2"))
        if counts:
            progress = _progress(found)
            progress.summary = counts  # a later summary is a later moment of the same run
            progress.quotes = [q for q in progress.quotes if "trials" not in q.lower()]
            _quote(progress, match.group(0))
            return True
    stripped = text.strip()
    if section := _SECTION.match(stripped):
        progress = _progress(found)
        progress.sections.add(section.group("state"))
        _quote(progress, stripped)
        return True
    row = _TABLE_ROW.match(stripped) or _LIST_ROW.match(stripped)
    if row:
        progress = _progress(found)
        if len(progress.rows) < _MAX_ROWS:
            progress.rows[row.group("name")] = row.group("state")
        if row.group("state") in ("PENDING", "RUNNING", "PAUSED") and not progress.summary:
            states = {_quote_state(q) for q in progress.quotes}
            if row.group("state") not in states:
                _quote(progress, stripped)
        return True
    return False


def _quote_state(line: str) -> str | None:
    for state in _STATES:
        if state in line:
            return state
    return None


def set_request(found: Found, request: Demand) -> None:
    """What one trial asks for, read from the pasted code; a demand once trials are seen waiting."""
    progress = _progress(found)
    progress.request = request
    progress.request_added = False
    _settle(found)


def _settle(found: Found) -> None:
    """Trials wait and the request is known: that request is a demand."""
    progress = found.tune
    if progress is None or progress.request is None or progress.request_added:
        return
    if progress.counts().get("PENDING", 0) > 0:
        found.add_demand(progress.request)
        progress.request_added = True


def read_line(text: str, found: Found) -> bool:
    """Read one logical line; True when it was Tune status output."""
    if usage := _USAGE.search(text):
        _quote(_progress(found), usage.group(0).strip())
    recognised = _read_counts(text, found)
    if recognised:
        found.recognise(FORMAT)
    _settle(found)
    return recognised
