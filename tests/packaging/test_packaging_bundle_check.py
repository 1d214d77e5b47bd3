"""packaging/check_bundle.py, the post-build content check, on hand-made bundle trees.

The real bundle is checked by `make bundle` itself (build.sh runs the check); these tests
show the check notices what it exists to notice, on a tree and module list made here.
"""

from __future__ import annotations

import importlib.util
import pprint
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def check() -> ModuleType:
    path = REPO / "packaging" / "check_bundle.py"
    spec = importlib.util.spec_from_file_location("check_bundle", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _bundle(root: Path, check: ModuleType, modules: list[str], skip: str = "") -> tuple[Path, Path]:
    bundle = root / "Continuo"
    (bundle / "_internal").mkdir(parents=True)
    (bundle / "continuo").write_text("#!/bin/sh\n")
    for relative in check.REQUIRED:
        if relative != skip:
            target = bundle / "_internal" / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(b"x")
    for qm in (REPO / "resources" / "translations").glob("*.qm"):
        target = bundle / "_internal" / "resources" / "translations" / qm.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"x")
    toc = root / "PYZ-00.toc"
    entries = [(name, f"/site-packages/{name}.py", "PYMODULE") for name in modules]
    toc.write_text(pprint.pformat(("PYZ-00.pyz", entries)))
    return bundle, toc


def test_a_complete_bundle_passes(check: ModuleType, tmp_path: Path) -> None:
    bundle, toc = _bundle(tmp_path, check, [*check.REQUIRED_MODULES, "httpx", "engine"])
    assert check.problems(bundle, toc) == []


def test_test_code_in_the_bundle_is_named(check: ModuleType, tmp_path: Path) -> None:
    modules = [*check.REQUIRED_MODULES, "tests.support.provider_server", "_pytest.python"]
    bundle, toc = _bundle(tmp_path, check, modules)
    assert check.problems(bundle, toc) == [
        "module _pytest.python is bundled, but test code must not ship",
        "module tests.support.provider_server is bundled, but test code must not ship",
    ]


def test_a_missing_plugin_or_module_is_named_with_its_purpose(
    check: ModuleType, tmp_path: Path
) -> None:
    modules = [m for m in check.REQUIRED_MODULES if m != "keyring.backends.SecretService"]
    bundle, toc = _bundle(tmp_path, check, modules, skip="PySide6/Qt/plugins/platforms/libqxcb.so")
    assert check.problems(bundle, toc) == [
        "missing PySide6/Qt/plugins/platforms/libqxcb.so (the X11/XWayland window system plugin)",
        "module keyring.backends.SecretService is not bundled (the Linux keychain backend "
        "(found via entry points))",
    ]


def test_missing_x11_libraries_warn_with_the_packages_to_install(
    check: ModuleType, tmp_path: Path
) -> None:
    bundle, toc = _bundle(tmp_path, check, list(check.REQUIRED_MODULES))
    (bundle / "_internal" / "libxcb-cursor.so.0").write_bytes(b"x")
    [warning] = check.warnings(bundle)
    assert warning.startswith("not bundled: libxcb-icccm.so.4, libxcb-keysyms.so.1,")
    assert "apt-get install libxcb-cursor0 libxcb-icccm4" in warning
    assert check.problems(bundle, toc) == []  # a warning, not a failure
    for lib in check.X11_LIBRARIES:
        (bundle / "_internal" / lib).write_bytes(b"x")
    assert check.warnings(bundle) == []


def test_a_bundle_without_the_mcp_client_is_refused(check: ModuleType, tmp_path: Path) -> None:
    # The window imports engine.mcp only when tools are first offered; the bundle must carry
    # it and the SDK's client anyway (issue 11: "the bundle carries the SDK").
    left_out = {"engine.mcp", "mcp.client.session", "anyio._backends._asyncio"}
    modules = [m for m in check.REQUIRED_MODULES if m not in left_out]
    bundle, toc = _bundle(tmp_path, check, modules)
    assert [p.split(" (")[0] for p in check.problems(bundle, toc)] == [
        f"module {m} is not bundled" for m in check.REQUIRED_MODULES if m in left_out
    ]
