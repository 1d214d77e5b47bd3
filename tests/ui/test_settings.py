"""settings.json and API keys: atomic 0600 writes, corrupt files refused, keys kept out of sight.

The keychain tests install `DictKeyring`, a real `keyring` backend (keyring's own plug-in
interface) that keeps secrets in a dict, because a headless machine has no OS keychain.
"""

from __future__ import annotations

import json
import logging
import os
import stat

import keyring
import pytest

from tests.ui.conftest import DictKeyring
from ui.settings.store import (
    KEYRING_SERVICE,
    ProviderConfig,
    Settings,
    SettingsFileError,
    SettingsStore,
    new_provider_id,
    with_key_location,
)

SECRET = "sk-test-0123456789abcdef-NEVER-LOGGED"


def _provider(**kw: object) -> ProviderConfig:
    values: dict[str, object] = {
        "id": new_provider_id(),
        "kind": "openai",
        "name": "OpenAI",
        "base_url": "https://api.openai.com/v1",
        "default_model": "gpt-4o-mini",
    }
    values.update(kw)
    return ProviderConfig(**values)  # type: ignore[arg-type]


def _mode(path: os.PathLike[str] | str) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


async def test_missing_file_gives_defaults_and_writes_nothing(tmp_path, no_keyring) -> None:
    store = SettingsStore(tmp_path)
    settings = await store.load()
    assert settings == Settings()
    assert not (tmp_path / "settings.json").exists()


async def test_round_trip_is_atomic_and_0600(tmp_path, no_keyring) -> None:
    store = SettingsStore(tmp_path / "data")
    provider = _provider()
    settings = Settings(
        providers=[provider],
        default_provider_id=provider.id,
        language="zh_CN",
        theme="dark",
        last_session_id="s1",
        window_geometry="AdnQywADAAA=",
    )
    await store.save(settings)
    path = tmp_path / "data" / "settings.json"
    assert _mode(path) == 0o600
    # No temp file is left behind by the atomic write.
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]
    assert await SettingsStore(tmp_path / "data").load() == settings


async def test_unknown_fields_survive_a_rewrite(tmp_path, no_keyring) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"version": 1, "future_option": {"a": 1}, "language": "en"}))
    store = SettingsStore(tmp_path)
    settings = await store.load()
    assert settings.language == "en"
    settings.theme = "light"
    await store.save(settings)
    raw = json.loads(path.read_text())
    assert raw["future_option"] == {"a": 1}
    assert raw["theme"] == "light"


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        ('{"version": 99}', "newer Continuo"),
        ('{"providers": {"a": 1}}', "not a list"),
        ('{"providers": [{"kind": "openai"}]}', "unexpected content"),
        (b"\xff\xfe\x00garbage", "not UTF-8"),
    ],
)
async def test_corrupt_file_is_refused_and_never_overwritten(
    tmp_path, no_keyring, content: str | bytes, words: str
) -> None:
    path = tmp_path / "settings.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    before = path.read_bytes()
    store = SettingsStore(tmp_path)

    with pytest.raises(SettingsFileError) as caught:
        await store.load()
    message = str(caught.value)
    assert str(path) in message and words in message and "not changed" in message
    assert store.refused_error is caught.value

    # The app carries on with defaults, but nothing it does writes over the file.
    with pytest.raises(SettingsFileError):
        await store.save(Settings(language="en"))
    with pytest.raises(SettingsFileError):
        await store.set_api_key("p1", SECRET)
    assert path.read_bytes() == before

    # With the person's consent the file is moved aside, intact, and saving works again.
    moved = await store.move_aside()
    assert moved is not None and moved.read_bytes() == before
    await store.save(Settings(language="en"))
    assert (await store.load()).language == "en"


