"""The transcript of one conversation as a Qt list model, fed by stored messages and events.

Rows are `TranscriptItem`s: a user message, an assistant answer (text, reasoning, how it
stopped), a tool card (name, arguments, state, result) or a notice (a resume or goal message
from the runtime, shown as a small divider). ``Qt.DisplayRole`` is the row's text;
`KIND_ROLE`, `STATE_ROLE` and `ITEM_ROLE` give its kind, its state and the item itself.

The model folds a request's `AgentEvent`s into rows (`apply_event`)::

    MODEL_STARTED ─► live answer row (STREAMING) ─► TEXT/REASONING deltas grow it
    MESSAGE_APPENDED(assistant) ─► the live row becomes the stored message (DONE or its stop)
                                   + one PENDING tool card per tool call
    TOOL_STARTED ─► card RUNNING ─► TOOL_COMPLETED | TOOL_FAILED ─► card DONE | FAILED | DENIED
    (between them `ui.tools.approvals` may hold a card in AWAITING_APPROVAL: `ask_approval`,
    then `end_approval` with RUNNING, DENIED or NOT_RUN)
    request cancelled ─► `finish_request(stopped=True)`: live row STOPPED, a running card
                         INTERRUPTED, a card that never started NOT_RUN
    request failed ─► `finish_request(stopped=False, saved=False)`: a live row the events did
                      not close was not stored: INTERRUPTED and not saved

Deltas are kept as a list of pieces and joined on demand, so a long answer costs time in
proportion to its length. A delta does not emit ``dataChanged`` by itself: the streaming
row's change is announced once per turn of the event loop (a zero-time timer), however
many deltas the turn folded in — at thousands of tokens a second, a signal per token was
the window's largest single cost. Every other change is announced at once, after any
pending one, so views see changes in order. Older history is put in front with `prepend_records` as the
person scrolls up; `first_seq` says where to continue.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, ClassVar

from PySide6.QtCore import QModelIndex, QObject, Qt, QTimer

from engine import (
    MAX_TOOL_CALLS_PER_ANSWER,
    AgentEvent,
    AgentEventType,
    AssistantMessage,
    InternalMessage,
    Message,
    StopInfo,
    StopReason,
    StoredMessage,
    SystemMessage,
    ToolCall,
    ToolInfo,
    ToolMessage,
    ToolOutcome,
    UserMessage,
    describe_stop,
)
from engine import ToolEffect as EngineToolEffect

from ..common.i18n import engine_language
from ..common.list_model import RowsModel
from ..common.markdown import tooltip_text
from .items import (
    ITEM_ROLE,
    KIND_ROLE,
    STATE_ROLE,
    ApprovalQuestion,
    ItemKind,
    ItemState,
    ToolEffect,
    ToolHints,
    TranscriptItem,
)

__all__ = [
    "ITEM_ROLE",
    "KIND_ROLE",
    "STATE_ROLE",
    "ItemKind",
    "ItemState",
    "TranscriptItem",
    "TranscriptModel",
]


_STOP_STATES = {
    StopReason.MAX_OUTPUT: ItemState.TRUNCATED,
    StopReason.CONTEXT_FULL: ItemState.CONTEXT_FULL,
    StopReason.REFUSAL: ItemState.REFUSED,
    StopReason.PAUSED: ItemState.PAUSED,
    StopReason.OTHER: ItemState.OTHER,
}


def _state_for_stop(stop: StopInfo | None) -> ItemState:
    if stop is None or stop.ok:
        return ItemState.DONE
    if stop.reason is StopReason.INTERRUPTED:
        return ItemState.STOPPED if stop.cancelled else ItemState.INTERRUPTED
    return _STOP_STATES.get(stop.reason, ItemState.OTHER)


# A card's state for each way a tool call ended (the engine's `ToolOutcome`, never its words).
_TOOL_STATES = {
    ToolOutcome.OK: ItemState.DONE,
    ToolOutcome.FAILED: ItemState.FAILED,
    ToolOutcome.DECLINED: ItemState.DENIED,
    ToolOutcome.INTERRUPTED: ItemState.INTERRUPTED,
    ToolOutcome.NOT_RUN: ItemState.NOT_RUN,
}


def _tool_state(result: ToolMessage) -> ItemState:
    if result.outcome is None:  # not built through ToolMessage's own defaults
        return ItemState.DONE if result.success else ItemState.FAILED
    return _TOOL_STATES.get(result.outcome, ItemState.FAILED)


def _arguments_text(arguments: Any) -> str:
    try:
        return json.dumps(arguments, ensure_ascii=False, indent=1)
    except (TypeError, ValueError):
        return str(arguments)


def _label(card: TranscriptItem, info: ToolInfo | None) -> None:
    """Put what the call's tool says of itself (kept with the call) on its card."""
    if info is None:
        return
    card.tool_remote, card.tool_server, card.tool_title = info.tool, info.server, info.title
    effect = info.effect
    card.tool_effect = ToolEffect(effect.value)
    if info.read_only is True and effect is not EngineToolEffect.READ_ONLY:
        card.tool_hints = ToolHints.CONTRADICTORY
    elif info.read_only is None and info.destructive is None and info.idempotent is None:
        card.tool_hints = ToolHints.SILENT
    else:
        card.tool_hints = ToolHints.SAID


