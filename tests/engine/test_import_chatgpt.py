"""ChatGPT's data export read into Continuo's tree (`engine.archive.chatgpt`).

The reader is pure: these tests feed it real exports (tests/engine/chatgpt_exports/SOURCES.md)
and files made from the schema, and check what it yields; one test stores the result in a
real SQLite file and reads it back.
"""

from __future__ import annotations

import io
import json
import tracemalloc
import zipfile
from pathlib import Path
from typing import Any

import pytest

from engine.archive import import_file
from engine.archive._guard import MAX_DEPTH
from engine.archive.chatgpt import read_conversations
from engine.archive.records import ImportedConversation, ImportSkip
from engine.errors import ArchiveError
from engine.messages import AssistantMessage, SystemMessage, ToolMessage, UserMessage
from engine.sentences import Phrase
from engine.storage.sqlite import SQLiteSessionStorage
from tests.engine.archive_helpers import snapshot

FIXTURES = Path(__file__).parent / "chatgpt_exports"

Item = ImportedConversation | ImportSkip


def _bytes(name: str) -> bytes:
    data = (FIXTURES / name).read_bytes()
    # A fixture holding a single conversation (an object) is wrapped: an export is a list.
    return b"[" + data + b"]" if data.lstrip()[:1] == b"{" else data


def _read(data: bytes) -> list[Item]:
    return list(read_conversations(io.BytesIO(data), name="test.json"))


def _raw(name: str) -> list[dict[str, Any]]:
    value = json.loads(_bytes(name))
    assert isinstance(value, list)
    return value


def _by_title(items: list[Item]) -> dict[str | None, Item]:
    return {item.title: item for item in items}


def _conv(item: Item) -> ImportedConversation:
    assert isinstance(item, ImportedConversation), item
    return item


def _path(conv: ImportedConversation) -> list[int]:
    parents = {m.seq: m.parent_seq for m in conv.messages}
    path, seq = [], conv.active_seq
    while seq is not None:
        path.append(seq)
        seq = parents[seq]
    return path[::-1]


def _ids(conv: ImportedConversation, seqs: list[int]) -> list[str]:
    by_seq = {m.seq: m.message.id for m in conv.messages}
    return [by_seq[s] for s in seqs]


def _check_tree(conv: ImportedConversation) -> None:
    """Continuo's invariants: seq 1..n parents first, unique ids, an active leaf that is a
    message, nothing that Resume could take for a tool to run."""
    assert [m.seq for m in conv.messages] == list(range(1, len(conv.messages) + 1))
    for m in conv.messages:
        assert m.parent_seq is None or 1 <= m.parent_seq < m.seq
        assert not isinstance(m.message, ToolMessage)
        if isinstance(m.message, AssistantMessage):
            assert m.message.tool_calls == () and m.message.stop is None
    assert len({m.message.id for m in conv.messages}) == len(conv.messages)
    assert conv.active_seq in {m.seq for m in conv.messages}
    assert conv.source == "chatgpt"
    assert conv.metadata["imported_from"] == "chatgpt"
    assert "model" not in conv.metadata and "provider_id" not in conv.metadata


def _raw_active_ids(raw: dict[str, Any], stored: set[str]) -> list[str]:
    """The ids on ChatGPT's own path to ``current_node`` that were stored, root first."""
    mapping, node, out = raw["mapping"], raw.get("current_node"), []
    while node is not None:
        if node in stored:
            out.append(node)
        node = mapping[node].get("parent")
    return out[::-1]


REAL = [
    "librechat_export_2023-10_2024-01.json",
    "librechat_tree_2024-05.json",
]


