# Two commands do all the set-up on a fresh machine:  make test  and  make demo.
PYTHON  ?= python3
VENV    := .venv
PY      := $(VENV)/bin/python
SHARED  ?= ../shared
SHARED_STORIES := $(SHARED)/data/tinystories/TinyStories-train-first2MiB.txt
STORIES := data_cache/tinystories-4MB.txt
AXE     := tests/support/node_modules/axe-core/axe.min.js

# `make test` runs both halves of the suite; `make unit` (in-process, about 2 min) and `make e2e`
# (notebooks, the real grader, a browser) run one.
.PHONY: test unit e2e demo build solutions release lint setup data clean

setup: $(VENV)/.stamp $(AXE)

# axe-core, which the browser tests inject into each page they check (tests/support/package.json and
# its lock pin it). Without npm it is left out and those checks skip, except under CI where they fail.
$(AXE): tests/support/package.json tests/support/package-lock.json
	@if command -v npm >/dev/null; then \
		npm ci --prefix tests/support --no-audit --no-fund --silent && touch $@; \
	else echo "npm is missing: the browser tests' accessibility checks skip (apt-get install npm)"; fi

# The virtual environment, with the pinned packages; redone only when the pins change.
$(VENV)/.stamp: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	$(PY) -m pip install -q --no-deps -e . --config-settings editable_mode=compat
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $@

# The stories: the shared offline copy when it is there (tests, CI), else the real download.
data: $(STORIES)
$(STORIES): | $(VENV)/.stamp
	@if [ -f "$(SHARED_STORIES)" ]; then \
		$(PY) -m course data --from "$(SHARED_STORIES)"; \
	else \
		$(PY) -c "from course.data import load_text; load_text()"; \
	fi

lint: $(VENV)/.stamp
	$(VENV)/bin/ruff check course autograder instructor benchmarks tests
	$(VENV)/bin/mypy course autograder instructor

# `make test` ends with its own wall time, set-up included (the clock starts when make reads this file).
STARTED := $(shell date +%s)
ELAPSED  = s=$$(( $$(date +%s) - $(STARTED) )); echo "make test: $$((s / 60)) min $$((s % 60)) s"

# The two halves run side by side: the end-to-end half leaves most of a second core idle (it waits on
# kernels, sandboxes and browsers), and the unit half fits in it, a little less urgent (nice), since
# the end-to-end half takes longest. The unit half's output follows.
test: $(VENV)/.stamp $(AXE) $(STORIES) lint
	@$(PY) -m course build --check && \
	unit_log=$$(mktemp) && \
	{ COURSE_SHARED="$(abspath $(SHARED))" nice -n 5 $(PY) -m pytest -q -m unit -p no:cacheprovider \
		>"$$unit_log" 2>&1 & } && unit=$$! && \
	COURSE_SHARED="$(abspath $(SHARED))" $(PY) -m pytest -q -m e2e --durations=25; e2e=$$?; \
	wait $$unit; u=$$?; echo "-- the unit half (pytest -m unit):"; cat "$$unit_log"; rm -f "$$unit_log"; \
	$(ELAPSED); [ $$e2e -eq 0 ] && [ $$u -eq 0 ]

unit e2e: $(VENV)/.stamp $(STORIES)
	COURSE_SHARED="$(abspath $(SHARED))" $(PY) -m pytest -q -m $@

demo: $(VENV)/.stamp $(STORIES)
	$(PY) -m instructor.demo

build: $(VENV)/.stamp
	$(PY) -m course build

solutions: $(VENV)/.stamp $(STORIES)
	$(PY) -m course solutions

# The public repository's tree (instructor/release.py), up to the notebook students get this week:
#   make release UPTO=03_attention [OUT=../course-public]
# Every notebook at once gives away their answers: `course release OUT --all`, on purpose.
OUT ?= dist/public
release: $(VENV)/.stamp
	@if [ -z "$(UPTO)" ]; then \
		echo "make release UPTO=NN_name: the last notebook students get (e.g. UPTO=03_attention);"; \
		echo "each notebook's GIVEN cells hold the earlier ones' answers. Writes OUT=$(OUT)."; \
		exit 2; \
	fi
	$(PY) -m course release "$(OUT)" --upto "$(UPTO)"

clean:
	rm -rf $(VENV) autograder/build runs grading dist