def _tool_card(call: ToolCall, state: ItemState, seq: int | None, key: str) -> TranscriptItem:
    card = TranscriptItem(
        ItemKind.TOOL,
        key,
        state,
        tool_call_id=call.id,
        tool_name=call.name,
        tool_arguments=_arguments_text(call.arguments),
        seq=seq,
    )
    _label(card, call.info)
    return card


def _folded(calls: Sequence[ToolCall], seq: int | None, key: str) -> TranscriptItem:
    return TranscriptItem(
        ItemKind.FOLDED_CALLS,
        key,
        ItemState.PENDING,
        folded_ids={call.id for call in calls},
        folded_total=len(calls),
        folded_names=list(dict.fromkeys(call.name for call in calls)),
        seq=seq,
    )


def _cards_for(message: AssistantMessage, seq: int | None) -> list[TranscriptItem]:
    """The rows of an answer's calls: a card each for those that may run, and one row for
    all the calls past the cap (they never run; thousands of cards would freeze the window)."""
    calls = message.tool_calls
    rows = [
        _tool_card(call, ItemState.PENDING, seq, f"tool:{message.id}:{index}")
        for index, call in enumerate(calls[:MAX_TOOL_CALLS_PER_ANSWER])
    ]
    if len(calls) > MAX_TOOL_CALLS_PER_ANSWER:
        rows.append(_folded(calls[MAX_TOOL_CALLS_PER_ANSWER:], seq, f"folded:{message.id}"))
    return rows


def _answer_card(card: TranscriptItem, result: ToolMessage) -> None:
    card.tool_result = result.content
    card.state = _tool_state(result)
    card.approval = None


def _fold_result(row: TranscriptItem, result: ToolMessage) -> None:
    outcome = str(result.outcome or (ToolOutcome.OK if result.success else ToolOutcome.FAILED))
    row.folded_outcomes[outcome] = row.folded_outcomes.get(outcome, 0) + 1
    _settle_folded(row)


def _settle_folded(row: TranscriptItem, unanswered: ItemState = ItemState.PENDING) -> None:
    """A folded row's state: NOT_RUN once every call is answered "too many" (the only
    answer they get), DONE once answered otherwise; else ``unanswered``."""
    answered = sum(row.folded_outcomes.values())
    if answered < row.folded_total:
        row.state = unanswered
    elif row.folded_outcomes.get(str(ToolOutcome.TOO_MANY), 0) == answered:
        row.state = ItemState.NOT_RUN
    else:
        row.state = ItemState.DONE


