#!/usr/bin/env bash
# Install the built bundle for the current user so Continuo shows in the launcher and starts
# on double-click (`make install-desktop`). No root needed; nothing outside $HOME is touched.
#
#   bundle   dist/Continuo/        -> $PREFIX/lib/continuo/   (a copy: `make clean` cannot break it)
#   command  continuo              -> $PREFIX/bin/continuo    (a symlink, for terminals)
#   entry    resources/continuo.desktop -> $XDG_DATA_HOME/applications/continuo.desktop
#   icons    resources/icons/       -> $XDG_DATA_HOME/icons/hicolor/<N>x<N>/apps/continuo.png
#
# Usage: packaging/install-desktop.sh [--uninstall]
# Environment: PREFIX (default ~/.local), XDG_DATA_HOME (default ~/.local/share),
#              BUNDLE (default dist/Continuo, the output of `make bundle`).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD

PREFIX=${PREFIX:-$HOME/.local}
DATA=${XDG_DATA_HOME:-$HOME/.local/share}
BUNDLE=${BUNDLE:-$REPO/dist/Continuo}
APP_DIR=$PREFIX/lib/continuo
BIN=$PREFIX/bin/continuo
ENTRY=$DATA/applications/continuo.desktop
ICONS=$DATA/icons/hicolor
SIZES=(16 24 32 48 64 128 256 512)

# Launchers cache entries and icons; refresh those caches when their tools exist (they are
# optional: GNOME and KDE also notice the new files by themselves, only later).
refresh_caches() {
  if command -v update-desktop-database >/dev/null; then
    update-desktop-database -q "$DATA/applications" || true
  fi
  if command -v gtk-update-icon-cache >/dev/null && [[ -f $ICONS/index.theme ]]; then
    gtk-update-icon-cache -q -t "$ICONS" || true
  fi
}

if [[ ${1:-} == --uninstall ]]; then
  rm -rf "$APP_DIR"
  [[ -L $BIN ]] && rm -f "$BIN"
  rm -f "$ENTRY" "$ICONS/scalable/apps/continuo.svg"
  for n in "${SIZES[@]}"; do rm -f "$ICONS/${n}x${n}/apps/continuo.png"; done
  refresh_caches
  echo "Continuo removed from the launcher; conversations in your data folder were kept."
  exit 0
elif [[ $# -gt 0 ]]; then
  echo "install-desktop.sh: unknown argument '$1'. Usage: $0 [--uninstall]" >&2
  exit 2
fi

if [[ ! -x $BUNDLE/continuo ]]; then
  echo "install-desktop.sh: no bundle at $BUNDLE. Run 'make bundle' first, then run this again." >&2
  exit 1
fi

# Copy beside the old install, then swap, so a failed copy leaves the old one working.
mkdir -p "$PREFIX/lib" "$PREFIX/bin"
staging=$(mktemp -d "$PREFIX/lib/.continuo-install.XXXXXX")
trap 'rm -rf "$staging"' EXIT
cp -a "$BUNDLE/." "$staging/"
rm -rf "$APP_DIR.old"
[[ -e $APP_DIR ]] && mv "$APP_DIR" "$APP_DIR.old"
mv "$staging" "$APP_DIR"
rm -rf "$APP_DIR.old"
ln -sfn "$APP_DIR/continuo" "$BIN"

for n in "${SIZES[@]}"; do
  install -D -m 0644 "resources/icons/continuo-$n.png" "$ICONS/${n}x${n}/apps/continuo.png"
done
install -D -m 0644 resources/icons/continuo.svg "$ICONS/scalable/apps/continuo.svg"

# The entry in resources/ runs `continuo` from PATH; the installed one names the copied bundle
# exactly (quoted, per the Desktop Entry spec), since ~/.local/bin is not always on PATH.
mkdir -p "$(dirname "$ENTRY")"
sed -e "s|^Exec=.*|Exec=\"$APP_DIR/continuo\"|" -e "s|^TryExec=.*|TryExec=$APP_DIR/continuo|" \
  resources/continuo.desktop > "$ENTRY.tmp"
chmod 0644 "$ENTRY.tmp"
mv "$ENTRY.tmp" "$ENTRY"
if command -v desktop-file-validate >/dev/null; then
  desktop-file-validate "$ENTRY"
fi
refresh_caches

echo "Installed Continuo for $(id -un):"
echo "  app:      $APP_DIR/continuo"
echo "  command:  $BIN"
echo "  launcher: $ENTRY"
echo "Find it in your launcher as \"Continuo\"; 'bash $0 --uninstall' removes it."