@pytest.mark.parametrize("name", [*REAL, "edge_cases.json"])
def test_every_fixture_reads_as_trees_whose_active_path_is_chatgpts(name: str) -> None:
    items = _read(_bytes(name))
    raws = {r.get("conversation_id") or r.get("id"): r for r in _raw(name)}
    assert len(items) == len(_raw(name))
    for item in items:
        if isinstance(item, ImportSkip):
            continue
        _check_tree(item)
        raw = raws[item.source_id]
        assert item.title == raw["title"].replace("\udc00", "\ufffd")
        assert item.created_at == raw["create_time"]
        stored = {m.message.id for m in item.messages}
        assert stored <= set(raw["mapping"])  # message ids are ChatGPT's node ids
        if raw.get("current_node") in raw["mapping"]:
            assert _ids(item, _path(item)) == _raw_active_ids(raw, stored)
        for m in item.messages:  # times kept; a null time is the parent's (or the start's)
            node = raw["mapping"][m.message.id]["message"]
            if node.get("create_time"):
                assert m.message.created_at == node["create_time"]


def test_an_export_of_2023_and_2024_with_browsing() -> None:
    web, old = (_conv(i) for i in _read(_bytes("librechat_export_2023-10_2024-01.json")))
    raw = _raw("librechat_export_2023-10_2024-01.json")[0]["mapping"]
    # The hidden system prompt and the null root are not stored: the question is the root.
    assert [m.parent_seq for m in web.messages] == [None, *range(1, 15)]
    assert web.active_seq == 15 and web.placeholders == 0
    kinds = [type(m.message) for m in web.messages]
    assert kinds.count(UserMessage) == 3 and kinds.count(AssistantMessage) == 12
    call, output, quote = (web.messages[i].message.content for i in (1, 2, 4))
    assert call == (
        "*Called the tool `browser`:*\n\n"
        '```\nsearch("Volkswagen Transporter fuel consumption with 8 people l/km")\n```'
    )
    assert output.startswith("*Output of the tool `browser`:*\n\n```\n# 【0†Volkswagen")
    assert output.endswith("Visible: 0% - 100%\n```")
    assert quote.startswith("*Output of the tool `browser`:*\n\n[2021 Volkswagen Transporter")
    assert "\n\n> " in quote
    answer = web.messages[6].message
    assert isinstance(answer, AssistantMessage) and answer.model == "gpt-4"
    assert answer.content == raw[answer.id]["message"]["content"]["parts"][0]  # verbatim
    assert web.metadata == {"imported_from": "chatgpt", "imported_model": "gpt-4"}

    # October 2023: no default_model_slug, the model of the answers instead; code verbatim.
    assert old.metadata == {
        "imported_from": "chatgpt",
        "imported_model": "text-davinci-002-render-sha",
    }
    reply = old.messages[3].message
    assert "```csharp\nusing System;" in reply.content
    raw_old = _raw("librechat_export_2023-10_2024-01.json")[1]["mapping"]
    assert reply.content == raw_old[reply.id]["message"]["content"]["parts"][0]


def test_branches_keep_every_version_and_show_the_current_one() -> None:
    (item,) = _read(_bytes("librechat_tree_2024-05.json"))
    conv = _conv(item)
    children: dict[int | None, list[int]] = {}
    for m in conv.messages:
        children.setdefault(m.parent_seq, []).append(m.seq)
    assert len(conv.messages) == 11
    assert children[2] == [3, 7]  # the edited question: two versions under the first answer
    assert children[9] == [10, 11]  # the regenerated joke
    assert _path(conv) == [1, 2, 7, 8, 9, 11]  # current_node is the second joke
    assert conv.messages[10].message.id == "f63b8e17-aa5c-4ca6-a1bf-d4d285e269b8"
    # An answer the person stopped is history, not a response Resume would redo.
    story = conv.messages[5].message
    assert isinstance(story, AssistantMessage) and story.stop is None
    assert story.content.endswith("nestled between rolling")


def test_a_real_excerpt_with_a_missing_parent_is_skipped_with_a_reason() -> None:
    (item,) = _read(_bytes("librechat_citations_2024-02.json"))
    assert isinstance(item, ImportSkip)
    assert item.title == "Citation Convo"
    assert item.source_id == "d6523d1e-7ec3-474f-a363-0e9dffdb3d93"
    assert "names a parent ('5cc5e87b-2b74-485a-b3a7-23cb25f202db')" in item.reason
    assert "not in the conversation" in item.reason


# ---------------------------------------------------------------------------- edge cases


@pytest.fixture(scope="module")
def edge() -> dict[str | None, Item]:
    return _by_title(_read(_bytes("edge_cases.json")))