def items_from_messages(
    records: Iterable[StoredMessage], not_started: AbstractSet[str] = frozenset()
) -> list[TranscriptItem]:
    """Turn stored messages into rows: tool results fold into the cards of their calls.

    A call whose result is not in ``records`` is shown as INTERRUPTED (the app stopped while
    it ran; a later page may still hold its result), or NOT_RUN when its id is in
    ``not_started`` (its start was never recorded: Resume says it did not run). A result
    answers the first unanswered card of its id under the latest answer that asked for
    tools, so even two calls that share an id (stored before ids were made unique) keep
    their own arguments and results. Results whose asking answer is on an earlier page get
    cards of their own (``result:`` keys); consecutive "too many" ones fold into one row.
    """
    items: list[TranscriptItem] = []
    cards: list[TranscriptItem] = []
    folds: list[TranscriptItem] = []
    waiting: dict[str, list[TranscriptItem]] = {}  # the latest asker's unanswered cards
    folded: dict[str, TranscriptItem] = {}  # its unanswered folded calls' row, by call id
    unanswered: dict[str, TranscriptItem] = {}  # every folded call not answered yet
    loose: TranscriptItem | None = None  # a row of "too many" results without their asker
    for record in records:
        message = record.message
        item = _item_for(message, record.seq)
        if item is not None:
            items.append(item)
        if isinstance(message, AssistantMessage) and message.tool_calls:
            waiting, folded, loose = {}, {}, None
            for row in _cards_for(message, record.seq):
                items.append(row)
                if row.kind is ItemKind.TOOL:
                    cards.append(row)
                    waiting.setdefault(row.tool_call_id, []).append(row)
                else:
                    folds.append(row)
                    folded.update(dict.fromkeys(row.folded_ids, row))
                    unanswered.update(dict.fromkeys(row.folded_ids, row))
        elif isinstance(message, ToolMessage):
            call_id = message.tool_call_id
            if waiting.get(call_id):
                _answer_card(waiting[call_id].pop(0), message)
            elif call_id in folded:
                unanswered.pop(call_id, None)
                _fold_result(folded.pop(call_id), message)
            elif message.outcome is ToolOutcome.TOO_MANY:
                if loose is None or items[-1] is not loose:
                    loose = _folded((), record.seq, f"folded:?{message.id}")
                    items.append(loose)
                loose.folded_ids.add(call_id)
                loose.folded_total += 1
                loose.folded_names = list(dict.fromkeys([*loose.folded_names, message.name]))
                _fold_result(loose, message)
            else:
                card = _tool_card(
                    ToolCall(call_id, message.name),
                    ItemState.DONE,
                    record.seq,
                    f"result:{message.id}",
                )
                _answer_card(card, message)
                items.append(card)
    for card in cards:
        if card.state is ItemState.PENDING:
            card.state = (
                ItemState.NOT_RUN if card.tool_call_id in not_started else ItemState.INTERRUPTED
            )
    for row in folds:
        if row.state is ItemState.PENDING:
            never = all(i in not_started for i, r in unanswered.items() if r is row)
            _settle_folded(row, ItemState.NOT_RUN if never else ItemState.INTERRUPTED)
    mark_earlier_attempts(items)
    return items


# the tag of the notice Resume adds before it redoes a cut-off answer (`engine.resume`)
RETRY_TAG = "resume:retry_response"


