"""The API key never appears in an error, a repr, a log line or a stored message.

The loopback server is scripted to echo the key back in its error text (as OpenAI's
"Incorrect API key provided: sk-..." does), and every log record of every logger (httpx and
httpcore included, at DEBUG) is captured while requests succeed, retry and fail.
"""

from __future__ import annotations

import logging
import traceback

import pytest

from engine import JSONLExtension
from engine.errors import ProviderError
from engine.messages import UserMessage
from engine.model import ModelRequest
from engine.redaction import Redactor, shorten
from tests.providers.conftest import SECRET_KEY
from tests.support.provider_server import Fault, Turn


def ask() -> ModelRequest:
    return ModelRequest([UserMessage(content="hi")])


def everything_about(error: BaseException) -> str:
    """The error's text, repr, args and the whole formatted chain with its causes."""
    parts = [str(error), repr(error), *map(str, error.args)]
    parts += traceback.format_exception(error)
    return "\n".join(parts)


ECHOES = [
    Turn(status=401, error=f"Incorrect API key provided: {SECRET_KEY}."),
    Turn(status=403, error=f"Key {SECRET_KEY} may not use this model"),
    Turn(status=400, error=f"bad request from key {SECRET_KEY}"),
    Turn(status=429, error=f"rate limited for {SECRET_KEY}", retry_after="3600"),
    Turn(status=500, error=f"crash while handling {SECRET_KEY[:12]}***{SECRET_KEY[-4:]}"),
]


@pytest.mark.parametrize("turn", ECHOES, ids=lambda t: str(t.status))
async def test_errors_never_contain_the_key(server, make_adapter, protocol, turn) -> None:
    server.script(*[turn] * 4)
    model = make_adapter(protocol)
    with pytest.raises(ProviderError) as info:
        async for _ in model.stream(ask()):
            pass
    text = everything_about(info.value)
    assert SECRET_KEY not in text
    assert SECRET_KEY[-12:] not in text
    assert str(info.value).endswith(".")  # a sentence, with what to do


async def test_error_event_echoing_the_key_is_scrubbed(server, make_adapter) -> None:
    server.script(Turn(sample="compat/groq-error-event.sse"))
    model = make_adapter("openai", api_key="get_something_by_name")  # a key that IS echoed
    with pytest.raises(ProviderError) as info:
        async for _ in model.stream(ask()):
            pass
    assert "get_something_by_name" not in everything_about(info.value)
    assert "[redacted]" in str(info.value)


async def test_reprs_never_contain_the_key(make_adapter, protocol) -> None:
    model = make_adapter(protocol)
    assert SECRET_KEY not in repr(model)
    assert SECRET_KEY not in str(model)


async def test_logs_never_contain_the_key(server, make_adapter, protocol, caplog) -> None:
    caplog.set_level(logging.DEBUG)  # every logger: ours, httpx, httpcore
    server.script(
        Turn(status=503),
        Turn(text="fine"),
        Turn(text="partial answer", fault=Fault.RESET, fault_after=4, chunk_size=2),
        Turn(status=401),
    )
    model = make_adapter(protocol)
    async for _ in model.stream(ask()):
        pass
    for _ in range(2):
        with pytest.raises(ProviderError):
            async for _ in model.stream(ask()):
                pass
    await model.list_models()
    assert caplog.records, "nothing was logged, so nothing was checked"
    assert any("retrying" in r.getMessage() for r in caplog.records)
    logged = "\n".join(f"{r.getMessage()} {r.args!r} {r.exc_text or ''}" for r in caplog.records)
    assert SECRET_KEY not in logged


async def test_stored_messages_never_contain_the_key(server, make_adapter, store) -> None:
    # An error text that echoes the key ends up in the stored partial's stop message.
    server.script(Turn(sample="compat/groq-error-event.sse"))
    model = make_adapter("openai", api_key="get_something_by_name", max_attempts=1)
    agent = await store.agent(model)
    with pytest.raises(ProviderError):
        await agent.run("hi")
    stored = await store.history()
    assert stored[-1].stop is not None
    assert "get_something_by_name" not in repr(stored)