def test_an_edited_first_question_is_two_roots(edge: dict[str | None, Item]) -> None:
    conv = _conv(edge["Edited question"])
    assert [(m.seq, m.parent_seq, m.message.id) for m in conv.messages] == [
        (1, None, "edit-u1"),
        (2, 1, "edit-a1"),
        (3, None, "edit-u2"),
        (4, 3, "edit-a2"),
        (5, 4, "edit-u3"),
        (6, 5, "edit-a3"),
    ]
    assert conv.active_seq == 6
    assert conv.messages[5].message.content == "Since **1913**."
    assert conv.metadata == {"imported_from": "chatgpt", "imported_model": "gpt-4o"}
    assert (conv.created_at, conv.updated_at) == (1_700_000_000.0, 1_700_000_600.0)


def test_media_placeholders(edge: dict[str | None, Item]) -> None:
    conv = _conv(edge["Picture, PDF and voice"])
    texts = [m.message.content for m in conv.messages]
    assert texts[0] == (
        "What is in this picture? And summarise the PDF.\n\n"
        "[Image not found in the export: file-abc (1024×768)]\n"
        "[Attachment not imported: report.pdf]"
    )
    assert texts[2] == "Draw the cat, please.\n\n[Audio not imported: file_audio1]"
    assert (
        texts[3] == '*Called the tool `dalle.text2im`:*\n\n```\n{"prompt": "a cat on a sofa"}\n```'
    )
    assert texts[4] == (
        "*Output of the tool `dalle.text2im`:*\n\n[Image not imported: file_img2 (1024×1024)]"
    )
    assert texts[5] == '[Content of type "app_pairing_content" not imported]'
    assert conv.placeholders == 5
    # a bare conversations.json holds no pictures: the user's one is counted as not found;
    # the tool's picture is not the person's and is not looked for
    assert (conv.missing_pictures, conv.pictures) == (1, ())


def test_system_prompt_tools_code_and_null_times(edge: dict[str | None, Item]) -> None:
    conv = _conv(edge["Tools and code"])
    assert conv.source_id == "conv-tools"  # only "id", as older exports have
    kinds = [type(m.message) for m in conv.messages]
    assert kinds == [
        SystemMessage,
        UserMessage,
        *[AssistantMessage] * 3,
        UserMessage,
        AssistantMessage,
    ]
    texts = [m.message.content for m in conv.messages]
    assert texts[0] == "You are ChatGPT. Answer briefly."
    assert texts[2] == (
        "*Called the tool `python`:*\n\n```python\nimport math\nprint(math.sin(1))\n```"
    )
    assert texts[3] == "*Output of the tool `python`:*\n\n```\n0.8414709848078965\n```"
    assert texts[4] == "sin(1) ≈ 0.841. In Python:\n\n```python\nimport math\nmath.sin(1)\n```"
    # A code answer is a fenced block, its fence longer than the backticks inside it.
    assert texts[6] == "````python\nprint(math.cos(1))  # ``` inside\n````"
    times = [m.message.created_at for m in conv.messages]
    assert times[0] == 1_700_002_000.0  # null: the conversation's start
    assert times[5] == times[6] == times[4] == 1_700_002_004.0  # null: the parent's
    assert conv.metadata["imported_model"] == "gpt-4"  # no default_model_slug: the answers'
    assert all(m.message.model == "gpt-4" for m in conv.messages[2:5])  # type: ignore[union-attr]


def test_broken_conversations_are_skipped_among_good_ones(edge: dict[str | None, Item]) -> None:
    skips = {i.title: i for i in edge.values() if isinstance(i, ImportSkip)}
    assert skips["Broken: missing parent"].reason == (
        "Its message 'bp-a1' names a parent ('bp-ghost') that is not in the conversation."
    )
    assert (
        skips["Broken: loop"].reason == "Its messages 'bl-a', 'bl-b' have parents that form a loop."
    )
    assert skips["Broken: message not an object"].reason == (
        "The message of its node 'bm-u1' is not an object."
    )
    assert (
        skips["Only hidden"].reason == "It has no messages to import (only hidden or empty ones)."
    )
    assert skips["No id"] == ImportSkip("No id", None, "It has no conversation id.")
    assert skips["No tree"].source_id == "conv-notree"
    assert sum(isinstance(i, ImportedConversation) for i in edge.values()) == 6


