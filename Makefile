# Two commands do everything on a fresh machine: `make demo` and `make test`.
# Both create .venv from the hashed lock file first, so installs are reproducible.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The older Ray of the live compatibility test: its own venv, outside the checkout.
RAY_COMPAT_VERSION := 2.9.3
RAY_COMPAT_LOCK := tools/ray-versions/ray-$(RAY_COMPAT_VERSION).lock
RAY_COMPAT_VENV ?= $(HOME)/.cache/raydiag/venv-ray-$(RAY_COMPAT_VERSION)
RAY_COMPAT_STAMP := $(RAY_COMPAT_VENV)/.installed-$(shell sha256sum $(RAY_COMPAT_LOCK) | cut -c1-16)


.PHONY: demo test quick lint typecheck unit bench bench-startup bench-cluster-cli eval similar-eval similar-index rules-doc coverage lock clean postgres alertmanager prometheus scan scan-lock ray-compat-venv controlplane

$(STAMP): requirements.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=24"
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m bot.demo

lint: $(STAMP)
	$(BIN)/ruff check bot tests benchmarks
	$(BIN)/ruff format --check bot tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

# The state-store tests start their own PostgreSQL server from Debian's binaries (`postgres`).
# The live compatibility test runs an older Ray from its own venv, built once from a hashed lock and
# kept outside the checkout (a clean clone reuses it; a changed lock gets a fresh install).
# The control-plane tests (tests/integration/test_controlplane_smoke.py) start the real etcd,
# kube-apiserver, kube-scheduler and KubeRay operator that `make controlplane` builds into ~/.cache.
unit: $(STAMP) postgres alertmanager prometheus $(RAY_COMPAT_STAMP) controlplane
	RAYDIAG_RAY_COMPAT_VENV=$(RAY_COMPAT_VENV) $(BIN)/python -m pytest -q -n 2 --dist loadgroup

$(RAY_COMPAT_STAMP):
	test -x $(RAY_COMPAT_VENV)/bin/python || $(PYTHON) -m venv $(RAY_COMPAT_VENV)
	$(RAY_COMPAT_VENV)/bin/python -m pip install --quiet --require-hashes -r $(RAY_COMPAT_LOCK)
	touch $@

ray-compat-venv: $(RAY_COMPAT_STAMP)

# The real Kubernetes control plane of the integration tests (tests/support/controlplane.py): etcd,
# kube-apiserver, kube-scheduler and the KubeRay operator, built from their Go modules pinned by the
# go.sum files in tools/controlplane into ~/.cache/raydiag/controlplane/<release>/ (outside the
# checkout), reused while current. Needs Go >= 1.24 (`go`, or GO=/path/to/go). A cold build took
# 10-15 minutes on two shared cores; see README "Development".
controlplane:
	tools/controlplane/build.sh

test: lint typecheck unit

# The fast suite, for the edit-test loop: the pipeline's own tests, in process (readers, rules and
# their cases, classify, render, snapshot models, catalogue, import contracts and cycles, corpus
# accuracy, lint). Nothing here starts a real Ray, the control plane, PostgreSQL, Prometheus,
# Alertmanager or the bot's process; the fuzzing of mixed pastes is left to `make test` too.
QUICK := tests/read tests/rules tests/classify tests/render tests/snapshot tests/catalogue \
	tests/architecture tests/corpus tests/lint tests/verdicts tests/paste
quick: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 $(QUICK) --ignore=tests/paste/test_paste_robustness.py

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_classify.py

# How long `raydiag --help`, `raydiag rules` and `raydiag explain` take, each as its own process.
bench-startup: $(STAMP)
	$(BIN)/python benchmarks/bench_startup.py

# `raydiag diagnose --cluster` against the guide's manual quick checks (kubectl and `ray status`) on
# the compound scenario: a real Ray cluster with the demo's workload and the loopback API server.
bench-cluster-cli: $(STAMP)
	$(BIN)/python benchmarks/bench_cluster_cli.py

# Accuracy on the corpus of real pasted outputs (tests/corpus): hit@1, recall, nothing recognised,
# false alarms, per cause and per format, and the misses by id.
eval: $(STAMP)
	$(BIN)/python benchmarks/corpus_eval.py

