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

.PHONY: setup prometheus models demo test lint typecheck pytest bench bench-package bench-invoke bench-validate bench-churn bench-tune clean

setup: $(VENV)/.installed $(RUNTIME)/.installed prometheus

# promtool and prometheus (Debian package prometheus): alert-rule unit tests and the real
# Prometheus that scrapes the local Triton in tests/prom. No service is started.
prometheus:
	@command -v promtool >/dev/null && command -v prometheus >/dev/null || { \
	  echo "installing prometheus and promtool (Debian package prometheus)"; \
	  apt-get update -qq && apt-get install -y -qq prometheus >/dev/null; }

# The kit's own environment (CLI, packager, Pulumi programs, test tools).
$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[infra,dev]'
	touch $@

# The Triton runtime: its own venv because nvidia-pytriton pins numpy<2 (README, Local endpoint).
# Its Python-backend stub links the system libpython3.11.
$(RUNTIME)/.installed: infra/targets/local/runtime-requirements.txt
	@ldconfig -p | grep -q 'libpython3.11.so.1.0' || { \
	  echo "installing libpython3.11 (needed by Triton's Python backend stub)"; \
	  apt-get update -qq && apt-get install -y -qq libpython3.11 >/dev/null; }
	test -x $(RUNTIME)/bin/python || $(PYTHON) -m venv $(RUNTIME)
	$(RUNTIME)/bin/python -m pip install -q -r infra/targets/local/runtime-requirements.txt
	touch $@

models: $(SAMPLES)/.generated $(INPUTS)/.generated

# The sample inputs the docs use (image.npy, traffic.csv); never inside a model repository.
$(INPUTS)/.generated: model_repos/inputs.py $(VENV)/.installed
	$(BIN)/python model_repos/inputs.py --out $(INPUTS)
	touch $@

$(SAMPLES)/.generated: model_repos/generate.py $(VENV)/.installed
	rm -rf $(SAMPLES)
	$(BIN)/python model_repos/generate.py --out $(SAMPLES)
	touch $@

demo: setup models
	$(TDK) validate $(SAMPLES)
	$(TDK) package $(SAMPLES) --copies 5 --dest file://$(CURDIR)/$(RELEASE)
	$(TDK) local demo --store file://$(CURDIR)/$(RELEASE) --max-loaded-models 3

lint: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache

typecheck: $(VENV)/.installed
	$(BIN)/mypy tdk packager cli infra bench model_repos/generate.py model_repos/inputs.py

pytest: setup
	$(BIN)/pytest -q $(PYTEST_ARGS)

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
