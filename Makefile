# The two commands: `make demo` and `make test`. Both install what they need first.
VENV     := .venv
PY       := $(VENV)/bin/python
DEPS     := $(VENV)/.deps-installed
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(VENV))/bin:$(PATH)

.PHONY: install demo test test-rust test-python lint fmt bench clean

$(PY):
	python3 -m venv $(VENV)

$(DEPS): requirements.txt | $(PY)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	touch $@

# maturin builds the Rust core in release mode; cargo skips it when nothing changed.
install: $(DEPS)
	$(VENV)/bin/maturin develop --release -q

demo: install
	$(VENV)/bin/collsynth demo

test: install lint test-rust test-python

test-rust:
	cargo test -p collsynth-core

test-python: install
	$(PY) -m pytest -q tests

lint: $(DEPS)
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -q -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -q -p collsynth-core -p collsynth-py
	$(VENV)/bin/ruff check python tests bench examples
	$(VENV)/bin/ruff format --check python tests bench examples
	$(VENV)/bin/mypy

fmt: $(DEPS)
	cargo fmt --all
	$(VENV)/bin/ruff format -q python tests bench examples
	$(VENV)/bin/ruff check -q --fix python tests bench examples

bench: install
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) target