# "Seen before": hit@1 of the cause the closest resolved reports agree on, leave-one-thread-out over
# the corpus (benchmarks/similar_eval.py). `similar-index` rewrites the shipped index
# (bot/similar/reports.json) after a corpus change; tests/similar fails while it is stale.
similar-eval: $(STAMP)
	$(BIN)/python benchmarks/similar_eval.py

similar-index: $(STAMP)
	$(BIN)/python tools/build_similar_index.py

# The rule catalogue page (docs/rules.md): every rule with its code, cause, patterns and cases,
# generated from rules/*.yaml and tests/cases/; tests/rules/test_rules_doc.py fails while it is stale.
rules-doc: $(STAMP)
	$(BIN)/raydiag rules --format markdown > docs/rules.md.tmp
	mv docs/rules.md.tmp docs/rules.md

# Coverage of the tools' own messages (tests/inventory/<tool>.yaml, learned from each tool's source):
# every message printed in the tool's layouts and read by `explain`; the share per tool and the misses.
coverage: $(STAMP)
	$(BIN)/python benchmarks/coverage.py

# PostgreSQL's server binaries, for the tests that run the state store on a real PostgreSQL (they
# start and stop their own throwaway server). Debian's package; nothing to do when it is there.
# No default cluster is created: the tests need the binaries, not a server on port 5432.
PG_INITDB := $(wildcard /usr/lib/postgresql/*/bin/initdb)
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
postgres:
ifeq ($(PG_INITDB),)
	$(SUDO) mkdir -p /etc/postgresql-common
	[ -e /etc/postgresql-common/createcluster.conf ] || \
		echo "create_main_cluster = false" | $(SUDO) tee /etc/postgresql-common/createcluster.conf >/dev/null
	$(SUDO) apt-get update -qq
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql
else
	@echo "PostgreSQL found: $(firstword $(PG_INITDB))"
endif

# Alertmanager, for the tests that route alerts through a real one on loopback (they start and
# stop their own; the package's service is not used). Debian's package; nothing to do when present.
AM_BIN := $(shell command -v prometheus-alertmanager || command -v alertmanager)
alertmanager:
ifeq ($(AM_BIN),)
	$(SUDO) apt-get update -qq
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus-alertmanager
else
	@echo "Alertmanager found: $(AM_BIN)"
endif

# Prometheus and promtool, for the tests of the shipped alert rules (promtool check/test rules) and
# a real Prometheus scraping the bot on loopback. Debian's package; nothing to do when present.
PROMTOOL := $(shell command -v promtool)
prometheus:
ifeq ($(PROMTOOL),)
	$(SUDO) apt-get update -qq
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus
else
	@echo "promtool found: $(PROMTOOL)"
endif

# Regenerate the lock after changing dependencies in pyproject.toml.
lock:
	$(BIN)/python -m pip install --quiet uv
	$(BIN)/uv pip compile pyproject.toml --extra dev --python-version 3.11 --generate-hashes -o requirements.lock

# Static scan of the Dockerfile and the rendered deploy/ manifests (hadolint, checkov). The scanners
# live in their own environment: checkov pins libraries to versions the bot's lock does not want.
SCAN_VENV := .venv-scan
SCAN_STAMP := $(SCAN_VENV)/.installed

$(SCAN_STAMP): tools/scan/requirements.txt
	test -x $(SCAN_VENV)/bin/python || $(PYTHON) -m venv $(SCAN_VENV)
	$(SCAN_VENV)/bin/python -m pip install --quiet --require-hashes -r tools/scan/requirements.txt
	touch $(SCAN_STAMP)

scan: $(SCAN_STAMP)
	tools/scan/run.sh $(SCAN_VENV)

scan-lock: $(STAMP)
	$(BIN)/python -m pip install --quiet uv
	$(BIN)/uv pip compile tools/scan/requirements.in --python-version 3.11 --generate-hashes -o tools/scan/requirements.txt

clean:
	rm -rf $(VENV) $(SCAN_VENV) .pytest_cache .mypy_cache .ruff_cache
