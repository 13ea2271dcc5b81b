"""Write (or rewrite) the expected summary of format cases: ``tests/read/<reader>/<case>.expected.json``.

    .venv/bin/python tools/read_cases.py tests/read/ray-status/new-case.txt   # one case
    .venv/bin/python tools/read_cases.py --all                                # every case

Review the diff before committing it: the file is what the test holds the reader to.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: the repo root holds the packages
    sys.path.insert(0, str(ROOT))

from tests.support.read_cases import case_files, write_expected  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cases", nargs="*", type=Path, help="case .txt files")
    parser.add_argument("--all", action="store_true", help="every case under tests/read/")
    args = parser.parse_args()
    paths = [path for _, path in case_files()] if args.all else args.cases
    if not paths:
        parser.error("name case files, or --all")
    for path in paths:
        summary = write_expected(path)
        print(f"{path}: {json.dumps(summary['readers'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