def mark_earlier_attempts(items: Sequence[TranscriptItem], upto: int | None = None) -> list[int]:
    """Mark each cut-off answer a retry notice follows as an earlier attempt (the first
    ``upto`` rows only, when given); return the rows newly marked."""
    marked: list[int] = []
    end = len(items) if upto is None else min(upto, len(items))
    for row in range(end):
        notice = items[row]
        if notice.kind is not ItemKind.NOTICE or notice.tag != RETRY_TAG:
            continue
        before = row - 1
        while before >= 0 and items[before].kind is ItemKind.TOOL:
            before -= 1  # the cut-off answer's cards, if it had asked for tools
        answer = items[before] if before >= 0 else None
        if (
            answer is not None
            and answer.kind is ItemKind.ASSISTANT
            and answer.state in (ItemState.STOPPED, ItemState.INTERRUPTED)
            and not answer.earlier
        ):
            answer.earlier = True
            marked.append(before)
    return marked


def _item_for(message: Message, seq: int | None) -> TranscriptItem | None:
    if isinstance(message, UserMessage):
        return TranscriptItem(
            ItemKind.USER,
            message.id,
            parts=[message.content],
            seq=seq,
            created_at=message.created_at,
        )
    if isinstance(message, InternalMessage):
        return TranscriptItem(
            ItemKind.NOTICE, message.id, parts=[message.content], tag=message.tag, seq=seq
        )
    if isinstance(message, AssistantMessage):
        if (
            not message.content
            and not message.reasoning
            and message.tool_calls
            and message.stop is None
        ):
            return None  # a step that only asked for tools: its cards say it all
        return TranscriptItem(
            ItemKind.ASSISTANT,
            message.id,
            _state_for_stop(message.stop),
            parts=[message.content],
            reasoning_parts=[message.reasoning] if message.reasoning else [],
            stop=message.stop,
            seq=seq,
            model=message.model or "",
            created_at=message.created_at,
            output_tokens=message.usage.output_tokens if message.usage else None,
        )
    if isinstance(message, SystemMessage | ToolMessage):
        return None
    return None