# ---------------------------------------------------------------------------- echo forms

#: a Groq-shaped key, and the forms a server or a proxy echoes it back in
GROQ_KEY = "gsk_SECRETdeadbeef4321"
ECHO_FORMS = {
    "masked": "gsk_SECRETde****4321",
    "upper": GROQ_KEY.upper(),
    "lower": GROQ_KEY.lower(),
    "spaced": " ".join(GROQ_KEY),
    "grouped": "gsk_SECRET dead beef 4321",
    "suffix_masked": "****************4321",
    "prefix_cut": "gsk_SECRETdeadb...",
}


def leaks(text: str, key: str = GROQ_KEY) -> list[str]:
    """The pieces of the key still readable in the text (spaces and case ignored).

    Six characters at a time, each reaching past the key's ordinary-looking start
    ("gsk_SECRET": "secret" is a word a traceback may well contain).
    """
    squeezed = "".join(text.split()).lower()
    lowered = key.lower()
    start = len("gsk_SECRET") - 5
    pieces = [lowered[i : i + 6] for i in range(start, len(lowered) - 5)]
    return [piece for piece in pieces if piece in squeezed]


@pytest.mark.parametrize("form", ECHO_FORMS, ids=str)
def test_the_redactor_hides_every_echo_form(form) -> None:
    redact = Redactor([GROQ_KEY])
    echo = ECHO_FORMS[form]
    text = f"Invalid API Key: {echo}. Check your key."
    hidden = redact(text)
    assert "[redacted]" in hidden
    assert "deadbeef" not in hidden.lower().replace(" ", "")
    assert "4321" not in hidden and not leaks(hidden), hidden
    assert hidden.startswith("Invalid API Key: ") and hidden.endswith(". Check your key.")


def test_the_redactor_hides_url_userinfo_and_key_values_without_any_secret() -> None:
    redact = Redactor()
    text = (
        "GET http://user:p4ssw0rd-xyz@host:8080/v1?key=AAA111&model=m&api-key=BBB222 "
        "failed; retry with access_token=CCC333 or API_KEY=DDD444"
    )
    hidden = redact(text)
    for secret in ("p4ssw0rd", "user:", "AAA111", "BBB222", "CCC333", "DDD444"):
        assert secret not in hidden, (secret, hidden)
    assert "model=m" in hidden and "host:8080/v1" in hidden


def test_the_redactor_leaves_ordinary_words_alone() -> None:
    redact = Redactor([GROQ_KEY, "short"])
    text = "The model is overloaded (error 4321). Try again in 30 seconds."
    assert redact(text) == text
    assert redact("a SHORT key") == "a [redacted] key"  # short secrets: whole, any case


def test_shortening_marks_the_cut() -> None:
    assert shorten("word " * 100, 50).endswith("…") and len(shorten("word " * 100, 50)) <= 50
    assert shorten("short", 50) == "short"


@pytest.mark.parametrize("form", ECHO_FORMS, ids=str)
async def test_status_errors_hide_echoes_of_the_key(server, make_adapter, protocol, form) -> None:
    # Before: only the exact key (and "sk-" shapes) were hidden.
    server.script(Turn(status=400, error=f"Invalid API Key: {ECHO_FORMS[form]}"))
    model = make_adapter(protocol, api_key=GROQ_KEY, max_attempts=1)
    with pytest.raises(ProviderError) as info:
        async for _ in model.stream(ask()):
            pass
    text = everything_about(info.value)
    assert not leaks(text) and "4321" not in str(info.value), str(info.value)


USERINFO_KEY = "sk-user-info-SECRET-5555"


