"""A throwaway PostgreSQL server for the tests: ``initdb`` into a temporary folder, started on a free
loopback port with its unix socket in that folder, stopped (and its files removed) at the end.

Debian's ``postgresql`` package provides the binaries (``/usr/lib/postgresql/<version>/bin``; run
``make postgres`` to install it). PostgreSQL refuses to run as root, so under root the server runs
as the ``postgres`` user (or ``nobody``) through ``runuser``, in a folder that user owns::

    with throwaway_postgres() as server:
        url = server.url("raydiag_test")       # postgresql+psycopg://raydiag@127.0.0.1:<port>/raydiag_test
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SUPERUSER = "raydiag"
INSTALL_HINT = "run `make postgres` (or install Debian's `postgresql` package) so the tests can start one"


class PostgresUnavailable(RuntimeError):
    """PostgreSQL cannot be started here; the message says how to fix that."""


def binaries() -> Path:
    """The folder holding initdb and pg_ctl, newest version first; PostgresUnavailable when absent."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=_version, reverse=True)
    if found:
        return found[0].parent
    on_path = shutil.which("initdb")
    if on_path and shutil.which("pg_ctl"):
        return Path(on_path).resolve().parent
    raise PostgresUnavailable(
        f"PostgreSQL's initdb was not found under /usr/lib/postgresql/*/bin: {INSTALL_HINT}"
    )


def _version(initdb: Path) -> int:
    try:
        return int(initdb.parent.parent.name)
    except ValueError:
        return 0


def _run_as() -> str | None:
    """The unprivileged user to run PostgreSQL as when we are root (it refuses root), else None."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    raise PostgresUnavailable("running as root and neither a `postgres` nor a `nobody` user exists")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class PostgresServer:
    bin_dir: Path
    root: Path
    port: int
    user: str | None

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def socket_dir(self) -> Path:
        return self.root / "socket"

    def url(self, database: str) -> str:
        return f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def _command(self, tool: str, *args: str) -> list[str]:
        command = [str(self.bin_dir / tool), *args]
        return ["runuser", "-u", self.user, "--", *command] if self.user else command

    def _run(self, tool: str, *args: str, timeout: float = 60) -> None:
        done = subprocess.run(
            self._command(tool, *args),
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=self.root,
            check=False,
        )
        if done.returncode != 0:
            detail = (done.stderr or done.stdout).strip().splitlines()
            raise PostgresUnavailable(f"{tool} failed: {detail[-1] if detail else done.returncode}")

    def start(self) -> None:
        self.socket_dir.mkdir()
        if self.user:
            record = pwd.getpwnam(self.user)
            for path in (self.root, self.socket_dir):
                os.chown(path, record.pw_uid, record.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", SUPERUSER, "-A", "trust", "-E", "UTF8", "--no-sync")
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.socket_dir} -c fsync=off"
        self._run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"), "-o", options, "-w", "start"
        )

    def create_database(self, name: str) -> None:
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", SUPERUSER, name)

    def drop_database(self, name: str) -> None:
        self._run("dropdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", SUPERUSER, "--force", name)

    def stop(self) -> None:
        if not (self.data / "postmaster.pid").exists():
            return
        with contextlib.suppress(PostgresUnavailable, subprocess.TimeoutExpired):
            self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop", timeout=30)
            return
        self._kill()

    def _kill(self) -> None:
        """pg_ctl could not stop it: end the postmaster by the PID it wrote, and wait for it to go."""
        with contextlib.suppress(OSError, ValueError, IndexError):
            pid = int((self.data / "postmaster.pid").read_text().splitlines()[0])
            os.kill(pid, signal.SIGKILL)
            for _ in range(50):
                os.kill(pid, 0)
                time.sleep(0.1)


@contextlib.contextmanager
def throwaway_postgres() -> Iterator[PostgresServer]:
    """A running PostgreSQL for the duration of the block; PostgresUnavailable with a fix otherwise."""
    bin_dir = binaries()
    user = _run_as()
    # Not pytest's tmp_path: its parents are private to root, and the server may run as another user.
    root = Path(tempfile.mkdtemp(prefix="raydiag-postgres-"))
    server = PostgresServer(bin_dir, root, _free_port(), user)
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


class _Shared:
    """One server for the whole test session, however many test folders ask for it."""

    def __init__(self) -> None:
        self._stack: contextlib.ExitStack | None = None
        self._server: PostgresServer | None = None
        self._users = 0
        self._databases = 0

    def acquire(self) -> PostgresServer:
        if self._server is None:
            stack = contextlib.ExitStack()
            self._server = stack.enter_context(throwaway_postgres())
            self._stack = stack
        self._users += 1
        return self._server

    def release(self) -> None:
        self._users -= 1
        if self._users == 0 and self._stack is not None:
            self._stack.close()
            self._stack, self._server = None, None

    def fresh_database(self, server: PostgresServer) -> str:
        """A new, empty database's URL: each test starts from nothing."""
        self._databases += 1
        name = f"raydiag_test_{os.getpid()}_{self._databases}"
        server.create_database(name)
        return server.url(name)


shared = _Shared()
