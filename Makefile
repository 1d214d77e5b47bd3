# Continuo — the two commands a newcomer needs are `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Tests, benchmarks and screenshots render offscreen; `make run` uses the real display.
OFFSCREEN := QT_QPA_PLATFORM=offscreen

.PHONY: run test lint bench stress screenshots translations bundle smoke install-desktop clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# Qt's X11 plugin needs system libraries a pip install cannot bring: name (or, as root on
# Debian/Ubuntu, install) the missing ones before the window fails to start.
run: $(STAMP)
	$(PY) packaging/check_qt_libs.py
	$(PY) -m ui $(ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check engine ui tests bench packaging devtools
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/mypy engine ui

test: $(STAMP) lint
	$(OFFSCREEN) $(PY) -m pytest -q -p no:cacheprovider

stress: $(STAMP)
	$(OFFSCREEN) $(PY) -m pytest -q -p no:cacheprovider -m stress

bench: $(STAMP)
	$(OFFSCREEN) $(PY) -m bench

screenshots: $(STAMP)
	@fc-list :lang=zh | grep -q . || (apt-get update -qq && apt-get install -y -qq --no-install-recommends fonts-noto-cjk) || echo 'Install a CJK font (fonts-noto-cjk) to render Chinese text.'
	$(OFFSCREEN) $(PY) -m devtools.screenshots screenshots

# English is the source language: its catalog (continuo_en) holds only the plural forms of
# the "%n" strings ("%n model(s)" -> "1 model" / "2 models"), which Qt takes from a catalog.
translations: $(STAMP)
	$(VENV)/bin/pyside6-lupdate $$(find ui -name '*.py' | sort) -ts resources/translations/continuo_zh_CN.ts -no-obsolete
	$(VENV)/bin/pyside6-lrelease resources/translations/continuo_zh_CN.ts -qm resources/translations/continuo_zh_CN.qm
	$(VENV)/bin/pyside6-lupdate $$(find ui -name '*.py' | sort) -ts resources/translations/continuo_en.ts -no-obsolete -pluralonly
	$(VENV)/bin/pyside6-lrelease resources/translations/continuo_en.ts -qm resources/translations/continuo_en.qm

bundle: $(STAMP)
	bash packaging/build.sh

smoke: $(STAMP)
	bash packaging/smoke.sh

install-desktop:
	bash packaging/install-desktop.sh

clean:
	rm -rf build dist screenshots bench-results
