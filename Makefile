# Two commands do all the set-up on a fresh machine:
#   make serve   start the webhook on the embedded default (bundled catalogue, self-signed TLS, 127.0.0.1:8443; the samples pick their policy by annotation)
#   make test    install what the tests need, run the static checks (make lint, make typecheck) and the tests
#   make image   build the container image (podman, or docker; tools/image/build.py, docs/install/image.md)
#   make install-compiled   the compiled build (mypyc, as the image has it) in .venv-compiled, e.g. to benchmark it
# Documentation: make docs (build the site into site/, --strict), make docs-serve (http://127.0.0.1:8000),
# make docs-reference (regenerate docs/reference/ from the code).
# The tests read tests/data/shared/, an in-tree copy of ../shared; `make sync-shared` refreshes it.
PYTHON ?= python3.11
VENV   ?= .venv
PY      = $(VENV)/bin/python
PIP     = $(VENV)/bin/pip
STAMP   = $(VENV)/.installed

.PHONY: serve serve-hint test test-ci lint typecheck install install-compiled conformance sync-shared bench image clean docs docs-serve docs-reference

$(PY):
	$(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[test,docs]'
	touch $(STAMP)

install: $(STAMP)

# The review path compiled with mypyc (setup.py), installed (not editable) into its own environment; needs a C
# compiler and the Python headers (mypyc checks the code against the runtime dependencies, installed first).
# Built as the image builds it (tools/build_wheel.py: GCC's profile-guided optimisation from a training run,
# about 4 minutes on 2 cores; PGO=0 compiles once, half the time). Rebuild after a change: the installed copy
# does not follow the tree.
COMPILED_VENV ?= .venv-compiled
PGO ?= 1
install-compiled:
	$(PYTHON) -m venv $(COMPILED_VENV) || python3 -m venv $(COMPILED_VENV)
	$(COMPILED_VENV)/bin/pip install -q --upgrade pip
	$(COMPILED_VENV)/bin/python tools/dependencies.py > $(COMPILED_VENV)/dependencies.txt
	$(COMPILED_VENV)/bin/pip install -q -r $(COMPILED_VENV)/dependencies.txt -r tools/compile-requirements.txt
	INSTANCETYPE_WEBHOOK_COMPILE=1 $(COMPILED_VENV)/bin/python tools/build_wheel.py \
	  --wheel-dir $(COMPILED_VENV)/wheel $(if $(filter 0,$(PGO)),--no-pgo)
	$(COMPILED_VENV)/bin/pip install -q --no-deps --force-reinstall $(COMPILED_VENV)/wheel/instancetype_webhook-*.whl
	$(COMPILED_VENV)/bin/instancetype-webhook --version

serve: $(STAMP) serve-hint
	$(VENV)/bin/instancetype-webhook serve --dev --host 127.0.0.1 --port 8443 --allow-vm-policy

# printed before the server starts: where the CLI the docs show is, once `make` has installed it
serve-hint:
	@echo "the CLI: '. $(VENV)/bin/activate' (in another shell) puts instancetype-webhook on your PATH"

# Everything a user's machine can run: the static checks, then the tests (what a machine lacks, e.g. podman or
# Chromium, skips with one line naming it). `make test-ci` adds what only CI runs (.ci/run calls both).
# The tests run on every core (pytest-xdist; PYTEST_WORKERS=0 runs them in this process, as a debugger wants).
PYTEST_WORKERS ?= auto
test: lint typecheck
	$(PY) -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile

test-ci: $(STAMP)
	INSTANCETYPE_WEBHOOK_CI_TIER=1 $(PY) -m pytest -q -n $(PYTEST_WORKERS) --dist loadfile -m ci_tier

# ruff over the repository, the floors of the package (import-linter: docs/architecture.md), and the shape of the
# tests (tools/lint_tests.py: each module's test at its mirror path; no test module imports another)
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(PY) tools/lint_tests.py

typecheck: $(STAMP)
	$(VENV)/bin/mypy

conformance: $(STAMP)
	$(VENV)/bin/instancetype-webhook conformance tests/data/shared/conformance
	for release in v1.7.4 v1.8.4 v1.9.0; do \
	  $(VENV)/bin/instancetype-webhook conformance --kubevirt-version $$release tests/data/shared/conformance | tail -1; done

# Refresh the in-tree copy from ../shared (or $$INSTANCETYPE_WEBHOOK_SHARED); prints what changed.
sync-shared:
	python3 tools/sync_shared.py

bench: $(STAMP)
	$(PY) bench/run.py

docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

docs-serve: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve --dev-addr 127.0.0.1:8000

docs-reference: $(STAMP)
	$(PY) tools/gen_docs.py

# BASE_IMAGE=... picks the base; without it python:3.11-slim, or a local Debian base where that cannot be pulled.
image:
	python3 tools/image/build.py $(if $(PLATFORM),--platform $(PLATFORM))

clean:
	rm -rf $(VENV) $(COMPILED_VENV) build site *.egg-info
