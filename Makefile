# maptab — every target sets up its own virtual environment first.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-rl test-integrations bench lint venv clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/maptab demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

# the RL smoke test: installs maptab[rl] (torch 2.13.0 CPU, trl, transformers) and runs
# GRPOTrainer for 2 steps with maptab's reward (docs/rewards.md)
test-rl: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[dev,rl]'
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q -p no:cacheprovider -m rl tests/test_rewards_rl.py

# the harness integrations (docs/integrations.md): inspect_ai tasks run through inspect's
# mock model, and the lmms-eval task folder loaded by lmms-eval's task loader. lmms-eval
# pulls torch: the constraint keeps the 2.13.0 CPU build (any other version is a CUDA build
# of GBs)
test-integrations: $(STAMP)
	echo "torch==2.13.0" > $(VENV)/torch-pin.txt
	$(BIN)/python -m pip install -q -c $(VENV)/torch-pin.txt -e '.[dev,inspect]' lmms-eval
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q -p no:cacheprovider tests/test_inspect.py tests/test_lmms.py

bench: $(STAMP)
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

clean:
	rm -rf $(VENV) build dist .pytest_cache
