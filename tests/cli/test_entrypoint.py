"""The ``raydiag`` entry point: the collector held off while a command runs, a quick exit after it.

A quick exit must not lose anything a normal one would do: the answer is flushed, the exit code
is the command's, and exit handlers still run (the Kubernetes client removes its temporary
certificate files in one).
"""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

from bot.cli import long_running

REPO = Path(__file__).resolve().parents[2]


def _run(argv: list[str] | str, *, shell: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, shell=shell, cwd=REPO, capture_output=True, text=True, timeout=120, check=False
    )


def _raydiag(*args: str) -> subprocess.CompletedProcess[str]:
    return _run([sys.executable, "-m", "bot", *args])


def test_the_answer_and_the_exit_code_survive_the_quick_exit() -> None:
    rules = _raydiag("rules")
    assert rules.returncode == 0
    lines = rules.stdout.splitlines()
    assert len(lines) > 100 and lines[0].startswith("RD0001") and rules.stdout.endswith("\n")

    bad = _raydiag("explain", "/no/such/file")
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert bad.stderr.startswith("raydiag: error:") and "/no/such/file" in bad.stderr


def test_exit_handlers_still_run_and_the_collector_is_off_during_the_command() -> None:
    code = """
import atexit, gc, sys
atexit.register(lambda: print("exit handler ran", flush=True))
import bot.cli
real = bot.cli.run
def run(*args, **kwargs):
    print("collector on while the command ran:", gc.isenabled(), flush=True)
    return real(*args, **kwargs)
bot.cli.run = run
sys.argv = ["raydiag", "rules"]
bot.cli.entrypoint()
print("never reached")
"""
    done = _run([sys.executable, "-c", code])
    assert done.returncode == 0, done.stderr
    assert "collector on while the command ran: False" in done.stdout
    assert done.stdout.rstrip().endswith("exit handler ran")
    assert "never reached" not in done.stdout


def test_a_reader_that_goes_away_ends_the_command_quietly() -> None:
    # `raydiag rules | head -1`: the pipe closes after the first line.
    done = _run(f"{sys.executable} -m bot rules | head -1", shell=True)
    assert done.stdout.startswith("RD0001") and len(done.stdout.splitlines()) == 1
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr


def test_a_long_running_process_collects_its_garbage_again() -> None:
    was = gc.isenabled()
    gc.disable()
    try:
        long_running()
        assert gc.isenabled()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        if not was:
            gc.disable()
