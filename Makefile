# Triton Deploy Kit. `make demo` and `make test` do every set-up step themselves.
PYTHON  ?= python3
VENV    := .venv
RUNTIME := .venv-triton
BIN     := $(VENV)/bin
TDK     := $(BIN)/tdk
SAMPLES := model_repos/samples
INPUTS  := model_repos/inputs
RELEASE := build/release
PYTEST_ARGS ?=
# Test processes (pytest-xdist). Many tests wait on a Triton, a store or a child process, so more
# processes than cores keeps both busy: 11 min 27 s with 2, 7 min 55 s with 3 (2-core machine,
# 2026-11-26); 4: 437 s on a quiet machine against 566 s with 3 (clean clone), 2026-11-27.
# Each file stays in one process (--dist loadfile): its module fixtures start one Triton. Files go
# out in collection order (--no-loadscope-reorder), longest first (tests/conftest.py LONGEST_FIRST):
# xdist's own order (most tests first) left the one-test bench runs for last, one process busy.
PYTEST_WORKERS ?= 4

# Installs are pinned: pyproject.toml keeps ranges (what a user's own environment gets), and the
# lock files hold the versions CI last passed with, applied as constraints. `make lock` is the one
# way to move them (README, "Pinned installs").
LOCK         := requirements/dev.lock
RUNTIME_LOCK := requirements/triton-runtime.lock
LOCK_DIR     := build/lock
# Tests that compare the kit's derived tables with the installed packages: what `make lock` runs
DRIFT_TESTS  := tests/clouds/aws/test_generated.py tests/infra/test_doctor_sources.py \
                tests/infra/test_doctor_schemas.py tests/infra/test_image_facts.py

AZURITE := azurite@3.35.0
NODE    := .node

.PHONY: setup lock prometheus haproxy azurite models demo extra test lint typecheck pytest bench bench-package bench-invoke bench-validate bench-churn bench-tune clean

# Everything `make test` needs; `make demo` needs less (the kit alone and the Triton runtime).
setup: $(VENV)/.installed $(RUNTIME)/.installed prometheus haproxy azurite