async def test_key_goes_to_file_0600_without_keychain(tmp_path, no_keyring, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    store = SettingsStore(tmp_path)
    provider = _provider()
    await store.load()
    assert store.keychain_available is False

    in_keychain = await store.set_api_key(provider.id, SECRET)
    assert in_keychain is False
    path = tmp_path / "settings.json"
    assert _mode(path) == 0o600
    assert json.loads(path.read_text())["api_keys"] == {provider.id: SECRET}
    assert await store.get_api_key(provider.id) == SECRET

    # Saving settings keeps the key of a provider that still exists...
    await store.save(Settings(providers=[provider]))
    assert await store.get_api_key(provider.id) == SECRET
    # ...and drops it once the provider is gone.
    await store.save(Settings(providers=[]))
    assert await store.get_api_key(provider.id) is None
    assert "api_keys" not in json.loads(path.read_text())

    assert SECRET not in caplog.text
    assert SECRET not in repr(store) and SECRET not in repr(provider)


async def test_key_goes_to_keychain_and_not_the_file(tmp_path, dict_keyring, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    store = SettingsStore(tmp_path)
    provider = _provider()
    await store.load()
    assert store.keychain_available is True

    assert await store.set_api_key(provider.id, SECRET) is True
    assert dict_keyring.secrets == {(KEYRING_SERVICE, provider.id): SECRET}
    settings = Settings(providers=[with_key_location(provider, True)])
    await store.save(settings)
    assert SECRET not in (tmp_path / "settings.json").read_text()
    assert await store.get_api_key(provider.id) == SECRET

    await store.delete_api_key(provider.id)
    assert dict_keyring.secrets == {}
    assert await store.get_api_key(provider.id) is None
    assert SECRET not in caplog.text


async def test_key_moves_from_file_to_keychain_when_one_appears(tmp_path, dict_keyring) -> None:
    provider = _provider()
    file_store = SettingsStore(tmp_path, use_keychain=False)
    await file_store.set_api_key(provider.id, SECRET)

    store = SettingsStore(tmp_path)
    # A key saved before the keychain existed is still found...
    assert await store.get_api_key(provider.id) == SECRET
    # ...and saving it again moves it out of the file.
    assert await store.set_api_key(provider.id, SECRET) is True
    assert SECRET not in (tmp_path / "settings.json").read_text()


async def test_keychain_failure_is_reported_without_the_key(tmp_path) -> None:
    class LockedKeyring(DictKeyring):
        def set_password(self, service: str, username: str, password: str) -> None:
            raise keyring.errors.KeyringLocked(f"locked while storing {password}")

    previous = keyring.get_keyring()
    keyring.set_keyring(LockedKeyring())
    try:
        store = SettingsStore(tmp_path)
        with pytest.raises(Exception) as caught:
            await store.set_api_key("p1", SECRET)
    finally:
        keyring.set_keyring(previous)
    message = str(caught.value)
    assert "keychain" in message and "try again" in message
    assert SECRET not in message
    assert not (tmp_path / "settings.json").exists()


async def test_provider_config_is_checked() -> None:
    with pytest.raises(ValueError, match="Unknown provider kind"):
        _provider(kind="gopher")
    settings = Settings(providers=[_provider(name="A"), _provider(name="B")])
    assert settings.default_provider() is settings.providers[0]
    settings.default_provider_id = settings.providers[1].id
    assert settings.default_provider() is settings.providers[1]


@pytest.fixture
def umask_022():
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.mark.usefixtures("umask_022")
async def test_settings_create_the_data_folder_private(tmp_path, no_keyring) -> None:
    store = SettingsStore(tmp_path / "new" / "data")
    await store.save(Settings(language="zh_CN"))
    assert _mode(tmp_path / "new" / "data") == 0o700
    assert _mode(tmp_path / "new") == 0o700
    assert _mode(tmp_path / "new" / "data" / "settings.json") == 0o600


async def test_symlinked_settings_are_written_through_and_stay_a_link(tmp_path, no_keyring) -> None:
    kept = tmp_path / "dotfiles"
    kept.mkdir()
    (kept / "continuo.json").write_text('{"version": 1, "theme": "dark"}\n', encoding="utf-8")
    data = tmp_path / "data"
    data.mkdir()
    link = data / "settings.json"
    link.symlink_to(kept / "continuo.json")

    store = SettingsStore(data)
    settings = await store.load()
    assert settings.theme == "dark"
    await store.save(Settings(theme="light", language="zh_CN"))

    assert link.is_symlink() and os.readlink(link) == str(kept / "continuo.json")
    written = json.loads((kept / "continuo.json").read_text(encoding="utf-8"))
    assert written["theme"] == "light" and written["language"] == "zh_CN"
    assert _mode(kept / "continuo.json") == 0o600
    assert sorted(p.name for p in kept.iterdir()) == ["continuo.json"]  # no temp file left
    assert (await SettingsStore(data).load()).language == "zh_CN"


async def test_symlink_to_a_missing_folder_is_refused_and_left_alone(tmp_path, no_keyring) -> None:
    from ui.settings.store import SettingsError

    data = tmp_path / "data"
    data.mkdir()
    link = data / "settings.json"
    gone = tmp_path / "unmounted" / "continuo.json"
    link.symlink_to(gone)
    store = SettingsStore(data)
    with pytest.raises(SettingsError) as caught:
        await store.save(Settings(language="zh_CN"))
    assert str(caught.value) == (
        f"The settings file {link} is a link to {gone}, which cannot be written (its folder "
        f"{gone.parent} does not exist). The link was left as it is; fix or remove it, then "
        "save again."
    )
    assert link.is_symlink() and os.readlink(link) == str(gone)
    assert sorted(p.name for p in data.iterdir()) == ["settings.json"]
