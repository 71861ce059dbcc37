# s2a: every target creates .venv on first use, so a fresh clone needs only `make`.
PY := .venv/bin/python
S2A := .venv/bin/s2a

.PHONY: setup test lint demo bench bench-peers clean

setup: .venv/.installed

.venv/.installed: pyproject.toml
	test -x $(PY) || python3 -m venv .venv
	# the local CPU wheel of torch when this machine has it, else any release in range
	$(PY) -m pip install -q torch==2.13.0 || $(PY) -m pip install -q 'torch>=2.4,<2.14'
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

# the suite's files on up to 4 processes, one a logical CPU (-n auto counts physical cores
# where psutil is installed): 2 on CI's 2 cores, 336 s against 550 s in one (AVX-512 host)
test: setup
	$(PY) -m pytest -n logical --maxprocesses 4 --dist loadfile

lint: setup
	.venv/bin/ruff check seq2attn_cli tests bench scripts
	.venv/bin/ruff format --check seq2attn_cli tests bench scripts

demo: setup
	@bash scripts/demo.sh

bench: setup
	$(PY) bench/run.py

bench-peers: setup
	$(PY) bench/peers.py

clean:
	rm -rf .venv build dist *.egg-info
