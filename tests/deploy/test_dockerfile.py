"""The Dockerfile, linted for the rules the image depends on (no Docker engine runs here).

hadolint runs too, in `make scan`; these checks are the ones that tie the image to the rest of the
project: the lock installed with hashes, the user id the Deployment asserts, the port the probes
ask, the writable directories the Deployment mounts, and a build context that carries no secret.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from bot.cli import build_parser
from tests.deploy.dockerfile import DockerIgnore, Stage, stages
from tests.deploy.manifests import REPO, bot_container, render

DOCKERFILE = REPO / "Dockerfile"
PINNED_IMAGE = re.compile(r"^[\w./-]+:(?P<tag>[\w.-]+)@sha256:[0-9a-f]{64}$")


@pytest.fixture(scope="module")
def image() -> list[Stage]:
    return stages(DOCKERFILE)


def runtime(image: list[Stage]) -> Stage:
    return image[-1]


def build(image: list[Stage]) -> Stage:
    return next(s for s in image if s.name == "build")


def test_one_base_image_pinned_by_tag_and_digest(image: list[Stage]) -> None:
    names = {s.name for s in image if s.name}
    external = [s.base for s in image if s.base not in names]
    assert len(external) == 1, f"both stages should share one pinned base, found {external}"
    pinned = PINNED_IMAGE.match(external[0])
    assert pinned, f"{external[0]} is not pinned as name:tag@sha256:<digest>"
    assert pinned["tag"] != "latest" and "slim" in pinned["tag"] and pinned["tag"].startswith("3.11")


def test_build_and_runtime_are_separate_stages(image: list[Stage]) -> None:
    assert len(image) >= 3 and image[-1].name == "runtime"
    final = runtime(image)
    copies = final.all("COPY")
    assert copies, "the runtime stage gets the application from the build stage"
    for copy in copies:
        assert copy.flags().get("from") == "build", f"line {copy.line}: runtime copies only from build"
    assert [c.arguments.split()[-1] for c in copies] == ["/opt/raydiag"]
    assert not any("pip" in r.arguments for r in final.all("RUN")), "no package installs at run time"


def test_the_lock_is_installed_with_hashes_before_the_source_is_copied(image: list[Stage]) -> None:
    stage = build(image)
    steps = [(i.keyword, i.arguments) for i in stage.instructions]
    lock_copy = next(n for n, (k, a) in enumerate(steps) if k == "COPY" and "requirements.lock" in a)
    lock_install = next(n for n, (k, a) in enumerate(steps) if k == "RUN" and "-r requirements.lock" in a)
    source_copy = next(n for n, (k, a) in enumerate(steps) if k == "COPY" and a.split()[0] == "bot")
    assert lock_copy < lock_install < source_copy, "the dependency layer must not depend on the source"
    install = steps[lock_install][1]
    assert "--require-hashes" in install and "--only-binary=:all:" in install
    for keyword, arguments in steps:
        if keyword == "RUN" and re.search(r"\bpip install\b", arguments):
            assert "--no-cache-dir" in arguments, arguments
            assert "--index-url" not in arguments and "--trusted-host" not in arguments
        if keyword == "RUN" and "pip install" in arguments and "requirements.lock" not in arguments:
            assert "--no-deps" in arguments, "raydiag itself adds nothing beyond the lock"


def test_runs_as_the_numeric_non_root_user_the_deployment_asserts(image: list[Stage]) -> None:
    users = runtime(image).all("USER")
    assert len(users) == 1
    uid, _, gid = users[0].arguments.partition(":")
    assert uid.isdigit() and gid.isdigit() and int(uid) >= 10000
    last_run = max(i.line for i in runtime(image).all("RUN"))
    assert users[0].line > last_run, "every RUN after USER would run as that user"
    pod = render("base").one("Deployment", "raydiag")["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsUser"] == int(uid)
    assert pod["securityContext"]["runAsGroup"] == int(gid)


def test_entrypoint_and_command_are_a_valid_serve(image: list[Stage]) -> None:
    final = runtime(image)
    [entrypoint] = final.all("ENTRYPOINT")
    [command] = final.all("CMD")
    assert entrypoint.exec_form() == ["raydiag"]
    args = build_parser().parse_args(command.exec_form())
    assert (args.command, args.http, args.host) == ("serve", True, "0.0.0.0")
    exposed = [int(e.arguments.split("/")[0]) for e in final.all("EXPOSE")]
    assert exposed == [args.port]
    # The base Deployment runs the image's default command.
    assert bot_container(render("base"))["args"] == command.exec_form()


def test_health_check_asks_healthz_with_the_standard_library(image: list[Stage]) -> None:
    final = runtime(image)
    [check] = final.all("HEALTHCHECK")
    probe = check.exec_form()
    port = build_parser().parse_args(final.all("CMD")[0].exec_form()).port
    assert probe[:2] == ["python", "-c"]
    assert f"http://127.0.0.1:{port}/healthz" in probe[2] and "urllib.request" in probe[2]
    # The probe itself runs, and fails cleanly when nothing answers (here: nothing listens).
    with_closed_port = probe[2].replace(f":{port}/", ":9/")
    result = subprocess.run(
        [sys.executable, "-c", with_closed_port], capture_output=True, timeout=30, check=False
    )
    assert result.returncode != 0


def test_writes_go_only_where_the_deployment_mounts_volumes(image: list[Stage]) -> None:
    env = runtime(image).env()
    container = bot_container(render("base"))
    mounts = {m["mountPath"] for m in container["volumeMounts"] if not m.get("readOnly")}
    for name in ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "MPLCONFIGDIR"):
        assert env[name] == "/tmp" or env[name].startswith("/tmp/"), name
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert env["RAYDIAG_DATA_DIR"] in mounts
    assert "/tmp" in mounts
    workdir = runtime(image).all("WORKDIR")[-1].arguments
    assert workdir in mounts, "a relative path written by any library lands on a volume"


def test_rules_are_copied_where_the_image_says_they_are(image: list[Stage]) -> None:
    rules_dir = runtime(image).env()["RAYDIAG_RULES_DIR"]
    copies = [c.arguments.split() for c in build(image).all("COPY")]
    assert ["rules", rules_dir] in copies
    assert rules_dir.startswith("/opt/raydiag/"), "inside what the runtime stage copies"


def test_no_secret_is_baked_into_the_image(image: list[Stage]) -> None:
    secretish = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|PRIVATE", re.IGNORECASE)
    for stage in image:
        for instruction in stage.all("ENV") + stage.all("ARG"):
            names = re.findall(r"(\w+)=", instruction.arguments) or instruction.arguments.split()[:1]
            assert not any(secretish.search(n) for n in names), (
                f"line {instruction.line}: {instruction.arguments}"
            )
    assert not re.search(r"xox[abpors]-\d|xapp-\d", DOCKERFILE.read_text(encoding="utf-8"))


def test_apt_installs_are_pinned_and_leave_no_lists(image: list[Stage]) -> None:
    for stage in image:
        for run in stage.all("RUN"):
            if "apt-get install" not in run.arguments:
                continue
            assert "--no-install-recommends" in run.arguments
            assert "rm -rf /var/lib/apt/lists/*" in run.arguments
            packages = [
                w
                for w in run.arguments.split("apt-get install", 1)[1].split("&&")[0].split()
                if not w.startswith("-")
            ]
            assert packages and all("=" in p for p in packages), f"unpinned: {packages}"


def test_stopping_the_container_reaches_python(image: list[Stage]) -> None:
    # PID 1 drops SIGTERM when the process installs no handler; Python handles SIGINT.
    assert [s.arguments for s in runtime(image).all("STOPSIGNAL")] == ["SIGINT"]


def test_the_build_context_carries_what_the_build_copies_and_nothing_secret(image: list[Stage]) -> None:
    ignore = DockerIgnore.read(REPO / ".dockerignore")
    for stage in image:
        for copy in stage.all("COPY"):
            if "from" in copy.flags():
                continue
            for source in [a for a in copy.arguments.split()[:-1] if not a.startswith("--")]:
                assert ignore.sends(source), f"COPY {source} (line {copy.line}) is excluded by .dockerignore"
    for private in (
        ".env",
        ".venv/bin/python",
        ".git/config",
        "kubeconfig",
        "raydiag-state.db",
        "deploy/base/config.yaml",
        "tests/support/k8s.py",
        "bot/__pycache__/cli.cpython-311.pyc",
    ):
        assert not ignore.sends(private), f"{private} would be sent to the builder"
    assert ignore.sends("bot/quiz/questions/triage-order.yaml")