def test_chinese_emoji_surrogates_and_nul(edge: dict[str | None, Item]) -> None:
    conv = _conv(edge["中文与表情 🎉\ufffd"])  # the title was cut mid-emoji
    assert conv.messages[0].message.content == "你好！请用中文回答 😀"
    assert conv.messages[1].message.content == "当然可以 🎉🎉 截断的表情：\ufffd 空字符：A\x00B"


def test_reasoning_goes_with_its_answer(edge: dict[str | None, Item]) -> None:
    conv = _conv(edge["Thinking"])
    answer, recap_only = conv.messages[1].message, conv.messages[3].message
    assert isinstance(answer, AssistantMessage) and isinstance(recap_only, AssistantMessage)
    assert answer.reasoning == "**Checking divisors**\n\nTry the primes up to 31: none divides it."
    assert answer.model == "gpt-5-thinking"
    assert recap_only.reasoning == "Thought for 2s"  # all ChatGPT kept of it
    # The last question's thinking has no answer: not stored, counted; it was current_node,
    # so the question it follows ends the shown path.
    assert len(conv.messages) == 5 and conv.active_seq == 5
    assert conv.metadata["imported_reasoning_dropped"] == 1


def test_without_current_node_the_newest_leaf_is_shown(edge: dict[str | None, Item]) -> None:
    conv = _conv(edge["No current node"])
    assert [m.message.content for m in conv.messages] == ["Pick a number.", "7", "42"]
    assert conv.active_seq == 2  # "7" is the newer answer


# ---------------------------------------------------------------------------- the file


class _Unseekable(io.RawIOBase):
    """A pipe-like stream: it can only be read forward."""

    def __init__(self, data: bytes) -> None:
        self._inner = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._inner.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def _summary(items: list[Item]) -> list[tuple[Any, ...]]:
    return [
        (i.title, i.active_seq, [(m.seq, m.parent_seq, m.message) for m in i.messages])
        if isinstance(i, ImportedConversation)
        else i
        for i in items
    ]


@pytest.mark.parametrize("folder", ["", "ChatGPT export 2025-06-01/"])
def test_a_zip_export_is_read_in_place(tmp_path: Path, folder: str) -> None:
    data = _bytes("librechat_tree_2024-05.json")
    path = _zip(
        tmp_path / "export.zip",
        {"chat.html": b"<html></html>", "user.json": b"{}", f"{folder}conversations.json": data},
    )
    with path.open("rb") as file:
        from_zip = list(read_conversations(file))
    assert _summary(from_zip) == _summary(_read(data))
    # A stream that cannot seek (a download in progress) works too, in reads of any size.
    piped = list(read_conversations(io.BufferedReader(_Unseekable(path.read_bytes()))))
    assert _summary(piped) == _summary(from_zip)
    trickled = list(read_conversations(_Trickle(path.read_bytes(), 3)))  # type: ignore[arg-type]
    assert _summary(trickled) == _summary(from_zip)


def test_an_unseekable_json_stream_is_read() -> None:
    data = _bytes("edge_cases.json")
    piped = list(read_conversations(io.BufferedReader(_Unseekable(data))))
    assert _summary(piped) == _summary(_read(data))


def _error(data: bytes) -> ArchiveError:
    with pytest.raises(ArchiveError) as caught:
        _read(data)
    return caught.value


def _problem(error: ArchiveError) -> str:
    problem = error.params["problem"]
    assert isinstance(problem, Phrase)
    return problem.key


