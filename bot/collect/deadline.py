"""One time budget for a whole diagnosis, shared by every call that collects for it.

A broken cluster is exactly when raydiag is run; a slow API server must cost the user a bounded
wait and a clear "not read: deadline reached", never a hung command or a Slack timeout.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class Deadline:
    total: float
    started: float = field(default_factory=time.monotonic)

    def remaining(self) -> float:
        return self.total - (time.monotonic() - self.started)

    def expired(self) -> bool:
        return self.remaining() <= 0

    def elapsed(self) -> float:
        return time.monotonic() - self.started