# A Debian package that a target needs: installed when running as root with apt-get, otherwise
# `make` stops and prints the one command to run. $(1): the package, $(2): why it is needed.
need_package = { if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing $(1) ($(2))"; \
	  apt-get update -qq && apt-get install -y -qq $(1) >/dev/null; \
	else \
	  echo "make: $(1) is missing ($(2)); installing it needs root. Run:" >&2; \
	  echo "  sudo apt-get install -y $(1)    (Debian/Ubuntu; elsewhere the same package of your system)" >&2; \
	  exit 1; \
	fi; }

# promtool and prometheus (Debian package prometheus): alert-rule unit tests and the real
# Prometheus that scrapes the local Triton in tests/prom (tests only). No service is started.
prometheus:
	@command -v promtool >/dev/null && command -v prometheus >/dev/null || \
	  $(call need_package,prometheus,promtool and prometheus for the tests)

# HAProxy (Debian package haproxy, 2.6 on Debian 12): the router of `tdk local up --replicas N`,
# hashing the TargetModel header as the Kubernetes stacks' Envoy does (bench/mme_k8s.py, tests).
haproxy:
	@command -v haproxy >/dev/null || test -x /usr/sbin/haproxy || \
	  $(call need_package,haproxy,the router of tdk local up --replicas)

# Azurite (npm), the Azure Blob Storage emulator the az:// store tests start (tests only): into
# the project's own $(NODE)/node_modules, nothing global. About 190 MB and 20 s from npm (2026-11-27).
azurite: $(NODE)/.$(AZURITE)

$(NODE)/.$(AZURITE):
	@command -v npm >/dev/null || $(call need_package,npm,Azurite for the az:// store tests)
	npm install --prefix $(NODE) --no-audit --no-fund --no-save --loglevel=error $(AZURITE)
	touch $@

# pip and setuptools (the build backend) come from the lock too: the kit is built without
# build isolation, so no unpinned setuptools is fetched for it.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q -c $(LOCK) pip setuptools

# The kit alone (CLI, packager, local endpoint client): what `make demo` runs. A plain install
# (not editable, so setuptools prints no editable-mode notice); skipped when `make setup` has
# installed the editable kit with every extra already.
$(VENV)/.kit: pyproject.toml $(LOCK) | $(BIN)/python
	test -f $(VENV)/.installed || \
	  $(BIN)/python -m pip install -q --no-build-isolation -c $(LOCK) .
	touch $@

# The kit's whole environment for development and tests: editable, Pulumi programs and SDKs
# (infra) and the test tools (dev).
$(VENV)/.installed: pyproject.toml $(LOCK) | $(BIN)/python
	$(BIN)/python -m pip install -q -c $(LOCK) pip setuptools
	$(BIN)/python -m pip install -q --no-build-isolation -c $(LOCK) -e '.[infra,dev]'
	touch $@ $(VENV)/.kit

# One extra's packages into .venv, the kit left as it is (a reinstall under a running local
# endpoint breaks its next model load): `make extra EXTRA=import` (Hugging Face import: torch's
# CPU wheel from PyTorch's index, https://download.pytorch.org/whl/cpu as
# https://pytorch.org/get-started/locally/ gives it for CPU, checked 2026-12-07; PyPI's torch
# pulls a multi-GB CUDA build), `make extra EXTRA=infra` (the Pulumi programs), `EXTRA=build`.
EXTRA ?= import
TORCH_CPU_INDEX := https://download.pytorch.org/whl/cpu
extra: | $(BIN)/python
	$(BIN)/python -m tdk.extras $(EXTRA) > $(VENV)/.extra-$(EXTRA).txt
	$(BIN)/python -m pip install -q -c $(LOCK) \
	  $(if $(filter import,$(EXTRA)),--extra-index-url $(TORCH_CPU_INDEX)) \
	  -r $(VENV)/.extra-$(EXTRA).txt

# The Triton runtime: its own venv because nvidia-pytriton pins numpy<2 (README, Local endpoint).
# Its Python-backend stub links the system libpython3.11.
$(RUNTIME)/.installed: infra/targets/local/runtime-requirements.txt $(RUNTIME_LOCK)
	@{ ldconfig -p 2>/dev/null || /sbin/ldconfig -p; } | grep -q 'libpython3.11.so.1.0' || \
	  $(call need_package,libpython3.11,Triton's Python backend stub links it)
	test -x $(RUNTIME)/bin/python || $(PYTHON) -m venv $(RUNTIME)
	$(RUNTIME)/bin/python -m pip install -q -c $(RUNTIME_LOCK) \
	  -r infra/targets/local/runtime-requirements.txt
	touch $@

# The one deliberate upgrade: re-resolve pyproject.toml's ranges and the runtime's requirements
# in fresh venvs (nothing of .venv is reused), write both lock files, reinstall from them,
# regenerate the tables derived from installed packages and run their drift tests. Review and
# commit the diff of requirements/ and infra/ together.
lock:
	rm -rf $(LOCK_DIR)
	$(PYTHON) -m venv $(LOCK_DIR)/dev
	$(LOCK_DIR)/dev/bin/python -m pip install -q --upgrade pip setuptools
	$(LOCK_DIR)/dev/bin/python -m pip install -q '.[infra,dev]'
	$(PYTHON) -m venv $(LOCK_DIR)/runtime
	$(LOCK_DIR)/runtime/bin/python -m pip install -q -r infra/targets/local/runtime-requirements.txt
	{ sed -n '/^#/p' $(LOCK); $(LOCK_DIR)/dev/bin/python -m pip freeze --all \
	  --exclude triton-deploy-kit | sed -E 's/^([A-Za-z0-9_.-]+==[^+ ]+)[+].*$$/\1/'; } > $(LOCK).new
	{ sed -n '/^#/p' $(RUNTIME_LOCK); $(LOCK_DIR)/runtime/bin/python -m pip freeze \
	  | sed -E 's/^([A-Za-z0-9_.-]+==[^+ ]+)[+].*$$/\1/'; } > $(RUNTIME_LOCK).new
	mv $(LOCK).new $(LOCK) && mv $(RUNTIME_LOCK).new $(RUNTIME_LOCK)
	rm -rf $(LOCK_DIR)
	$(MAKE) $(VENV)/.installed $(RUNTIME)/.installed
	$(BIN)/python -m infra.clouds.aws.generate
	$(BIN)/pytest -q -p no:cacheprovider $(DRIFT_TESTS)
	git diff --stat -- requirements infra

models: $(SAMPLES)/.generated $(INPUTS)/.generated

# The sample inputs the docs use (image.npy, traffic.csv); never inside a model repository.
$(INPUTS)/.generated: model_repos/inputs.py $(VENV)/.kit
	$(BIN)/python model_repos/inputs.py --out $(INPUTS)
	touch $@

$(SAMPLES)/.generated: model_repos/generate.py $(VENV)/.kit
	rm -rf $(SAMPLES)
	$(BIN)/python model_repos/generate.py --out $(SAMPLES)
	touch $@

# Only what the demo needs: the kit, the Triton runtime, the sample models and inputs (no test tools, no
# Pulumi SDKs, nothing that needs root but libpython3.11). It ends with one table and a "next".
demo: $(VENV)/.kit $(RUNTIME)/.installed $(SAMPLES)/.generated $(INPUTS)/.generated
	@$(TDK) validate $(SAMPLES) >/dev/null || { $(TDK) validate $(SAMPLES); exit 1; }
	@$(TDK) package $(SAMPLES) --copies 5 --release file://$(CURDIR)/$(RELEASE) >/dev/null
	@$(TDK) local demo --release file://$(CURDIR)/$(RELEASE) --max-loaded-models 3

lint: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache

typecheck: $(VENV)/.installed
	$(BIN)/mypy tdk packager cli infra bench model_repos/generate.py model_repos/inputs.py

pytest: setup
	$(BIN)/pytest -q -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)

test: setup lint typecheck pytest

bench: bench-package bench-invoke bench-validate bench-churn bench-tune

bench-package: setup
	$(BIN)/python bench/package.py

bench-invoke: setup models
	$(BIN)/python bench/invoke.py

bench-validate: setup
	$(BIN)/python bench/validate.py

bench-churn: setup
	$(BIN)/python bench/churn.py --runs 3

bench-tune: setup models
	$(BIN)/python bench/tune.py

clean:
	rm -rf build $(SAMPLES) $(INPUTS) .mypy_cache .ruff_cache .pytest_cache