def test_files_that_are_not_an_export_raise_naming_the_problem(tmp_path: Path) -> None:
    text = _error(b"Dear diary, today I talked to ChatGPT.")
    assert text.key == "archive.chatgpt_not_export" and _problem(text) == "archive.chatgpt.not_json"
    assert str(text) == (
        "The file test.json is not a ChatGPT data export: it is neither a zip archive nor "
        "JSON. Nothing was imported; choose the .zip the export came as, or the "
        "conversations.json inside it."
    )
    assert "它既不是 zip 压缩包，也不是 JSON" in text.sentence("zh_CN")
    obj = _error(b'  {"format": "continuo-export"}')
    assert obj.key == "archive.chatgpt_not_export" and _problem(obj) == "archive.chatgpt.not_list"
    claude = _error(json.dumps([{"uuid": "x", "name": "Hi", "chat_messages": []}]).encode())
    assert _problem(claude) == "archive.chatgpt.not_conversation"
    assert _error(b"").key == "archive.empty"
    assert _error(b"\xef\xbb\xbf \n\t").key == "archive.empty"
    damaged = _error(b'[{"mapping": {}, ')
    assert damaged.key == "archive.damaged" and damaged.path == "test.json"

    bare = _zip(tmp_path / "other.zip", {"chat.html": b"<html></html>"})
    with bare.open("rb") as file, pytest.raises(ArchiveError) as caught:
        list(read_conversations(file))
    assert caught.value.key == "archive.zip_without_conversations"
    assert caught.value.path == str(bare)
    assert _error(b"PK\x03\x04 this is no zip at all").key == "archive.bad_zip"


def test_json_that_breaks_off_after_a_conversation_ends_with_a_skip() -> None:
    data = _bytes("librechat_tree_2024-05.json")
    two = b"[" + data.strip()[1:-1] + b"," + data.strip()[1:-1][:5000]
    first, last = _read(two)
    assert isinstance(first, ImportedConversation)
    assert isinstance(last, ImportSkip) and last.title is None
    assert last.reason.startswith("The rest of the file could not be read")
    assert "after conversation 1" in last.reason


def test_an_empty_export_yields_nothing() -> None:
    assert _read(b"[]") == [] and _read(b"\xef\xbb\xbf[\n]") == []


class _Trickle(io.RawIOBase):
    """A stream that hands out at most ``step`` bytes a read (as a socket may)."""

    def __init__(self, data: bytes, step: int) -> None:
        self._inner, self._step = io.BytesIO(data), step

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        return self._inner.read(self._step if size < 0 else min(size, self._step))


@pytest.mark.parametrize("step", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 17, 1 << 16])
def test_surrogate_escapes_are_fixed_whatever_the_reads(step: int) -> None:
    """Wherever a read ends, a pair stays a pair, a lone half becomes U+FFFD and an escaped
    backslash before "ud83d" stays text (the fast parser fails on a lone low half)."""
    tail = r"\ud83d\ude00 \ud83d! \ude00? \\ud83d \\\ud83d\ude00 \\\udc00 \udbff\udfff"
    expect = "\U0001f600 \ufffd! \ufffd? \\ud83d \\\U0001f600 \\\ufffd \U0010ffff"
    data = json.dumps(
        [{"id": "c", "mapping": {"u": {"parent": None, "message": {
            "author": {"role": "user"}, "content": {"content_type": "text", "parts": ["@"]}}}}}]
    ).encode().replace(b"@", tail.encode())  # fmt: skip
    (conv,) = read_conversations(_Trickle(data, step))  # type: ignore[arg-type]
    assert _conv(conv).messages[0].message.content == expect


# ---------------------------------------------------------------------------- nesting


def _conversation_with_parts(cid: str, parts: str) -> str:
    """One conversation of one user message whose ``parts`` is the JSON text `parts`."""
    node = {"id": "u", "parent": None, "children": [], "message": {
        "author": {"role": "user"}, "create_time": 1.7e9,
        "content": {"content_type": "text", "parts": ["@"]}}}  # fmt: skip
    conversation = {"id": cid, "title": cid, "mapping": {"u": node}}
    return json.dumps(conversation).replace('["@"]', parts)


def _nested(levels: int) -> str:
    return "[" * levels + "]" * levels


