#!/usr/bin/env bash
# Build the one-folder bundle dist/Continuo/ from a clean venv (`make bundle`).
#
# The venv (build/bundle-venv) is made anew each time with only the app (`pip install .`) and
# PyInstaller in it: the bundle then holds exactly what pyproject.toml declares, never a test
# dependency or a stale module from the developer's venv. Prints the bundle's size at the end.
#
# Environment:
#   PYTHON        interpreter to build with (default: python3.11, else python3)
#   BUNDLE_VENV   where the build venv goes (default: build/bundle-venv)
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD

PYTHON=${PYTHON:-$(command -v python3.11 || command -v python3)}
VENV=${BUNDLE_VENV:-$REPO/build/bundle-venv}

echo "== build venv: $VENV (from $PYTHON)"
rm -rf "$VENV"
mkdir -p "$REPO/build"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
# setuptools copies sources into build/lib and never deletes there: clear it so a module
# removed from the tree cannot ride along into the wheel.
rm -rf "$REPO/build/lib" "$REPO/build/bdist."*
# Ship the versions the tests ran against: the development venv's exact versions constrain
# this install (constraints add no package, they only pin those the app pulls in).
constraints=()
if [[ -x $REPO/.venv/bin/pip ]]; then
  "$REPO/.venv/bin/pip" freeze --exclude-editable 2>/dev/null \
    | grep -v -e '^#' -e '^-e ' -e '^continuo' > "$REPO/build/dev-versions.txt" || true
  constraints=(--constraint "$REPO/build/dev-versions.txt")
  echo "== pinned to the development venv's versions ($(wc -l < "$REPO/build/dev-versions.txt") packages)"
fi
# `.[bundle]` is the app plus PyInstaller (the `bundle` extra pins its minimum version).
"$VENV/bin/python" -m pip install --quiet "${constraints[@]}" "$REPO[bundle]"

echo "== pyinstaller"
# Run from outside the repo so `import ui` in the spec resolves to the installed copy only.
cd "$REPO/build"
"$VENV/bin/python" -m PyInstaller --noconfirm --clean \
  --distpath "$REPO/dist" --workpath "$REPO/build/pyinstaller" \
  "$REPO/packaging/continuo.spec"
cd "$REPO"

exe=dist/Continuo/continuo
[[ -x $exe ]] || { echo "build.sh: $exe was not produced; see the PyInstaller output above." >&2; exit 1; }
"$VENV/bin/python" packaging/check_bundle.py
echo "== built $exe ($(du -sh dist/Continuo | cut -f1) on disk)"
# The one check that needs no display and no provider: the bundle starts and knows its version.
QT_QPA_PLATFORM=offscreen "$exe" --version
