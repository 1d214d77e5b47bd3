"""The window's side of the tools: which MCP servers the shown conversation is offered (the
header's Tools button), a server that could not start or is starting (the status bar), and a
tool card waiting for the person (the line under the last message, and Esc that denies it).

`ToolStatus` is built with the window's widgets; `attach` gives it the running servers
(`ui.tools.tool_servers.ToolServers`), the approvals (`ui.tools.approvals.Approvals`) and the controller as
a `ToolHost` (what a conversation is offered, and where a change of it is kept): never the
whole window or controller.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QLabel, QWidget

if TYPE_CHECKING:
    import asyncio

    from PySide6.QtWidgets import QStatusBar

    from ..conversation.transcript_view import TranscriptView
    from .approval_keys import EscapeDenies
    from .approvals import Approvals
    from .tool_server_menu import ToolServerButton
    from .tool_servers import ToolServers

__all__ = ["ToolHost", "ToolStatus", "ToolWidgets"]


class ToolHost(Protocol):
    """What the tool status needs of the controller (`ui.controller.Controller` is one)."""

    @property
    def current(self) -> str | None: ...

    def offered_servers(self, session_id: str) -> list[str]: ...

    async def offer_server(self, session_id: str, server: str, offered: bool) -> None: ...

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str = "") -> asyncio.Task[Any]: ...


@dataclass(frozen=True, slots=True)
class ToolWidgets:
    """The window's widgets the tool status works with (built by the window)."""

    window: QWidget  # whose Esc denies a waiting card
    button: ToolServerButton  # the header's Tools button
    transcript: TranscriptView
    status: QStatusBar
    problem: Callable[[str], None]  # says a problem in the status bar


class ToolStatus(QObject):
    """The tools of the shown conversation, as the window shows them."""

    def __init__(self, widgets: ToolWidgets, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._w = widgets
        #: under the last message while a card of the shown conversation waits
        self.approval_line = QLabel(widgets.window)
        self.approval_line.setObjectName("approvalStatus")
        self.approval_line.setWordWrap(True)
        self.approval_line.setTextFormat(Qt.TextFormat.PlainText)
        self.approval_line.setVisible(False)
        self._host: ToolHost | None = None
        self._servers: ToolServers | None = None
        self._approvals: Approvals | None = None
        self.escape_denies: EscapeDenies | None = None  # once attached
        self._shown = ""  # the conversation shown (its metadata is loaded)
        self._said: dict[str, str] = {}  # server → what the status bar said of its failure
        self.retranslate()

    def attach(self, host: ToolHost, servers: ToolServers, approvals: Approvals) -> None:
        from .approval_keys import EscapeDenies

        self._host, self._servers, self._approvals = host, servers, approvals
        self.escape_denies = EscapeDenies(
            self._w.window, self._w.transcript, approvals, lambda: host.current or ""
        )
        servers.changed.connect(self.show_servers)
        servers.failed.connect(self._on_failed)
        servers.starting.connect(self._on_starting)
        approvals.waitingChanged.connect(self._on_waiting)
        self._w.button.offerChanged.connect(self._on_offer_changed)

    def conversation_shown(self, session_id: str) -> None:
        """Another conversation is shown: its servers, and whether a card of it waits."""
        self._shown = session_id
        approvals = self._approvals
        self.approval_line.setVisible(approvals is not None and approvals.waiting(session_id))
        if self.escape_denies is not None:
            self.escape_denies.update()
        self.show_servers()

    def show_servers(self) -> None:
        host, servers = self._host, self._servers
        if host is None or servers is None:  # before the controller is attached
            return
        # The conversation shown (its metadata is loaded), not one still being opened.
        sid = self._shown
        offered = host.offered_servers(sid) if sid else servers.names()
        self._w.button.set_servers(servers.names(), offered, sid)
        self._forget_failures(servers)

    def _forget_failures(self, servers: ToolServers) -> None:
        """A failure said of a server removed (or switched off) since is not left standing."""
        names = set(servers.names())
        for server in [s for s in self._said if s not in names]:
            text = self._said.pop(server)
            if self._w.status.currentMessage() == text:
                self._w.status.clearMessage()

    def _on_offer_changed(self, sid: str, server: str, offered: bool) -> None:
        if sid and self._host is not None:
            self._host.spawn(self._host.offer_server(sid, server, offered), "offer tool server")

    def _on_failed(self, server: str, why: str, log: str) -> None:
        # One line of the status bar: which server, why in words, where its log is (the
        # Tools page shows the whole sentence and the log's last lines).
        if log:
            text = self.tr("The tool server {server} could not start: {why}. Its log: {log}")
        else:
            text = self.tr("The tool server {server} could not start: {why}")
        text = text.format(server=server, why=why, log=log)
        self._said[server] = text
        self._w.problem(text)

    def _on_starting(self, session_id: str, starting: bool) -> None:
        if session_id != self._shown:
            return
        status = self._w.status
        text = self.tr("Starting the tool servers…")
        if starting:
            status.showMessage(text)
        elif status.currentMessage() == text:
            status.clearMessage()

    def _on_waiting(self, session_id: str, waiting: bool) -> None:
        if self.escape_denies is not None:
            self.escape_denies.update()
        host = self._host
        if host is None or session_id != (host.current or ""):
            return
        self.approval_line.setVisible(waiting)
        if waiting:
            self._w.transcript.scroll_to_bottom()

    def retranslate(self) -> None:
        self.approval_line.setText(self.tr("Waiting for your answer about a tool"))
