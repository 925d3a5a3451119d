# maptab — every target sets up its own virtual environment first.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
RUNTIME := $(VENV)/.runtime
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast test-rl test-integrations bench lint venv clean

# the package and its runtime dependencies: all `make demo` needs
$(RUNTIME): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	touch $(RUNTIME)

# plus the dev extra (test tools, OCR, datasets, inspect_ai): the tests and benchmarks
$(STAMP): $(RUNTIME)
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(RUNTIME)
	$(BIN)/maptab demo

# pytest over tests/ in 2 worker processes (pytest-xdist). Exit status 5 (no test collected,
# e.g. every test deselected through PYTEST_ADDOPTS) is turned into a failure with a message:
# a run that tested nothing never passes.
PYTEST := $(BIN)/python -m pytest -q -n 2
run_tests = $(PYTEST) $(1); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make: pytest collected no test" >&2; exit 1; fi; exit $$rc

# the full suite, as CI runs it (.ci/run)
test: $(STAMP)
	$(call run_tests,tests)

# the quick tier (under 2 minutes on 2 cores): no test marked slow, and every hypothesis test
# capped at 10 examples (tests/_examples.py)
test-fast: $(STAMP)
	MAPTAB_TEST_EXAMPLES_CAP=10 $(call run_tests,-m "not slow" tests)

# the RL smoke test: installs maptab[rl] (torch 2.13.0 CPU, trl, transformers) and runs
# GRPOTrainer for 2 steps with maptab's reward (docs/guides/train-with-rewards.md)
test-rl: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[dev,rl]'
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q -p no:cacheprovider -m rl tests/test_rewards_rl.py

# the harness integrations (docs/guides/evaluation-harnesses.md): inspect_ai tasks run through inspect's
# mock model, and the lmms-eval task folder loaded by lmms-eval's task loader. lmms-eval
# pulls torch: the constraint keeps the 2.13.0 CPU build (any other version is a CUDA build
# of GBs). It also pulls torchvision, whose x86_64 wheels on PyPI are linked against the
# CUDA build of torch and fail to import beside the CPU one ("torchvision::nms does not
# exist", and transformers imports it when it is there); no CPU build of it can be
# installed here, and lmms-eval's task loader needs none, so one that does not import is
# removed (where it imports, as with the CPU wheels on aarch64, it stays)
test-integrations: $(STAMP)
	echo "torch==2.13.0" > $(VENV)/torch-pin.txt
	$(BIN)/python -m pip install -q -c $(VENV)/torch-pin.txt -e '.[dev,inspect]' lmms-eval
	$(BIN)/python -c "import torchvision" 2>/dev/null || $(BIN)/python -m pip uninstall -q -y torchvision
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q -p no:cacheprovider tests/test_inspect.py tests/test_lmms.py

bench: $(STAMP)
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

clean:
	rm -rf $(VENV) build dist .pytest_cache