class TranscriptModel(RowsModel[TranscriptItem]):
    """The rows of one conversation's transcript (see the module docstring)."""

    ROLES: ClassVar[dict[int, bytes]] = {
        KIND_ROLE: b"kind",
        STATE_ROLE: b"state",
        ITEM_ROLE: b"item",
    }

    def __init__(self, session_id: str = "", parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session_id = session_id
        self._live: TranscriptItem | None = None  # the answer streaming now
        self._live_count = 0
        self._live_started = 0.0  # time.monotonic() when the live answer began
        # an answer Stop ended and the engine stored: its row still has its live key until
        # `settle_stopped` gives it the stored message's id, model, time and tokens
        self._stopped: TranscriptItem | None = None
        self.first_seq: int | None = None  # lowest stored seq loaded (None: none yet)
        self.has_more = False  # older messages exist before first_seq
        # the later messages of the path are not loaded: a page around a search hit is shown
        # (`Conversations.open_at`); a request shows the latest page first
        self.newer = False
        self._pending: TranscriptItem | None = None  # a streamed change not yet announced
        # the calls (ids) whose start was never recorded though they have no result: the
        # resume point's `not_started`; their cards say "did not run", not "interrupted"
        self._not_started: frozenset[str] = frozenset()
        # the folded row of each call past the cap of the answers shown live, by call id
        self._folded: dict[str, TranscriptItem] = {}
        self._announce = QTimer(self)
        self._announce.setSingleShot(True)
        self._announce.setInterval(0)
        self._announce.timeout.connect(self.announce_pending)

    # Qt model interface ------------------------------------------------------------

    def row_data(self, item: TranscriptItem, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            return item.text if item.kind is not ItemKind.TOOL else item.tool_name
        if role == KIND_ROLE:
            return item.kind.value
        if role == STATE_ROLE:
            return item.state.value
        if role == ITEM_ROLE:
            return item
        if role == Qt.ItemDataRole.ToolTipRole and item.stop is not None:
            return tooltip_text(describe_stop(item.stop, engine_language()))
        return None

    # Reading ------------------------------------------------------------------------

    def item(self, row: int) -> TranscriptItem:
        return self._rows[row]

    def items(self) -> Sequence[TranscriptItem]:
        return tuple(self._rows)

    def row_of(self, key: str) -> int:
        for row in range(len(self._rows) - 1, -1, -1):
            if self._rows[row].key == key:
                return row
        return -1

    @property
    def streaming(self) -> bool:
        return self._live is not None

    # Loading ------------------------------------------------------------------------

    def reset_records(
        self, records: Sequence[StoredMessage], has_more: bool, *, newer: bool = False
    ) -> None:
        """Show these stored messages: the latest page of the history, or with ``newer`` a
        page further up, the later ones not loaded."""
        self.announce_pending()
        self.newer = newer
        self.beginResetModel()
        self._rows = items_from_messages(records, self._not_started)
        self._folded = {}
        self._live = None
        self.first_seq = records[0].seq if records else None
        self.has_more = has_more
        self.endResetModel()

    def prepend_records(self, records: Sequence[StoredMessage], has_more: bool) -> int:
        """Put an older page in front; return how many rows were added."""
        self.has_more = has_more
        if not records:
            return 0
        new = items_from_messages(records, self._not_started)
        # A page that ends in tool calls has their results in the rows already shown: a
        # result's own card (``result:``) becomes the call's card, and a row of "too many"
        # results (``folded:?``) joins the row of the calls it answers.
        shown = {
            i.tool_call_id: i
            for i in self._rows
            if i.kind is ItemKind.TOOL and i.key.startswith("result:")
        }
        loose = [
            i
            for i in self._rows
            if i.kind is ItemKind.FOLDED_CALLS and i.key.startswith("folded:?")
        ]
        kept: list[TranscriptItem] = []
        absorbed: list[TranscriptItem] = []
        updated: list[TranscriptItem] = []
        for item in new:
            if item.kind is ItemKind.TOOL and item.tool_call_id in shown:
                card = shown.pop(item.tool_call_id)
                card.key, card.seq = item.key, item.seq
                card.tool_arguments, card.tool_name = item.tool_arguments, item.tool_name
                card.tool_remote, card.tool_server = item.tool_remote, item.tool_server
                card.tool_title, card.tool_effect = item.tool_title, item.tool_effect
                card.tool_hints = item.tool_hints
                updated.append(card)
                continue
            if item.kind is ItemKind.FOLDED_CALLS and not item.key.startswith("folded:?"):
                for row in loose:
                    if row not in absorbed and row.folded_ids & item.folded_ids:
                        for outcome, count in row.folded_outcomes.items():
                            item.folded_outcomes[outcome] = (
                                item.folded_outcomes.get(outcome, 0) + count
                            )
                        absorbed.append(row)
                _settle_folded(item, item.state)
            kept.append(item)
        self.first_seq = records[0].seq
        for row in absorbed:
            self._remove(row)
        for card in updated:
            self._changed(card)
        if kept:
            self.announce_pending()
            self.beginInsertRows(QModelIndex(), 0, len(kept) - 1)
            self._rows[:0] = kept
            self.endInsertRows()
            # A retry notice shown before may follow an answer only now loaded.
            for earlier in mark_earlier_attempts(self._rows, len(kept) + 1):
                self._changed(self._rows[earlier])
        return len(kept)

    def set_not_started(self, call_ids: Iterable[str]) -> None:
        """The calls without a result whose start was never recorded (the resume point's
        ``not_started``): their cards say "did not run", as Resume does, not "interrupted"."""
        self._not_started = frozenset(call_ids)
        for item in self._rows:
            if item.kind is ItemKind.TOOL and item.state is ItemState.INTERRUPTED:
                if item.tool_call_id in self._not_started and not item.tool_result:
                    self._set_card_state(item, ItemState.NOT_RUN)
                    self._changed(item)

    # Changing -----------------------------------------------------------------------

    # ------------------------------------------------------------------ versions

    def set_versions(self, versions: dict[int, tuple[int, int]]) -> None:
        """Each row's place among its versions, by seq (rows not named have none)."""
        for item in self._rows:
            if item.kind not in (ItemKind.USER, ItemKind.ASSISTANT) or item.seq is None:
                continue
            found = versions.get(item.seq)
            if found != item.versions:
                item.versions = found
                self._changed(item)

    @property
    def last_seq(self) -> int | None:
        """The highest stored seq loaded (None: none)."""
        return max((i.seq for i in self._rows if i.seq is not None), default=None)

    def cut_after(self, key: str) -> None:
        """Remove the rows after the row ``key`` (a regenerate answers it again)."""
        row = self.row_of(key)
        if row < 0:
            return
        self.newer = False  # what came later is on the old branch now
        for item in list(self._rows[row + 1 :]):
            self._remove(item)

    def cut_from(self, key: str) -> None:
        """Remove the row ``key`` and the rows after it (an edit sends it anew)."""
        row = self.row_of(key)
        if row < 0:
            return
        self.newer = False
        for item in list(self._rows[row:]):
            self._remove(item)

    def _append(self, item: TranscriptItem) -> int:
        row = len(self._rows)
        self.announce_pending()
        self.beginInsertRows(QModelIndex(), row, row)
        self._rows.append(item)
        self.endInsertRows()
        return row

    def _append_all(self, items: Sequence[TranscriptItem]) -> None:
        """Add rows at the end in one insertion (one signal, one layout pass)."""
        if not items:
            return
        row = len(self._rows)
        self.announce_pending()
        self.beginInsertRows(QModelIndex(), row, row + len(items) - 1)
        self._rows.extend(items)
        self.endInsertRows()

    def _changed(self, item: TranscriptItem) -> None:
        self.announce_pending()
        item.version += 1
        self._announce_row(item)

    def _streamed(self, item: TranscriptItem) -> None:
        item.version += 1
        if self._pending is not item:
            self.announce_pending()
            self._pending = item
            self._announce.start()

    def announce_pending(self) -> None:
        """Emit the ``dataChanged`` a streamed delta is waiting for (now, not next turn)."""
        item, self._pending = self._pending, None
        if item is not None:
            self._announce.stop()
            self._announce_row(item)

    def _announce_row(self, item: TranscriptItem) -> None:
        row = self._row_of_item(item)
        if row >= 0:
            index = self.index(row, 0)
            self.dataChanged.emit(index, index)

    def _row_of_item(self, item: TranscriptItem) -> int:
        # The changed row is nearly always one of the last few.
        for row in range(len(self._rows) - 1, -1, -1):
            if self._rows[row] is item:
                return row
        return -1

    def _remove(self, item: TranscriptItem) -> None:
        row = self._row_of_item(item)
        if row >= 0:
            self.announce_pending()
            self.beginRemoveRows(QModelIndex(), row, row)
            del self._rows[row]
            self.endRemoveRows()

    def add_message(self, message: Message) -> None:
        """Show a message that was just stored (user input, a notice, an answer, a result)."""
        if isinstance(message, AssistantMessage):
            self._finish_answer(message)
            return
        if isinstance(message, ToolMessage):
            folded = self._folded.pop(message.tool_call_id, None)
            if folded is not None:
                # Thousands may come at once: the row is announced once per turn of the loop.
                _fold_result(folded, message)
                self._streamed(folded)
                return
            card = self._card(message.tool_call_id)
            if card is None:
                card = _tool_card(
                    ToolCall(message.tool_call_id, message.name),
                    ItemState.DONE,
                    None,
                    f"result:{message.id}",
                )
                self._append(card)
            card.tool_result = message.content
            self._set_card_state(card, _tool_state(message))
            self._changed(card)
            return
        if self.row_of(message.id) >= 0:
            return
        item = _item_for(message, None)
        if item is not None:
            row = self._append(item)
            if item.tag == RETRY_TAG:  # Resume redoes the cut-off answer above: fold it
                for earlier in mark_earlier_attempts(self._rows, row + 1):
                    self._changed(self._rows[earlier])

    def _card(self, call_id: str) -> TranscriptItem | None:
        """The card of the call ``call_id``: the latest one (ids are unique in a conversation
        since the engine made them so; older ones may repeat across answers)."""
        for row in range(len(self._rows) - 1, -1, -1):
            item = self._rows[row]
            if item.kind is ItemKind.TOOL and item.tool_call_id == call_id:
                return item
        return None

    def start_answer(self) -> None:
        """A model step began: add the live answer row."""
        if self._live is not None:
            return
        self._live_count += 1
        self._live = TranscriptItem(
            ItemKind.ASSISTANT, f"live:{self._live_count}", ItemState.STREAMING
        )
        self._live_started = time.monotonic()  # for the tokens a second under the answer
        self._append(self._live)

    def add_text(self, delta: str) -> None:
        if self._live is None:
            self.start_answer()
        assert self._live is not None
        self._live.parts.append(delta)
        self._streamed(self._live)

    def add_reasoning(self, delta: str) -> None:
        if self._live is None:
            self.start_answer()
        assert self._live is not None
        self._live.reasoning_parts.append(delta)
        self._streamed(self._live)

    def _finish_answer(self, message: AssistantMessage) -> None:
        live = self._live
        self._live = None
        visible = message.content or message.reasoning or message.stop is not None
        if live is not None:
            if visible:
                live.key = message.id
                live.parts[:] = [message.content]
                live.reasoning_parts[:] = [message.reasoning] if message.reasoning else []
                live.stop = message.stop
                live.state = _state_for_stop(message.stop)
                live.model = message.model or ""
                live.created_at = message.created_at
                live.output_tokens = message.usage.output_tokens if message.usage else None
                live.seconds = time.monotonic() - self._live_started
                self._changed(live)
            else:
                self._remove(live)
        elif visible and self.row_of(message.id) < 0:
            item = _item_for(message, None)
            if item is not None:
                self._append(item)
        if message.tool_calls and self.row_of(f"tool:{message.id}:0") < 0:
            rows = _cards_for(message, None)
            for row in rows:
                if row.kind is ItemKind.FOLDED_CALLS:
                    self._folded.update(dict.fromkeys(row.folded_ids, row))
            self._append_all(rows)

    def set_tool_state(self, call: ToolCall, state: ItemState, result: str | None = None) -> None:
        card = self._card(call.id)
        if card is None:
            card = _tool_card(call, state, None, f"tool:?:{call.id}")
            self._append(card)
        self._set_card_state(card, state)
        if result is not None:
            card.tool_result = result
        self._changed(card)

    def _set_card_state(self, card: TranscriptItem, state: ItemState) -> None:
        if state is ItemState.RUNNING and card.state is not ItemState.RUNNING:
            card.started_at = time.monotonic()
        card.state = state
        if state is not ItemState.AWAITING_APPROVAL:
            card.approval = None

    def describe_tool(self, call_id: str, info: ToolInfo) -> None:
        """Say what the card's tool is (when its call came without it): its server, its
        real name, its title and what it says it does."""
        card = self._card(call_id)
        if card is None:
            return
        _label(card, info)
        self._changed(card)

    def ask_approval(self, call_id: str, question: ApprovalQuestion) -> bool:
        """The card of this call waits for the person's answer to ``question``.

        Returns:
            False when there is no such card (nothing could show the question).
        """
        card = self._card(call_id)
        if card is None:
            return False
        card.state = ItemState.AWAITING_APPROVAL
        card.approval = question
        card.started_at = None
        self._changed(card)
        return True

    def end_approval(self, call_id: str, state: ItemState) -> None:
        """The card's question is answered (or its request stopped): show ``state``."""
        card = self._card(call_id)
        if card is None or card.state is not ItemState.AWAITING_APPROVAL:
            return
        self._set_card_state(card, state)
        self._changed(card)

    def finish_request(self, *, stopped: bool, saved: bool = True) -> bool:
        """The request ended without its events closing every row (a fault or Stop).

        The live answer keeps its text and says how it ended, and whether it was ``saved``
        (the controller knows: a stored partial is announced, and a Stop whose partial could
        not be stored ends in a `StorageError`); cards still running say the request was
        interrupted.

        Returns:
            True when an answer with text was still live (ended here, not by its events).
        """
        live = self._live
        self._live = None
        ended = False
        if live is not None:
            if live.text or live.reasoning:
                live.state = ItemState.STOPPED if stopped else ItemState.INTERRUPTED
                live.saved = saved
                live.seconds = time.monotonic() - self._live_started
                self._stopped = live if stopped and saved else None
                self._changed(live)
                ended = True
            else:
                self._remove(live)
        # After a Stop the engine answers a call that never started as not run (one that
        # was running as interrupted); after a fault it answers none of them.
        never_started = ItemState.NOT_RUN if stopped else ItemState.INTERRUPTED
        cut = {
            ItemState.RUNNING: ItemState.INTERRUPTED,
            ItemState.PENDING: never_started,
            ItemState.AWAITING_APPROVAL: never_started,
        }
        for item in self._rows:
            if item.kind in (ItemKind.TOOL, ItemKind.FOLDED_CALLS) and item.state in cut:
                self._set_card_state(item, cut[item.state])
                self._changed(item)
        self._folded = {}
        return ended

    @property
    def stopped_unsettled(self) -> bool:
        """Whether an answer Stop ended waits for its stored record (`settle_stopped`)."""
        return self._stopped is not None and self._stopped in self._rows

    def settle_stopped(self, records: Sequence[StoredMessage]) -> bool:
        """Give the answer Stop ended what its stored record says: its id (so Copy,
        Regenerate and Branch act on it, as on an answer a fault cut off), its model, time
        and tokens. ``records`` is the end of the path; the record is the last answer there
        with the row's text. Returns whether the row was settled."""
        row = self._stopped
        self._stopped = None
        if row is None or row not in self._rows or not row.key.startswith("live:"):
            return False
        for record in reversed(records):
            message = record.message
            if isinstance(message, AssistantMessage) and message.content == row.text:
                row.key, row.seq = message.id, record.seq
                row.stop = message.stop
                row.model = message.model or ""
                row.created_at = message.created_at
                row.output_tokens = message.usage.output_tokens if message.usage else None
                self._changed(row)
                return True
        return False

    def apply_event(self, event: AgentEvent) -> None:
        """Fold one event of a request into the rows."""
        kind = event.type
        if kind is AgentEventType.MESSAGE_APPENDED and event.message is not None:
            self.add_message(event.message)
        elif kind is AgentEventType.MODEL_STARTED:
            self.start_answer()
        elif kind is AgentEventType.TEXT_DELTA and event.delta:
            self.add_text(event.delta)
        elif kind is AgentEventType.REASONING_DELTA and event.delta:
            self.add_reasoning(event.delta)
        elif kind is AgentEventType.TOOL_STARTED and isinstance(event.tool_call, ToolCall):
            self.set_tool_state(event.tool_call, ItemState.RUNNING)
        elif kind in (AgentEventType.TOOL_COMPLETED, AgentEventType.TOOL_FAILED):
            if isinstance(event.tool_call, ToolCall) and isinstance(event.message, ToolMessage):
                self.set_tool_state(
                    event.tool_call, _tool_state(event.message), event.message.content
                )
        elif kind is AgentEventType.MODEL_STOPPED and self._live is not None:
            # No partial was stored (nothing arrived): the empty live row goes.
            if not self._live.text and not self._live.reasoning:
                self._remove(self._live)
                self._live = None