async def test_a_key_in_the_base_urls_userinfo_never_shows(server, make_adapter, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    url = server.openai_url.replace("http://", f"http://me:{USERINFO_KEY}@")
    model = make_adapter("openai", base_url=url, api_key=None, model="missing", max_attempts=1)
    server.script(Turn(status=404, error="model not found"))
    with pytest.raises(ProviderError) as info:
        async for _ in model.stream(ask()):
            pass
    # The server still gets the credential, as Basic auth (what httpx did with userinfo).
    assert server.chat_requests()[-1].headers["authorization"].startswith("Basic ")
    # A connection that fails names the address, never the key.
    offline = make_adapter(
        "openai", base_url=f"http://me:{USERINFO_KEY}@127.0.0.1:9/v1", max_attempts=1
    )
    with pytest.raises(ProviderError) as refused:
        async for _ in offline.stream(ask()):
            pass
    assert "127.0.0.1:9" in str(refused.value)
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "HTTP Request" in logged, "httpx logged nothing, so nothing was checked"
    for text in (
        everything_about(info.value),
        everything_about(refused.value),
        repr(model),
        repr(offline),
        model.base_url,
        logged,
    ):
        assert "SECRET-5555" not in text and "sk-user" not in text, text


async def test_a_key_in_the_base_urls_query_never_shows(make_adapter, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    model = make_adapter("openai", base_url="http://127.0.0.1:9/v1?key=QUERYSECRET42")
    with pytest.raises(ProviderError) as info:
        await model.list_models()
    for text in (everything_about(info.value), repr(model)):
        assert "QUERYSECRET42" not in text, text


async def test_a_key_in_extra_headers_is_hidden_when_echoed(server, make_adapter) -> None:
    server.script(Turn(status=403, error="Token HEADERTOKEN-123456789 is not allowed"))
    model = make_adapter(
        "openai", headers={"X-Api-Token": "HEADERTOKEN-123456789"}, max_attempts=1
    )
    with pytest.raises(ProviderError) as info:
        async for _ in model.stream(ask()):
            pass
    assert "HEADERTOKEN" not in everything_about(info.value)
    assert "HEADERTOKEN" not in repr(model)


async def test_jsonl_records_never_contain_the_key(server, make_adapter, store, tmp_path) -> None:
    # A masked echo in an error event, stored as the partial's stop and the JSONL outcome.
    server.script(
        Turn(
            text="partial answer",
            chunk_size=4,
            fault=Fault.ERROR_EVENT,
            fault_after=3,
        ),
        Turn(status=400, error=f"key {ECHO_FORMS['masked']} rejected"),
    )
    records = tmp_path / "requests.jsonl"
    model = make_adapter("openai", api_key=GROQ_KEY, max_attempts=1)
    agent = await store.agent(model, extensions=[JSONLExtension(records)])
    with pytest.raises(ProviderError):
        await agent.run("hi")
    with pytest.raises(ProviderError):
        await agent.run("again")
    written = records.read_text()
    assert written.count("\n") == 2 and "[redacted]" in written
    assert not leaks(written) and "4321" not in written
    assert not leaks(repr(await store.history()))


@pytest.mark.parametrize("before", [0, 10, 60])
def test_a_spaced_echo_after_characters_whose_lower_case_is_longer_is_hidden(before) -> None:
    # "İ".lower() is two characters: spans found in text.lower() were cut from the text at
    # shifted places, and with 60 of them before it the spaced-out key survived whole.
    hidden = Redactor([GROQ_KEY])("İ" * before + " echo: " + " ".join(GROQ_KEY))
    assert hidden == "İ" * before + " echo: [redacted]"
    assert not leaks(hidden)


def test_a_large_text_is_redacted_with_memory_in_proportion() -> None:
    import tracemalloc

    # Before: an index per character and a piece per word (15 MB: +530 MB, 4 s of CPU).
    redact = Redactor([GROQ_KEY])
    text = "ab " * 5_000_000 + "echo " + " ".join(GROQ_KEY) + " word " + GROQ_KEY.upper()
    tracemalloc.start()
    try:
        hidden = redact(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert hidden.endswith("ab echo [redacted] word [redacted]")
    assert peak < 3 * len(text), f"{peak / len(text):.1f} bytes per character"


async def test_a_huge_error_event_is_quoted_short_and_hidden(server, make_adapter) -> None:
    import json

    message = f"Invalid key {GROQ_KEY}: " + "ab " * 2_000_000 + f" (key {GROQ_KEY})"
    body = b"data: " + json.dumps({"error": {"message": message}}).encode() + b"\n\n"
    server.script(Turn(body=body))
    model = make_adapter("openai", api_key=GROQ_KEY, max_attempts=1)
    with pytest.raises(ProviderError) as info:
        async for _ in model.stream(ask()):
            pass
    text = str(info.value)
    assert "Invalid key [redacted]" in text and len(text) < 600, len(text)
    assert not leaks(everything_about(info.value))


async def test_a_key_after_a_long_redacted_value_is_still_hidden(server, make_adapter) -> None:
    # Only a head of a long message is redacted; a long key=value before the key shrinks
    # to "[redacted]", so the head must grow until the quoted part is settled.
    server.script(Turn(status=400, error="token=" + "v" * 5000 + " then " + GROQ_KEY + " x" * 400))
    model = make_adapter("openai", api_key=GROQ_KEY, max_attempts=1)
    with pytest.raises(ProviderError) as info:
        async for _ in model.stream(ask()):
            pass
    assert "token=[redacted] then [redacted]" in str(info.value)
    assert not leaks(everything_about(info.value))


async def test_a_query_key_echoed_on_its_own_is_hidden(make_adapter) -> None:
    # Before: the ?key= value was hidden only as "key=value"; echoed alone (as servers
    # quote the key they refused) it showed, since it was not a configured secret.
    model = make_adapter("openai", base_url="http://127.0.0.1:9/v1?key=QUERYSECRET-0123456789")
    error = model._status_error(400, "API key QUERYSECRET-0123456789 is not valid", {})
    assert "QUERYSECRET" not in everything_about(error)
    assert "API key [redacted] is not valid" in str(error)


@pytest.mark.parametrize("where", ["userinfo", "api_key"])
async def test_an_echoed_authorization_header_and_base64_forms_of_the_key_never_show(
    server, make_adapter, protocol, where
) -> None:
    """A server echoing the credential headers it got (Basic for a key in the base URL's
    userinfo, Bearer / x-api-key for a configured key), and the key in base64 at every
    alignment: nothing of the key is left readable, in any language."""
    import base64

    from tests.support.provider_server import echoing_credentials

    server.default = echoing_credentials(400)
    if where == "userinfo":
        base = {"openai": server.openai_url, "anthropic": server.anthropic_url}.get(
            protocol, server.ollama_url
        )
        url = base.replace("http://", f"http://me:{USERINFO_KEY}@")
        model = make_adapter(protocol, base_url=url, api_key=None, max_attempts=1)
        key, sent = USERINFO_KEY, f"me:{USERINFO_KEY}"
    else:
        model = make_adapter(protocol, max_attempts=1)
        key, sent = SECRET_KEY, SECRET_KEY
    with pytest.raises(ProviderError) as info:
        async for _ in model.stream(ask()):
            pass
    # The server did get the credential (userinfo as Basic auth, as httpx sends it).
    headers = server.chat_requests()[-1].headers
    got = headers.get("authorization") or headers.get("x-api-key") or ""
    if got.startswith("Basic "):
        got = base64.b64decode(got.split()[-1]).decode()
    assert key in got
    error = info.value
    echoed = str(error)
    assert "Refused. You sent" in echoed, "the server's words are quoted"
    forms = {
        base64.b64encode(sent.encode()).decode(),
        base64.b64encode(key.encode()).decode(),
        base64.b64encode(b"k=" + key.encode()).decode(),
        base64.urlsafe_b64encode(b"x" + key.encode()).decode(),
    }
    for text in (everything_about(error), error.sentence("zh_CN")):
        assert key not in text and key[-12:] not in text
        for form in forms:
            assert form.rstrip("=")[4:-4] not in text, (form, text)
    assert "[redacted]" in echoed


def test_basic_credentials_are_hidden_without_any_secret_and_words_are_not() -> None:
    import base64

    redact = Redactor()
    pair = base64.b64encode(b"me:pw").decode()
    assert redact(f"Authorization: Basic {pair}") == "Authorization: Basic [redacted]"
    assert redact(f'{{"authorization": "basic {pair}"}}') == '{"authorization": "basic [redacted]"}'
    for words in ("Basic usage of the API", "Basic auth is off", "basic QUJD (ABC, no colon)"):
        assert redact(words) == words