async def _import_measured(storage: SQLiteSessionStorage, path: Path) -> tuple[Any, int]:
    """What importing `path` raises (or returns), and the peak of Python's memory meanwhile."""
    tracemalloc.start()
    try:
        try:
            outcome: Any = await import_file(storage, path)
        except ArchiveError as exc:
            outcome = exc
        return outcome, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    "parts",
    [
        _nested(5_000),  # ijson would hold 60 MB of prefixes for it, 1 GB at 20,000 levels
        # 100 objects whose keys are 4 KB each: ijson holds each key once per level below it
        "[" + ('{"' + "k" * 4_000 + '": ') * 100 + "1" + "}" * 100 + "]",
    ],
    ids=["deep", "long keys"],
)
async def test_a_too_deeply_nested_export_is_refused_in_little_memory(
    tmp_path: Path, parts: str
) -> None:
    storage = SQLiteSessionStorage(tmp_path / "continuo.sqlite3")
    try:
        await storage.append("mine", "r", UserMessage(content="keep me"))
        before = snapshot(storage.path)
        path = tmp_path / "conversations.json"
        path.write_text(f"[{_conversation_with_parts('deep', parts)}]")
        error, peak = await _import_measured(storage, path)
        assert isinstance(error, ArchiveError), error
        assert error.key == "archive.too_deep" and error.path == str(path)
        assert str(error).startswith(f"The file {path} is nested too deeply to be read: ")
        assert str(error).endswith("Nothing was imported.")
        assert f"文件 {path} 嵌套过深" in error.sentence("zh_CN")
        assert snapshot(storage.path) == before
        assert peak < 4_000_000, f"peak {peak} bytes"
    finally:
        await storage.close()


async def test_nesting_after_good_conversations_ends_the_import_with_a_skip(tmp_path: Path) -> None:
    """Like JSON that breaks off: what came before is imported, the rest is one skip."""
    good = [_conversation_with_parts(f"good{n}", json.dumps(["x" * 1000])) for n in range(80)]
    deep = _conversation_with_parts("deep", _nested(MAX_DEPTH + 1))
    path = tmp_path / "conversations.json"
    path.write_text("[" + ",".join([*good, deep]) + "]")  # the deep part past the first read
    storage = SQLiteSessionStorage(tmp_path / "continuo.sqlite3")
    try:
        report = await import_file(storage, path)
        assert report.imported == 80
        ((name, reason),) = report.skipped
        assert reason.startswith(
            "The rest of the file could not be read: after conversation 80, it is nested too "
            f"deeply (its lists and objects are nested more than {MAX_DEPTH} levels deep, "
            "around byte "
        )
    finally:
        await storage.close()


@pytest.mark.parametrize("step", [1, 2, 3, 5, 7, 11, 13, 1 << 16])
def test_brackets_in_strings_do_not_count_and_real_ones_do_whatever_the_reads(step: int) -> None:
    """Brackets inside strings (after escaped quotes and backslashes, too) are text; the
    guard follows strings across reads of any size."""
    text = '\\"' + "[" * 300 + "\\\\" + "{" * 300 + '\\\\\\"' + "[" * 300
    parts = json.dumps([json.loads(f'"{text}"')], ensure_ascii=False)
    data = f"[{_conversation_with_parts('c', parts)}]".encode()
    (conv,) = read_conversations(_Trickle(data, step))  # type: ignore[arg-type]
    assert _conv(conv).messages[0].message.content == json.loads(f'"{text}"')

    # The parts list is 6 levels down (export, conversation, mapping, node, message, content).
    at_limit = f"[{_conversation_with_parts('c', _nested(MAX_DEPTH - 6))}]".encode()
    assert len(list(read_conversations(_Trickle(at_limit, step)))) == 1  # type: ignore[arg-type]
    over = f"[{_conversation_with_parts('c', _nested(MAX_DEPTH - 5))}]".encode()
    with pytest.raises(ArchiveError) as caught:
        list(read_conversations(_Trickle(over, step)))  # type: ignore[arg-type]
    assert caught.value.key == "archive.too_deep"
    where = over.index(b"[" * 10) + MAX_DEPTH - 6  # the bracket one level too deep
    assert caught.value.sentence("en") == (
        "The file conversations.json is nested too deeply to be read: its lists and objects "
        f"are nested more than {MAX_DEPTH} levels deep (around byte {where:,}). "
        "Nothing was imported."
    )


