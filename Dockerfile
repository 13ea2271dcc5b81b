# syntax=docker/dockerfile:1
#
# raydiag's image: the Slack bot (`raydiag serve`) and the CLI, built from this repository alone.
#
#   docker build -t raydiag:0.1.0 .
#   docker run --read-only --tmpfs /tmp --tmpfs /var/lib/raydiag -p 3000:3000 \
#     -e SLACK_BOT_TOKEN -e SLACK_SIGNING_SECRET raydiag:0.1.0
#
# Two stages on one pinned base. `build` installs the hashed lock into a virtual environment,
# installs raydiag into it, then removes what only tests, linting or building need. `runtime`
# receives that environment and the rule catalogue, nothing else: no pip, no source tree, no tests.
#
# The container runs as an unprivileged numeric user with a read-only root filesystem. It writes
# only to /tmp (Python, matplotlib's font cache, Ray's client) and /var/lib/raydiag (the SQLite
# state file, when PostgreSQL is not configured); mount both as volumes.

# One pinned base for both stages: the tag says what it is, the digest makes it immutable.
# Refresh both together (e.g. `docker buildx imagetools inspect python:3.11.14-slim-bookworm`).
FROM python:3.11.14-slim-bookworm@sha256:65a93d69fa75478d554f4ad27c85c1e69fa184956261b4301ebaf6dbb0a3543d AS python


FROM python AS build

# A failing step anywhere in a pipe fails the build.
SHELL ["/bin/bash", "-o", "pipefail", "-c"]

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_INPUT=1 \
    PATH=/opt/raydiag/venv/bin:$PATH

RUN python -m venv /opt/raydiag/venv

WORKDIR /src

# The lock first, alone: this layer (most of the build time) is reused until the lock changes.
# Every file is checked against its hash; nothing outside the lock can come in.
COPY requirements.lock ./
RUN pip install --no-cache-dir --require-hashes --only-binary=:all: -r requirements.lock

# Then raydiag itself, without dependencies (they are all above) and with the lock's setuptools.
COPY pyproject.toml README.md ./
COPY bot ./bot
RUN pip install --no-cache-dir --no-deps --no-build-isolation .

# Keep only what `raydiag` needs at run time: pytest, mypy, ruff, kubernetes-validate, setuptools
# and wheel go, and pip itself last. The list comes from the installed metadata, so it cannot drift
# from pyproject.toml.
COPY tools/image/prune_to_runtime.py ./
RUN python prune_to_runtime.py raydiag | grep -vx pip > unneeded.txt \
    && pip uninstall --yes --requirement unneeded.txt \
    && python -m pip uninstall --yes pip

COPY rules /opt/raydiag/rules


FROM python AS runtime

LABEL org.opencontainers.image.title="raydiag" \
      org.opencontainers.image.description="Tells ML platform teams why their Ray work on Kubernetes is stuck, layer by layer." \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="0.1.0"

# A CJK font, so capacity charts can be drawn with Chinese labels (without one they fall back to
# English). Pinned to the Debian bookworm release of the package.
RUN apt-get update \
    && apt-get install -y --no-install-recommends fonts-wqy-microhei=0.2.0-beta-3.1 \
    && rm -rf /var/lib/apt/lists/*

# A named user for tools that look the uid up (getpass), but the image refers to it by number so
# Kubernetes can verify runAsNonRoot without reading /etc/passwd.
RUN groupadd --system --gid 10001 raydiag \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /tmp \
       --shell /usr/sbin/nologin raydiag \
    && mkdir -p /var/lib/raydiag \
    && chown 10001:10001 /var/lib/raydiag

COPY --from=build /opt/raydiag /opt/raydiag

# HOME and the XDG and matplotlib directories point into /tmp: the root filesystem is read-only.
# RAYDIAG_DATA_DIR is where the default SQLite state file (raydiag-state.db) goes.
ENV PATH=/opt/raydiag/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/tmp \
    XDG_CACHE_HOME=/tmp/.cache \
    XDG_CONFIG_HOME=/tmp/.config \
    MPLCONFIGDIR=/tmp/matplotlib \
    RAYDIAG_RULES_DIR=/opt/raydiag/rules \
    RAYDIAG_DATA_DIR=/var/lib/raydiag

WORKDIR /var/lib/raydiag

# Fail the build, not the first Slack command, when the rule catalogue or the time zone database
# (schedules name IANA zones) is missing from the image.
RUN raydiag rules --lang zh > /dev/null \
    && python -c "import zoneinfo; zoneinfo.ZoneInfo('Asia/Shanghai')"

USER 10001:10001

EXPOSE 3000

# Python as PID 1 ignores SIGTERM (it installs no handler for it, and the kernel drops unhandled
# signals to PID 1), so `docker stop` or a Pod deletion would wait out the grace period and kill
# it. Python does handle SIGINT: with it `raydiag serve` stops within a couple of seconds.
STOPSIGNAL SIGINT

# Liveness with the standard library (there is no curl in a slim image). `raydiag serve` answers
# /healthz on its port in both modes, Socket Mode included; change the port here if you change it
# in the command.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:3000/healthz', timeout=4).status != 200)"]

ENTRYPOINT ["raydiag"]
CMD ["serve", "--http", "--host", "0.0.0.0", "--port", "3000"]
