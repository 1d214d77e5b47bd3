"""Continuo's override of PyInstaller's QtGui hook: the same collection, minus unused plugins.

PyInstaller's own hook collects every QtGui plugin type whole. Filtering here, before the
binary-dependency scan, also keeps out the libraries only those plugins link (dropping them
from `a.binaries` afterwards would leave their dependencies behind). Each rule says why.
"""

from pathlib import Path

from PyInstaller.utils.hooks.qt import add_qt6_dependencies

#: Window-system plugins kept: xcb (X11 and XWayland), wayland (native Wayland sessions),
#: offscreen (CI, the smoke script, screenshots). The rest serve embedded boards or VNC.
KEEP_PLATFORMS = ("libqxcb.", "libqwayland", "libqoffscreen.")


def _unneeded(src: str) -> bool:
    path = Path(src)
    kind, name = path.parent.name, path.name
    if kind == "platforms":
        return not name.startswith(KEEP_PLATFORMS)
    if kind == "platformthemes":
        # The GTK 3 theme links the host's GTK, which would then mix with the GLib, Pango and
        # Cairo copies it drags into the bundle; the portal theme still gives native dialogs.
        return "gtk3" in name
    if kind == "wayland-graphics-integration-client":
        # The *-server integrations are for compositors; a client needs only wayland-egl.
        return "server" in name
    # eglfs device integrations and evdev/TUIO input serve framebuffer setups without a
    # window system, which a desktop chat client never runs on.
    return kind in {"egldeviceintegrations", "generic"}


hiddenimports, binaries, datas = add_qt6_dependencies(__file__)
binaries = [entry for entry in binaries if not _unneeded(entry[0])]