# ---------------------------------------------------------------------------- size


def _big_export(path: Path, size: int) -> int:
    """Write an export of about ``size`` bytes, conversation by conversation."""
    count = 0
    with path.open("wb") as file:
        file.write(b"[")
        while file.tell() < size:
            nodes: dict[str, Any] = {"r": {"id": "r", "message": None, "parent": None}}
            parent = "r"
            for j in range(10):
                node = f"c{count}-{j}"
                text = f"Message {j} of conversation {count} 😀 " * 120
                nodes[node] = {
                    "id": node,
                    "parent": parent,
                    "children": [],
                    "message": {
                        "author": {"role": "user" if j % 2 == 0 else "assistant"},
                        "create_time": 1.7e9 + j,
                        "content": {"content_type": "text", "parts": [text]},
                        "metadata": {"model_slug": "gpt-4o"},
                        "recipient": "all",
                    },
                }
                parent = node
            conversation = {"title": f"c{count}", "mapping": nodes, "id": f"c{count}"}
            file.write((b"," if count else b"") + json.dumps(conversation).encode())
            count += 1
        file.write(b"]")
    return count


def test_a_30_mb_export_is_streamed_not_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    count = _big_export(path, 30_000_000)
    size = path.stat().st_size
    tracemalloc.start()
    try:
        seen = messages = 0
        with path.open("rb") as file:
            for item in read_conversations(file):
                seen += 1
                messages += len(_conv(item).messages)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (seen, messages) == (count, count * 10)
    assert peak < size / 20, f"peak {peak} bytes for a {size}-byte file"


# ---------------------------------------------------------------------------- storage


async def test_stored_in_sqlite_the_active_path_and_the_versions_show(tmp_path: Path) -> None:
    storage = SQLiteSessionStorage(tmp_path / "continuo.sqlite3")
    try:
        items = [
            *_read(_bytes("librechat_tree_2024-05.json")),
            *_read(_bytes("edge_cases.json")),
        ]
        sessions: dict[str | None, str] = {}
        for item in items:
            if isinstance(item, ImportedConversation):
                sid = await storage.import_conversation(item)
                assert sid is not None
                sessions[item.title] = sid
        # A second import of the same export adds nothing.
        assert await storage.import_conversation(_conv(items[0])) is None

        tree = sessions["Assist user with summary"]
        history = await storage.load(tree)
        assert [m.id[:8] for m in history] == [
            "aaa297ba", "bda8a275", "aaa236a3", "db88eddf", "aaa20127", "f63b8e17",
        ]  # fmt: skip
        assert await storage.siblings(tree, "aaa236a3-cdfc-4eb1-b5c5-790c6641f880") == [
            "aaa24023-b02f-4d49-b568-5856b41750c0",
            "aaa236a3-cdfc-4eb1-b5c5-790c6641f880",
        ]
        assert await storage.siblings(tree, "f63b8e17-aa5c-4ca6-a1bf-d4d285e269b8") == [
            "d0d2a7df-d2fc-4df9-bf0a-1c5121e227ae",
            "f63b8e17-aa5c-4ca6-a1bf-d4d285e269b8",
        ]
        edited = sessions["Edited question"]
        assert [m.id for m in await storage.load(edited)] == [
            "edit-u2",
            "edit-a2",
            "edit-u3",
            "edit-a3",
        ]
        assert await storage.siblings(edited, "edit-u2") == ["edit-u1", "edit-u2"]

        info = await storage.get_session(edited)
        assert info is not None and info.title == "Edited question"
        assert info.metadata == {"imported_from": "chatgpt", "imported_model": "gpt-4o"}
        zh = await storage.load(sessions["中文与表情 🎉\ufffd"])
        assert zh[1].content == "当然可以 🎉🎉 截断的表情：\ufffd 空字符：A\x00B"  # type: ignore[attr-defined]
        thinking = await storage.load(sessions["Thinking"])
        assert thinking[1].reasoning.startswith("**Checking divisors**")  # type: ignore[attr-defined]
    finally:
        await storage.close()
