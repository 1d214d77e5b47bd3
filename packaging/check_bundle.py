"""Check a built bundle's contents: what must be in it is, and nothing from tests is.

Run by packaging/build.sh after PyInstaller (``python packaging/check_bundle.py``); it reads
dist/Continuo/ and PyInstaller's module list (build/pyinstaller/continuo/PYZ-00.toc) and
exits non-zero naming each problem. It catches at build time what would otherwise show up
on someone's desktop: a missing platform plugin, icon or translation, no CA certificates
for HTTPS, or test code shipped.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BUNDLE = REPO / "dist" / "Continuo"
TOC = REPO / "build" / "pyinstaller" / "continuo" / "PYZ-00.toc"

#: Files the bundle cannot work without, relative to its _internal/ folder (glob patterns),
#: and why.
REQUIRED = {
    "PySide6/Qt/plugins/platforms/libqxcb.so": "the X11/XWayland window system plugin",
    "PySide6/Qt/plugins/platforms/libqwayland.so": "the native Wayland plugin",
    "PySide6/Qt/plugins/platforms/libqoffscreen.so": "the offscreen plugin (CI, smoke test)",
    "PySide6/Qt/plugins/imageformats/libqsvg.so": "SVG images",
    "PySide6/Qt/translations/qtbase_zh_CN.qm": "Qt's own Chinese strings (OK, Cancel)",
    "certifi/cacert.pem": "CA certificates: httpx verifies HTTPS providers with them",
    "keyring-*.dist-info/entry_points.txt": "keyring finds its backends through these",
    "continuo-*.dist-info/METADATA": "`continuo --version` reads it",
    "mcp_server_time-*.dist-info/METADATA": "the bundled time server reads its version there",
    "tzdata/zoneinfo/Europe/Paris": "zone data for the time server where the OS has none",
    **{f"resources/icons/continuo-{n}.png": "the window icon" for n in (16, 32, 48, 256)},
}

#: X11 libraries the xcb plugin links that desktops often lack (Qt's famous "could not load the
#: Qt platform plugin xcb"). They are bundled when the build machine has them; a bundle
#: without them still runs where the desktop provides them, so their absence only warns.
#: Debian/Ubuntu packages: libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0
#: libxcb-render-util0 libxkbcommon-x11-0.
X11_LIBRARIES = (
    "libxcb-cursor.so.0",
    "libxcb-icccm.so.4",
    "libxcb-keysyms.so.1",
    "libxcb-image.so.0",
    "libxcb-render-util.so.0",
    "libxkbcommon-x11.so.0",
)

#: Modules the app needs that are imported by name at run time (invisible to analysis).
REQUIRED_MODULES = {
    "ui.app": "the app itself",
    "ui.smoke": "the --smoke-script hook",
    "engine.providers.openai": "the OpenAI-compatible adapter",
    "pygments.lexers.python": "code highlighting (Pygments loads lexers by name)",
    "keyring.backends.SecretService": "the Linux keychain backend (found via entry points)",
    "secretstorage": "the Secret Service client that backend uses",
    "platformdirs.unix": "the Linux data folder (platformdirs picks its module per OS)",
    "qasync": "the event loop",
    "engine.mcp": "MCP tool servers (the window imports it when tools are first offered)",
    "mcp.client.session": "the MCP SDK's client session",
    "mcp.client.streamable_http": "MCP over Streamable HTTP",
    "anyio._backends._asyncio": "anyio's asyncio backend (anyio loads it by name)",
    "jsonschema": "the MCP client checks tools' structured results against their schemas",
    "mcp_server_time.server": "the Time preset's server (`continuo --mcp-server`, by name)",
    "tzlocal": "the time server finds the local time zone with it",
    "engine.attach._worker": "the child that reads attachments (imported only in that mode)",
    "pypdfium2": "PDF text for attachments",
    "PIL.Image": "pictures for attachments",
    "charset_normalizer": "text attachments in any encoding",
    "mammoth": "Word documents' text for attachments",
    "python_calamine": "spreadsheets for attachments",
}

#: Module prefixes that must never ship: test code and test tooling.
FORBIDDEN_MODULES = ("tests", "pytest", "_pytest", "pytestqt", "pytest_qt", "pytest_asyncio")


def bundled_modules(toc: Path = TOC) -> set[str]:
    """Names of the Python modules PyInstaller put in the bundle's archive."""
    _archive, entries = ast.literal_eval(toc.read_text(encoding="utf-8"))
    return {name for name, _path, _kind in entries}


def problems(bundle: Path = BUNDLE, toc: Path = TOC) -> list[str]:
    """Return what is wrong with the bundle, one sentence each ([] when all is well)."""
    internal = bundle / "_internal"
    found = []
    if not (bundle / "continuo").is_file():
        return [f"{bundle}/continuo is missing: the build did not finish"]
    for relative, why in REQUIRED.items():
        if not any(p.is_file() for p in internal.glob(relative)):
            found.append(f"missing {relative} ({why})")
    for qm in sorted((REPO / "resources" / "translations").glob("*.qm")):
        if not (internal / "resources" / "translations" / qm.name).is_file():
            found.append(f"missing resources/translations/{qm.name} (the app's translation)")
    modules = bundled_modules(toc)
    for module, why in REQUIRED_MODULES.items():
        if module not in modules:
            found.append(f"module {module} is not bundled ({why})")
    for module in sorted(modules):
        if module.split(".")[0] in FORBIDDEN_MODULES:
            found.append(f"module {module} is bundled, but test code must not ship")
    return found


def warnings(bundle: Path = BUNDLE) -> list[str]:
    """Return what a desktop may miss (bundle still usable), one sentence each."""
    missing = [lib for lib in X11_LIBRARIES if not (bundle / "_internal" / lib).exists()]
    if not missing:
        return []
    return [
        f"not bundled: {', '.join(missing)}; the bundle needs them from the desktop it runs "
        "on. Install them on the build machine (apt-get install libxcb-cursor0 libxcb-icccm4 "
        "libxcb-keysyms1 libxcb-image0 libxcb-render-util0 libxkbcommon-x11-0) and rebuild."
    ]


def main() -> int:
    for warning in warnings():
        print(f"check_bundle: warning: {warning}", file=sys.stderr)
    found = problems()
    for problem in found:
        print(f"check_bundle: {problem}", file=sys.stderr)
    if found:
        print("check_bundle: fix packaging/continuo.spec (or pyproject.toml) and rebuild.")
        return 1
    print(f"check_bundle: ok ({len(REQUIRED)} required files, {len(REQUIRED_MODULES)} "
          "required modules present; no test code)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
