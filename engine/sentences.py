"""Every sentence the engine writes for a person, in English and Simplified Chinese.

A sentence is a key (``"resume.continue"``) with a template per language, filled with named
parameters (``{names}``, ``{who}``). Errors keep their key and parameters and render on
demand (`ContinuoError.sentence`), stops are described from their reason and raw code
(`describe_stop`), and resume descriptions are written in the language the host gives
`AgentRunConfig` — so a host can show every engine sentence in its own language, and again
in another after the person switches.

Sentences say what happened and what helps in words that fit any host: they name no part
of a window ("Settings", "button"). What a host can offer (open its settings, resume) is
the error's `ErrorAction`, which the host puts into its own words.

Not here: the notices sent to the model for a resumed request (`engine.resume`), which keep
the seed's exact English words whatever the person's language — they are read by the model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .stop import StopInfo

__all__ = [
    "LANGUAGES",
    "ErrorAction",
    "Phrase",
    "describe_stop",
    "has_sentence",
    "join_sentences",
    "keys",
    "language_of",
    "sentence",
]

#: The languages every sentence has: English (the default) and Simplified Chinese.
LANGUAGES = ("en", "zh_CN")


class ErrorAction(StrEnum):
    """What helps after an error, for the host to offer in its own words."""

    NONE = "none"  #: nothing the person can do helps, or nothing is needed
    RESUME = "resume"  #: resume the conversation: it carries on from where it stopped
    WAIT = "wait"  #: wait a moment (a rate limit, a busy server), then resume
    CHECK_KEY = "check_key"  #: the API key was refused or lacks permission
    CHECK_CONNECTION = "check_connection"  #: the network, or the provider's address
    CHECK_MODEL = "check_model"  #: the model's name or its options
    CHECK_ACCOUNT = "check_account"  #: the provider account's plan or billing
    NEW_CONVERSATION = "new_conversation"  #: the conversation no longer fits the model
    FREE_SPACE = "free_space"  #: the disk holding the data file is full
    CHECK_FOLDER = "check_folder"  #: the data file or its folder cannot be opened or written
    CLOSE_OTHER = "close_other"  #: another request or program holds the conversation
    UPDATE_APP = "update_app"  #: a newer version wrote the data
    RESTORE_BACKUP = "restore_backup"  #: the data file is damaged


# fmt: off
_SENTENCES: dict[str, tuple[str, str]] = {
    # -- where a conversation stopped (ResumePoint.description) ---------------------------
    "resume.call_model": (
        "The model never answered the last message; resuming will ask it again.",
        "模型还没有回答最后一条消息；继续将再次询问它。",
    ),
    "resume.tool_results": (
        "The tools finished but the model has not seen their results yet; resuming will "
        "send them to the model.",
        "工具已经运行完毕，但模型还没有看到结果；继续将把结果发给模型。",
    ),
    "resume.recover_tool": (
        "The app stopped while the tool {names} ran; resuming will tell the model it may or "
        "may not have finished, without running it again.",
        "工具 {names} 运行时程序停止了；继续将告诉模型它可能已完成也可能没有，不会再次运行它。",
    ),
    "resume.recover_tools": (
        "The app stopped while the tools {names} ran; resuming will tell the model they may "
        "or may not have finished, without running them again.",
        "工具 {names} 运行时程序停止了；继续将告诉模型它们可能已完成也可能没有，不会再次运行它们。",
    ),
    "resume.not_run_tool": (
        "The app stopped before the tool {names} started, so it did not run; resuming will "
        "tell the model so.",
        "工具 {names} 开始运行前程序停止了，所以它没有运行；继续将如实告诉模型。",
    ),
    "resume.not_run_tools": (
        "The app stopped before the tools {names} started, so they did not run; resuming "
        "will tell the model so.",
        "工具 {names} 开始运行前程序停止了，所以它们没有运行；继续将如实告诉模型。",
    ),
    "resume.recover_mixed": (
        "The app stopped while tools ran: {ran} may or may not have finished, and {not_run} "
        "did not run; resuming will tell the model so, without running any tool again.",
        "工具运行时程序停止了：{ran} 可能已完成也可能没有，{not_run} 没有运行；继续将如实告诉"
        "模型，不会再次运行任何工具。",
    ),
    "resume.retry.cancelled": (
        "The answer was stopped before it finished; resuming will ask the model to write it "
        "again from the start.",
        "回答在完成前被停止了；继续将请模型从头重写这个回答。",
    ),
    "resume.retry.network_error": (
        "The connection broke before the answer finished; resuming will ask the model to "
        "write it again from the start.",
        "回答完成前连接断开了；继续将请模型从头重写这个回答。",
    ),
    "resume.retry.app_stopped": (
        "The app stopped before the answer finished; resuming will ask the model to write "
        "it again from the start.",
        "回答完成前程序停止了；继续将请模型从头重写这个回答。",
    ),
    "resume.retry.error": (
        "The answer was cut off by an error; resuming will ask the model to write it again "
        "from the start.",
        "回答被一个错误打断了；继续将请模型从头重写这个回答。",
    ),
    "resume.continue": (
        "The answer reached the output limit; resuming will ask the model to continue where "
        "it stopped.",
        "回答达到了输出上限；继续将请模型从停下的地方接着写。",
    ),
    "resume.paused": (
        "The provider paused this answer; resuming will let the model carry on.",
        "服务商暂停了这个回答；继续将让模型接着回答。",
    ),
    # -- nothing to resume (AgentResumeError) ----------------------------------------------
    "cannot_resume.empty": (
        "This conversation has no messages, so there is nothing to resume.",
        "这个对话还没有消息，没有可以继续的内容。",
    ),
    "cannot_resume.completed": (
        "The last answer finished normally, so there is nothing to resume.",
        "最后一个回答已正常完成，没有可以继续的内容。",
    ),
    "cannot_resume.refused": (
        "The model declined the last request; resuming would be declined again.",
        "模型拒绝了最后的请求；继续也会再次被拒绝。",
    ),
    "cannot_resume.context_full": (
        "The conversation filled the model's context window; start a new conversation or "
        "shorten this one before going on.",
        "对话已占满模型的上下文窗口；请开始新对话，或缩短这个对话后再继续。",
    ),
    "cannot_resume.unknown_stop": (
        "The last answer stopped for a reason this version does not know.",
        "最后一个回答因这个版本不认识的原因而停止。",
    ),
    "cannot_resume.malformed": (
        "The conversation ends in a tool result that answers no tool call, so it cannot be "
        "resumed.",
        "对话以一个不对应任何工具调用的工具结果结尾，因此无法继续。",
    ),
    "cannot_resume.other": (
        "Cannot resume: {reason}.",
        "无法继续：{reason}。",
    ),
    # -- the agent --------------------------------------------------------------------------
    "agent.busy": (
        "The conversation {session_id} is busy in another request ({holder}); wait for it "
        "to finish.",
        "对话 {session_id} 正被另一个请求使用（{holder}）；请等它结束。",
    ),
    "agent.branch.no_question": (
        "There is no question in this conversation to answer again.",
        "这个对话里没有可以重新回答的问题。",
    ),
    "agent.branch.not_a_question": (
        "Only a message the person wrote can be edited and sent again.",
        "只有用户写的消息才能编辑并重新发送。",
    ),
    "agent.step_limit": (
        "The request used all {max_steps} model steps without a final answer; everything so "
        "far is saved, and resuming carries on from here.",
        "这个请求用完了全部 {max_steps} 次模型调用仍没有最终回答；目前的内容都已保存，继续将从这里接着进行。",
    ),
    "agent.no_final_response": (
        "The model's stream ended without a final response; the answer may be incomplete. "
        "Resuming asks again.",
        "模型的数据流在给出最终回答前结束了，回答可能不完整。继续将再次询问。",
    ),
    # -- storage ----------------------------------------------------------------------------
    "storage.exists": (
        "A conversation with id {session_id} already exists.",
        "ID 为 {session_id} 的对话已经存在。",
    ),
    "storage.corrupt": (
        "The conversation file {path} is damaged or is not a Continuo database{detail}. It "
        "was not changed; restore it from a backup or move it aside to start afresh.",
        "对话文件 {path} 已损坏或不是 Continuo 数据库{detail}。文件没有被改动；请从备份恢复，或把它移走后重新开始。",
    ),
    "storage.foreign": (
        "The conversation file {path} holds the {kind} {name}, which Continuo does not create: "
        "another program put it there, and it could change or delete conversations as they "
        "are saved. The file was not opened and not changed; restore a backup you trust, or "
        "move the file aside to start afresh.",
        "对话文件 {path} 含有{kind} {name}，这不是 Continuo 创建的：它是别的程序放进去的，可能在保存对话时改动或删除对话。文件没有被打开，也没有被改动；请从可信的备份恢复，或把它移走后重新开始。",
    ),
    "storage.foreign_changed": (
        "The conversation file {path} holds a {kind} {name} that differs from the one "
        "Continuo creates: another program changed it, and it could change or delete "
        "conversations as they are saved. The file was not opened and not changed; restore a "
        "backup you trust, or move the file aside to start afresh.",
        "对话文件 {path} 中的{kind} {name} 与 Continuo 创建的不同：它被别的程序改过，可能在保存对话时改动或删除对话。文件没有被打开，也没有被改动；请从可信的备份恢复，或把它移走后重新开始。",
    ),
    "storage.kind.table": ("table", "表"),
    "storage.kind.index": ("index", "索引"),
    "storage.kind.trigger": ("trigger", "触发器"),
    "storage.kind.view": ("view", "视图"),
    "storage.not_backup": (
        "{path} is not a Continuo backup, so it was not restored; your conversations are as "
        "they were. Choose a file that File › Back up… made.",
        "{path} 不是 Continuo 备份，因此没有恢复；你的对话保持原样。请选择由“文件 › 备份…”创建的文件。",
    ),
    "storage.newer": (
        "The conversation file {path} was written by a newer Continuo (schema {found}, this "
        "version reads up to {supported}). It was not changed; update Continuo to open it.",
        "对话文件 {path} 由更新版本的 Continuo 写入（结构版本 {found}，本版本最多读取 {supported}）。文件没有被改动；请更新 Continuo 后再打开。",
    ),
    "storage.unknown_type": (
        "A stored message{where} has the unknown type {type_name}; it may come from a newer "
        "Continuo. Nothing was changed; update Continuo to open it.",
        "一条已保存的消息{where}类型为未知的 {type_name}，可能来自更新版本的 Continuo。没有任何改动；请更新 Continuo 后再打开。",
    ),
    "storage.lease_lost.who": (" ({holder})", "（即{holder}）"),
    "lease.holder": (
        "process {pid} on host {host}, since {since}",
        "主机 {host} 上的进程 {pid}，自 {since} 起",
    ),
    "agent.busy.in_process": (
        "request {request_id} in this process",
        "本进程中的请求 {request_id}",
    ),
    # -- why a data file cannot be used (the {reason} of storage.read_only/permission) -------
    "storage.reason.folder_not_created": (
        "its folder {folder} could not be created",
        "无法创建它所在的文件夹 {folder}",
    ),
    "storage.reason.not_created": ("it could not be created", "无法创建该文件"),
    "storage.reason.folder_not_enterable": (
        "this user may not open its folder {folder}",
        "当前用户无权打开它所在的文件夹 {folder}",
    ),
    "storage.reason.folder_on_read_only_disk": (
        "its folder {folder} is on a read-only disk",
        "它所在的文件夹 {folder} 位于只读磁盘上",
    ),
    "storage.reason.not_readable": ("this user may not read it", "当前用户无权读取该文件"),
    "storage.reason.folder_read_only": (
        "its folder {folder} is read-only",
        "它所在的文件夹 {folder} 是只读的",
    ),
    "storage.reason.file_read_only": ("the file is read-only", "该文件是只读的"),
    "storage.reason.companion_read_only": (
        "its companion file {companion} is read-only",
        "它的附属文件 {companion} 是只读的",
    ),
    "storage.reason.disk_read_only": ("{what}: the disk is read-only", "{what}：磁盘是只读的"),
    "storage.reason.os_error": ("{what} ({error})", "{what}（原因：{error}）"),
    "storage.reason.permission_denied": ("permission denied", "没有权限"),
    "storage.lease_lost": (
        "Conversation {session_id} was taken over by another process{who} while this request "
        "was paused, so this request stopped and saved nothing more. Open the conversation "
        "again to see where it stands.",
        "对话 {session_id} 在本次请求暂停期间被另一个进程{who}接管，所以本次请求已停止，没有再保存任何内容。请重新打开对话查看它的当前状态。",
    ),
    "storage.full": (
        "The disk holding the conversation file {path} is full, so the last change was not "
        "saved. Free some space on that disk, then resume.",
        "存放对话文件 {path} 的磁盘已满，最后的改动没有保存。请在该磁盘上腾出一些空间，然后继续。",
    ),
    "storage.read_only": (
        "The conversation file {path} cannot be written: {reason}. It was not changed; make "
        "it writable (or choose another data folder) and try again.",
        "对话文件 {path} 无法写入：{reason}。文件没有被改动；请让它可写（或选择另一个数据文件夹）后再试。",
    ),
    "storage.permission": (
        "The conversation file {path} cannot be opened: {reason}. It was not changed; give "
        "your user access to it (or choose another data folder) and try again.",
        "无法打开对话文件 {path}：{reason}。文件没有被改动；请让你的用户可以访问它（或选择另一个数据文件夹）后再试。",
    ),
    "storage.io": (
        "The disk reported an error while using the conversation file {path} ({detail}). "
        "Check that the disk is still connected and healthy, then try again.",
        "使用对话文件 {path} 时磁盘报告了错误（{detail}）。请检查磁盘是否仍然连接且工作正常，然后再试。",
    ),
    "storage.locked": (
        "The conversation file {path} is locked by another program; try again in a moment, "
        "or close the other program.",
        "对话文件 {path} 被另一个程序锁定；请稍后再试，或关闭那个程序。",
    ),
    "storage.old_sqlite": (
        "This copy of Continuo was built with SQLite {found}, which is too old for its "
        "conversation file (it needs {needed} or newer, with full-text search). Install a "
        "current release of Continuo.",
        "这个 Continuo 所用的 SQLite 版本是 {found}，对它的对话文件来说太旧了（需要 {needed} 或更新、且带全文搜索）。请安装 Continuo 的最新版本。",
    ),
    "storage.unusable": (
        "The conversation file {path} could not be used: {detail}. Check that the disk has "
        "space and the file is writable.",
        "无法使用对话文件 {path}：{detail}。请检查磁盘是否有空间、文件是否可写。",
    ),
    "storage.unwritable_value": (
        "Could not write to the conversation file {path}: {detail}.",
        "无法写入对话文件 {path}：{detail}。",
    ),
    "storage.append_failed": (
        "The message could not be saved: {detail}.",
        "消息没能保存：{detail}。",
    ),
    "storage.query": (
        "Continuo could not run a query on the conversation file {path} ({detail}). This is a "
        "fault in the query, not in the disk or the file: nothing was changed. Try other "
        "words; if it happens again, please report it.",
        "Continuo 无法在对话文件 {path} 上执行一个查询（{detail}）。这是查询本身的问题，与磁盘和文件无关：没有任何改动。请换个说法再试；如果再次出现，请报告这个问题。",
    ),
    "storage.cannot_open": (
        "The conversation file {path} could not be opened: {detail}.",
        "无法打开对话文件 {path}：{detail}。",
    ),
    "storage.closed": (
        "The conversation file {path} was closed; open it again.",
        "对话文件 {path} 已关闭；请重新打开。",
    ),
    "storage.no_message": (
        "There is no message {message_id} in the conversation {session_id} in {path}; it may "
        "have been deleted. Open the conversation again.",
        "{path} 中的对话 {session_id} 里没有消息 {message_id}，它可能已被删除。请重新打开这个对话。",
    ),
    "storage.missing": (
        "There is no conversation {session_id} in {path}; it may have been deleted.",
        "{path} 中没有对话 {session_id}，它可能已被删除。",
    ),
    "storage.missing_blob": (
        "The message was not saved: an attachment it refers to ({ref}) is not in {path}; "
        "it may have been deleted with its conversation. Attach the file again.",
        "消息未保存：它引用的附件（{ref}）不在 {path} 中，可能已随其对话一起被删除。"
        "请重新添加该文件。",
    ),
    # -- attachments (engine.attach) -------------------------------------------------------
    "attach.missing": (
        "{name} cannot be attached: it does not exist or cannot be opened ({detail}).",
        "无法附加 {name}：它不存在或无法打开（{detail}）。",
    ),
    "attach.not_regular": (
        "{name} cannot be attached: it is not an ordinary file (a link, a folder, a pipe or a "
        "device). Attach the file itself.",
        "无法附加 {name}：它不是普通文件（而是链接、文件夹、管道或设备）。请附加文件本身。",
    ),
    "attach.too_large": (
        "{name} is {size}, more than the {limit} an attachment may be; nothing of it was read. "
        "Attach a smaller file, or a part of it.",
        "{name} 大小为 {size}，超过了附件的上限 {limit}；未读取其中任何内容。"
        "请附加较小的文件或其中一部分。",
    ),
    "attach.unsupported": (
        "{name} cannot be attached: files of this type ({kind}) are not read. Attach a picture "
        "(PNG, JPEG, GIF, WebP), a PDF, a Word document (DOCX), a spreadsheet (XLSX, ODS) or a "
        "text file (text, Markdown, CSV, JSON, HTML, code).",
        "无法附加 {name}：不读取此类文件（{kind}）。请附加图片（PNG、JPEG、GIF、WebP）、PDF"
        "、Word 文档（DOCX）、电子表格（XLSX、ODS）或文本文件（纯文本、Markdown、CSV、JSON、"
        "HTML、代码）。",
    ),
    "attach.wrong_type": (
        "{name} is not what its name says: its contents are not those of a {kind} file. Nothing "
        "was read from it; check the file.",
        "{name} 的内容与其名称不符：它不是 {kind} 文件。未读取其中任何内容；请检查该文件。",
    ),
    "attach.bomb": (
        "{name} is too large a picture to open safely ({width} × {height} pixels; at most "
        "{limit} million pixels are read). Attach a smaller picture.",
        "{name} 图片过大，无法安全打开（{width} × {height} 像素；最多读取 {limit} 百万像素）。"
        "请附加较小的图片。",
    ),
    "attach.unpacks_too_large": (
        "{name} would unpack to {size}, more than the {limit} a document is read up to (it may "
        "be a zip bomb). Nothing was attached.",
        "{name} 解压后将达到 {size}，超过文档可读取的上限 {limit}（它可能是压缩炸弹）。未附加任何内容。",
    ),
    "attach.unreadable": (
        "{name} could not be read; it may be damaged ({detail}). Nothing was attached.",
        "无法读取 {name}，它可能已损坏（{detail}）。未附加任何内容。",
    ),
    "attach.not_text": (
        "{name} is not text in any encoding that could be recognised, so it cannot be attached "
        "as a document.",
        "{name} 不是任何可识别编码的文本，因此无法作为文档附加。",
    ),
    "attach.timeout": (
        "Reading {name} took more than {seconds} seconds and was stopped; the file may be "
        "damaged or very large. Nothing was attached.",
        "读取 {name} 超过 {seconds} 秒，已被停止；文件可能已损坏或过大。未附加任何内容。",
    ),
    "attach.out_of_memory": (
        "Reading {name} needed more than {limit} of memory and was stopped; the file may be "
        "damaged or too complex. Nothing was attached.",
        "读取 {name} 所需内存超过 {limit}，已被停止；文件可能已损坏或过于复杂。未附加任何内容。",
    ),
    "attach.crashed": (
        "Reading {name} failed: the reader stopped unexpectedly ({detail}). The file may be "
        "damaged; nothing was attached.",
        "读取 {name} 失败：读取程序意外停止（{detail}）。文件可能已损坏；未附加任何内容。",
    ),
    "attach.over_budget": (
        "{name} could not be made smaller than {limit}, even reduced in size. Attach a smaller "
        "picture.",
        "即使缩小尺寸，{name} 也无法压缩到 {limit} 以下。请附加较小的图片。",
    ),
    # -- archive ----------------------------------------------------------------------------
    "archive.empty": (
        "The file {path} is empty, so there is nothing in it to import.",
        "文件 {path} 是空的，没有可以导入的内容。",
    ),
    "archive.not_a_file": (
        "{path} is not a file (it is a folder, a pipe or a device), so it cannot be imported.",
        "{path} 不是一个文件（而是文件夹、管道或设备），因此无法导入。",
    ),
    "archive.unreadable": (
        "The file {path} could not be read: {reason}. Nothing was imported.",
        "无法读取文件 {path}：{reason}。没有导入任何内容。",
    ),
    "archive.unknown_format": (
        "The file {path} is neither a Continuo export nor a ChatGPT data export (a .zip "
        "holding conversations.json), so nothing was imported.",
        "文件 {path} 既不是 Continuo 的导出文件，也不是 ChatGPT 的数据导出（包含 conversations.json 的 .zip），因此没有导入任何内容。",
    ),
    "archive.not_continuo": (
        "The file {path} is not a Continuo export: {detail}. Nothing was imported.",
        "文件 {path} 不是 Continuo 的导出文件：{detail}。没有导入任何内容。",
    ),
    "archive.newer": (
        "The file {path} was exported by a newer Continuo (export version {found}; this "
        "version reads up to {supported}), so nothing was imported. Update Continuo to "
        "import it.",
        "文件 {path} 由更新版本的 Continuo 导出（导出格式版本 {found}，本版本最多读取 {supported}），因此没有导入任何内容。请更新 Continuo 后再导入。",
    ),
    "archive.damaged": (
        "The file {path} is not a whole export: {detail}. Nothing was imported; export it "
        "again.",
        "文件 {path} 不是完整的导出文件：{detail}。没有导入任何内容；请重新导出。",
    ),
    "archive.too_deep": (
        "The file {path} is nested too deeply to be read: {problem} (around byte {offset}). "
        "Nothing was imported.",
        "文件 {path} 嵌套过深，无法读取：{problem}（约在第 {offset} 字节处）。没有导入任何内容。",
    ),
    "archive.too_deep.levels": (
        "its lists and objects are nested more than {limit} levels deep",
        "其中的列表和对象嵌套超过 {limit} 层",
    ),
    "archive.too_deep.keys": (
        "the keys leading to one of its lists or objects add up to more than {limit} bytes",
        "通向其中某个列表或对象的各层键名合计超过 {limit} 字节",
    ),
    "archive.too_large": (
        "The file {path} holds a text longer than {limit} outside its conversations (around "
        "byte {offset}), more than an import reads, so nothing was imported.",
        "文件 {path} 在对话之外含有一段超过 {limit} 的文本（约在第 {offset} 字节处），超出了导入能读取的大小，因此没有导入任何内容。",
    ),
    "archive.too_large.string": (
        "it holds a text longer than {limit}, more than an import reads",
        "其中有一段文本超过 {limit}，超出了导入能读取的大小",
    ),
    "archive.too_large.conversation": (
        "it is larger than {limit}, more than an import reads as one conversation",
        "它大于 {limit}，超出了导入能作为一个对话读取的大小",
    ),
    "archive.conversation_number": (
        "number {number} of the file",
        "文件中的第 {number} 个",
    ),
    "archive.bad_zip": (
        "The file {path} is a damaged zip archive ({detail}), so nothing was imported.",
        "文件 {path} 是一个损坏的 zip 压缩包（{detail}），因此没有导入任何内容。",
    ),
    "archive.zip_without_conversations": (
        "The zip archive {path} holds no conversations.json, so it is not a ChatGPT data "
        "export; nothing was imported.",
        "zip 压缩包 {path} 中没有 conversations.json，因此它不是 ChatGPT 的数据导出；没有导入任何内容。",
    ),
    "archive.bad_conversation": (
        "The conversation {name} could not be read ({problem}), so it was not imported.",
        "无法读取对话 {name}（{problem}），因此没有导入它。",
    ),
    "archive.bad_tree": (
        "The conversation {name} cannot be stored in {path}: {problem}. Nothing of it was "
        "imported.",
        "对话 {name} 无法保存到 {path}：{problem}。它的任何内容都没有导入。",
    ),
    "archive.cannot_write": (
        "The export could not be written to {path}: {reason}. Nothing was changed there; "
        "choose another place or free some space, then export again.",
        "无法把导出内容写入 {path}：{reason}。那里没有任何改动；请换一个位置或腾出一些空间后重新导出。",
    ),
    "archive.reason.is_database": ("it is the conversation file itself", "它就是对话文件本身"),
    "archive.no_database": (
        "There is no conversation file at {path}, so there is nothing to export.",
        "{path} 处没有对话文件，因此没有可以导出的内容。",
    ),
    # -- ChatGPT import ---------------------------------------------------------------------
    "archive.chatgpt_not_export": (
        "The file {path} is not a ChatGPT data export: {problem}. Nothing was imported; "
        "choose the .zip the export came as, or the conversations.json inside it.",
        "文件 {path} 不是 ChatGPT 的数据导出：{problem}。没有导入任何内容；请选择导出所得的 .zip 文件，或其中的 conversations.json。",
    ),
    "archive.chatgpt.not_json": (
        "it is neither a zip archive nor JSON",
        "它既不是 zip 压缩包，也不是 JSON",
    ),
    "archive.chatgpt.not_list": (
        "its JSON is an object, not a list of conversations",
        "其中的 JSON 是一个对象，而不是对话列表",
    ),
    "archive.chatgpt.not_conversation": (
        "the first item of its list is not a ChatGPT conversation (it has no \"mapping\")",
        "其列表的第一项不是 ChatGPT 对话（没有 \"mapping\"）",
    ),
    # -- MCP servers ------------------------------------------------------------------------
    "mcp.config.file": (
        "The MCP configuration {source} cannot be used: {problem}. Fix it (it holds an "
        "\"mcpServers\" object) and load it again.",
        "MCP 配置 {source} 无法使用：{problem}。请修正它（其中应有一个 \"mcpServers\" 对象）后重新加载。",
    ),
    "mcp.config.entry": (
        "The MCP server {server} in {source} has a bad \"{field}\": {problem}. Fix that entry "
        "and load it again.",
        "{source} 中的 MCP 服务器 {server} 的 \"{field}\" 有误：{problem}。请修正这一项后重新加载。",
    ),
    "mcp.start": (
        "The MCP server {server} could not be started: {detail}. Check its command or address"
        "{log}.",
        "MCP 服务器 {server} 无法启动：{detail}。请检查它的命令或地址{log}。",
    ),
    "mcp.crashed": (
        "The MCP server {server} stopped while its tool {tool} was running{status}, so the tool "
        "may or may not have completed. The server starts again on the next call{log}.",
        "MCP 服务器 {server} 在运行工具 {tool} 时停止了{status}，所以该工具可能完成了，也可能没有。"
        "下次调用时服务器会重新启动{log}。",
    ),
    "mcp.timeout": (
        "The MCP server {server} did not finish the tool {tool} within {seconds} seconds, so "
        "the call was stopped; the tool may or may not have completed. Check the current state "
        "before running it again.",
        "MCP 服务器 {server} 没有在 {seconds} 秒内完成工具 {tool}，调用已被停止；该工具可能完成了，"
        "也可能没有。再次运行前请先检查当前状态。",
    ),
    "mcp.tool_error": (
        "The tool {tool} of the MCP server {server} reported an error: {text}",
        "MCP 服务器 {server} 的工具 {tool} 报告了一个错误：{text}",
    ),
    "mcp.too_large": (
        "The tool {tool} of the MCP server {server} finished, but its answer was larger than "
        "{size}, the most one answer may hold, so it was not read. The tool did run: check what "
        "it did before running it again, or ask it for less (the server's entry can raise the "
        "limit with \"maxLineBytes\"){log}.",
        "MCP 服务器 {server} 的工具 {tool} 已经完成，但它的回答超过了单个回答的上限 {size}，因此没有"
        "读取。该工具确实运行了：再次运行前请先检查它做了什么，或让它返回更少的内容（可在该服务器的配置"
        "项中用 \"maxLineBytes\" 提高上限）{log}。",
    ),
    "mcp.bad_reply": (
        "The MCP server {server} answered badly: its answer to the tool {tool} could not be "
        "read ({detail}). The call has ended, but what the tool returned is lost: check what it "
        "did before running it again{log}.",
        "MCP 服务器 {server} 的回答有误：它对工具 {tool} 的回答无法读取（{detail}）。调用已经结束，"
        "但工具返回的内容丢失了：再次运行前请先检查它做了什么{log}。",
    ),
    "mcp.start.not_found": ("the command {command} was not found", "找不到命令 {command}"),
    "mcp.start.not_allowed": (
        "the command {command} may not be run (it is not a program, or you lack the "
        "permission to run it)",
        "无法运行命令 {command}（它不是程序，或你没有运行它的权限）",
    ),
    "mcp.start.no_folder": (
        "its working folder {path} does not exist",
        "它的工作文件夹 {path} 不存在",
    ),
    "mcp.log": (" (its log: {path})", "（日志：{path}）"),
    "mcp.status": (" (exit status {code})", "（退出状态 {code}）"),
    # -- providers --------------------------------------------------------------------------
    "provider.web_page": (
        "{who} answered with a web page instead of a model stream. Check the base URL "
        "({base_url}).",
        "{who} 返回了一个网页，而不是模型的数据流。请检查服务地址（{base_url}）。",
    ),
    "provider.timeout": (
        "{who} stopped answering (no data for {seconds} seconds). Check your connection and "
        "try again, or allow a longer timeout.",
        "{who} 停止了响应（{seconds} 秒没有数据）。请检查网络后重试，或把超时时间设长一些。",
    ),
    "provider.connect": (
        "Could not connect to {provider} ({base_url}). Check your network connection and "
        "the base URL.",
        "无法连接到 {provider}（{base_url}）。请检查网络连接和服务地址。",
    ),
    "provider.connect.local": (
        "Could not connect to {provider} ({base_url}). Check your network connection, and "
        "that the server is running if it is a local one, then the base URL.",
        "无法连接到 {provider}（{base_url}）。请检查网络连接；如果是本地服务器，请确认它正在运行，再检查服务地址。",
    ),
    "provider.connect.ollama": (
        "Could not connect to {provider} ({base_url}). Is Ollama running? Start it "
        "(`ollama serve`) and check the address.",
        "无法连接到 {provider}（{base_url}）。Ollama 在运行吗？请启动它（`ollama serve`）并检查地址。",
    ),
    "provider.connect.no_answer": (
        "Could not connect to {provider} ({base_url}): the server closed the connection "
        "without answering. Check that the server is running and that the base URL is its "
        "API's address.",
        "无法连接到 {provider}（{base_url}）：服务器未作任何回答就关闭了连接。请确认服务器正在运行，"
        "并且服务地址是它的 API 地址。",
    ),
    "provider.connection_broke": (
        "The connection to {provider} broke before the answer was complete. Check your "
        "connection and try again.",
        "与 {provider} 的连接在回答完成前断开了。请检查网络后重试。",
    ),
    "provider.undecodable": (
        "{who} sent a response that could not be decoded. Try again.",
        "{who} 发送的响应无法解码。请重试。",
    ),
    "provider.key_refused": (
        "{who} refused the API key ({status}). Check the key.",
        "{who} 拒绝了 API 密钥（{status}）。请检查密钥。",
    ),
    "provider.access_denied": (
        "{who} denied access ({status}){said} Check that the key may use the model {model}.",
        "{who} 拒绝访问（{status}）{said} 请检查这个密钥是否可以使用模型 {model}。",
    ),
    "provider.quota": (
        "{who} is limiting requests ({status}){said} Check the account's plan and billing, "
        "then try again.",
        "{who} 正在限制请求（{status}）{said} 请检查账户的套餐和账单后重试。",
    ),
    "provider.rate_limited": (
        "{who} is limiting requests ({status}){said} Wait a moment and try again.",
        "{who} 正在限制请求（{status}）{said} 请稍等片刻后重试。",
    ),
    "provider.rate_limited_until": (
        "{who} is limiting requests ({status}){said} Try again in {seconds} seconds (after "
        "{at} UTC).",
        "{who} 正在限制请求（{status}）{said} 请在 {seconds} 秒后（UTC {at} 之后）重试。",
    ),
    "provider.no_model": (
        "{who} has no model {model} at {base_url} ({status}){said} Check the model name and "
        "the base URL.",
        "{base_url} 上的 {who} 没有模型 {model}（{status}）{said} 请检查模型名称和服务地址。",
    ),
    "provider.no_model.ollama": (
        "{who} has no model {model} ({status}){said} Download it with `ollama pull {name}`, "
        "or pick another model.",
        "{who} 没有模型 {model}（{status}）{said} 请用 `ollama pull {name}` 下载它，或选择其他模型。",
    ),
    "provider.overloaded": (
        "{who} is overloaded ({status}){said} Try again in a moment.",
        "{who} 当前过载（{status}）{said} 请稍后重试。",
    ),
    "provider.overloaded_until": (
        "{who} is overloaded ({status}){said} Try again in {seconds} seconds (after {at} "
        "UTC).",
        "{who} 当前过载（{status}）{said} 请在 {seconds} 秒后（UTC {at} 之后）重试。",
    ),
    "provider.server_error": (
        "{who} had a problem on its side ({status}){said} Try again in a moment.",
        "{who} 那边出了问题（{status}）{said} 请稍后重试。",
    ),
    "provider.server_error_until": (
        "{who} had a problem on its side ({status}){said} Try again in {seconds} seconds "
        "(after {at} UTC).",
        "{who} 那边出了问题（{status}）{said} 请在 {seconds} 秒后（UTC {at} 之后）重试。",
    ),
    "provider.rejected": (
        "{who} rejected the request ({status}){said} Check the model and its settings.",
        "{who} 拒绝了这个请求（{status}）{said} 请检查模型及其参数。",
    ),
    "provider.context_full": (
        "{who} stopped because the conversation no longer fits the model's context window "
        "({detail}). Start a new conversation or shorten this one.",
        "{who} 停止了，因为对话已超出模型的上下文窗口（{detail}）。请开始新对话，或缩短这个对话。",
    ),
    "provider.error_in_stream": (
        "{who} reported an error in the middle of its answer: {detail}.",
        "{who} 在回答中途报告了一个错误：{detail}。",
    ),
    "provider.ended_early": (
        "{who} ended the stream before the answer was complete.",
        "{who} 在回答完成前结束了数据流。",
    ),
    "provider.bad_json": (
        "{who} sent a stream event that is not valid JSON. Try again; if it keeps happening, "
        "the server or a proxy in between is mangling the stream.",
        "{who} 发送的数据流事件不是有效的 JSON。请重试；如果一直这样，说明服务器或中间的代理破坏了数据流。",
    ),
    "provider.bad_json.body": (
        "{who} sent an answer that is not the JSON its API sends. Try again; if it keeps "
        "happening, the server at the base URL (or a proxy in between) does not answer as "
        "this API does.",
        "{who} 发送的回答不是其 API 应有的 JSON。请重试；如果一直这样，说明服务地址上的服务器"
        "（或中间的代理）没有按这个 API 的方式回答。",
    ),
    "provider.bad_tool_arguments": (
        "{who} sent arguments for the tool {name} that are not a whole JSON object, so the "
        "tool was not run. Resuming asks again.",
        "{who} 为工具 {name} 发送的参数不是完整的 JSON 对象，因此没有运行这个工具。继续将再次询问。",
    ),
    "provider.tool_arguments_cut": (
        "{who} sent arguments for the tool {name} that stop part-way, most likely because the "
        "answer reached the output limit, so the tool was not run. Allow more output tokens "
        "for this model, then resume to ask again.",
        "{who} 为工具 {name} 发送的参数中途断了，很可能是回答达到了输出上限，因此没有运行这个工具。请为这个模型允许更多输出 token，然后继续以再次询问。",
    ),
    "provider.empty_stream": (
        "{who} answered with an empty stream, so nothing arrived. It gave no reason; try "
        "again, and if it happens again the server's log says why (a conversation longer than "
        "the model's context window is a common one).",
        "{who} 返回了一个空的数据流，什么也没有收到。它没有说明原因；请再试一次，如果仍然如此，服务器的日志会说明原因（常见的是对话超过了模型的上下文窗口）。",
    ),
    "provider.empty_stream.reason": (
        "{who} answered with an empty stream, so nothing arrived. Asked again without "
        "streaming, it said why: {reason}",
        "{who} 返回了一个空的数据流，什么也没有收到。不使用流式再次询问时，它说明了原因：{reason}",
    ),
    "provider.too_large": (
        "{who} sent a single piece of its answer larger than {size}, so the request was "
        "stopped there.",
        "{who} 发送的单个回答片段超过了 {size}，因此请求在那里停止了。",
    ),
    "provider.server_at.who": ("The server at {address}", "{address} 上的服务器"),
    "provider.server_at": ("the server at {address}", "{address} 上的服务器"),
    "provider.connect_timeout": (
        "Could not connect to {provider} ({base_url}) within {seconds} seconds. Check your "
        "network connection and the address, then try again.",
        "无法在 {seconds} 秒内连接到 {provider}（{base_url}）。请检查网络连接和地址后重试。",
    ),
    "provider.slow_body": (
        "{who} sent its reply too slowly: it was not complete after {seconds} seconds, so the "
        "request was stopped. Try again later.",
        "{who} 发送回复太慢：{seconds} 秒后仍未发完，因此请求已停止。请稍后再试。",
    ),
    "provider.idle": (
        "{who} sent nothing of the answer for {seconds} seconds (only keep-alive signals, or "
        "nothing at all), so the request was stopped.",
        "{who} 已有 {seconds} 秒没有发送任何回答内容（只有保活信号，或什么都没有），因此请求已停止。",
    ),
    # -- why an answer stopped (StopInfo, described by describe_stop) -------------------------
    "stop.cancelled": (
        "You stopped this answer before it finished.",
        "你在回答完成前停止了它。",
    ),
    "stop.network_error": (
        "The connection to the provider broke before the answer finished.",
        "回答完成前，与服务商的连接断开了。",
    ),
    "stop.app_stopped": (
        "The app stopped before the answer finished.",
        "回答完成前程序停止了。",
    ),
    "stop.provider_error": (
        "The provider reported an error in the middle of the answer.",
        "服务商在回答中途报告了一个错误。",
    ),
    "stop.error": (
        "The answer was cut off by an error ({name}).",
        "回答被一个错误打断了（{name}）。",
    ),
    "stop.max_output": (
        "The answer reached the output limit; resuming continues it.",
        "回答达到了输出上限；继续会接着写下去。",
    ),
    "stop.refusal": (
        "The model declined to answer.",
        "模型拒绝回答。",
    ),
    "stop.context_full": (
        "The conversation no longer fits in the model's context window; start a new "
        "conversation or shorten this one.",
        "对话已超出模型的上下文窗口；请开始新对话，或缩短这个对话。",
    ),
    "stop.context_full_model": (
        "The conversation no longer fits in the context window of {model} ({detail}). Start "
        "a new conversation or shorten this one.",
        "对话已超出 {model} 的上下文窗口（{detail}）。请开始新对话，或缩短这个对话。",
    ),
    "stop.paused": (
        "The provider paused this turn before it finished.",
        "服务商在这一轮完成前暂停了它。",
    ),
    "stop.unknown": (
        "The model stopped for a reason this version does not know ({raw}).",
        "模型因这个版本不认识的原因而停止（{raw}）。",
    ),
}
# fmt: on


def language_of(tag: str | None) -> str:
    """Map a language tag (``"zh_CN"``, ``"zh-Hans"``, ``"en_US"``, None) to one of `LANGUAGES`.

    Any Simplified Chinese tag becomes ``"zh_CN"``; everything else is English.
    """
    normal = (tag or "").replace("-", "_").lower()
    if normal == "zh" or normal.startswith(("zh_cn", "zh_sg", "zh_hans")):
        return "zh_CN"
    return "en"


def sentence(key: str, language: str | None = "en", /, **params: Any) -> str:
    """Return the sentence ``key`` in ``language``, filled with ``params``.

    A parameter that can say itself (a `Phrase`, a nested error, a lease holder: anything
    with a ``sentence(language)`` method) is said in the same language, so no English part
    ends up inside a Chinese sentence.

    Raises:
        KeyError: ``key`` is not in the catalog.
    """
    english, chinese = _SENTENCES[key]
    template = chinese if language_of(language) == "zh_CN" else english
    return template.format(**{name: _said(value, language) for name, value in params.items()})


def _said(value: Any, language: str | None) -> Any:
    say = getattr(value, "sentence", None)
    if callable(say) and not isinstance(value, str):
        return say(language)
    return value


@dataclass(frozen=True)
class Phrase:
    """A part of a sentence from the catalog, said in the language of the sentence it fills.

    ``str()`` is the English.
    """

    key: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def sentence(self, language: str | None = "en") -> str:
        return sentence(self.key, language, **self.params)

    def __str__(self) -> str:
        return self.sentence("en")


#: a text ending in a full-width mark (Chinese 。！？）：…): the next sentence follows it
#: directly, as Chinese is written, without the space English puts between sentences
_FULL_WIDTH_END = re.compile(r"[\u3000-\u303f\uff00-\uffef]$")


def join_sentences(*parts: str) -> str:
    """Sentences (or a sentence and a note) joined as their language writes them.

    A space between English sentences; none after a full-width mark, so two Chinese
    sentences read "…断开了。已收到…", not "…断开了。 已收到…". Empty parts are left out.
    """
    text = ""
    for part in parts:
        part = part.strip()
        if not part:
            continue
        if text and not _FULL_WIDTH_END.search(text):
            text += " "
        text += part
    return text


def has_sentence(key: str) -> bool:
    """True when ``key`` is in the catalog."""
    return key in _SENTENCES


def keys() -> list[str]:
    """Every key of the catalog, sorted (for tests that check each has both languages)."""
    return sorted(_SENTENCES)


_INTERRUPTED_KEYS: Mapping[str, str] = {
    "cancelled": "stop.cancelled",
    "network_error": "stop.network_error",
    "app_stopped": "stop.app_stopped",
    "provider_error": "stop.provider_error",
}


def describe_stop(stop: StopInfo, language: str | None = "en") -> str:
    """One sentence saying why an answer stopped, in ``language``.

    In English the stop's own ``message`` is used when it has one (it may quote the
    provider); in another language the catalog's sentence for the stop's reason and raw
    code, since a provider's words cannot be translated here.
    """
    from .stop import StopReason  # engine.stop imports nothing from here; avoid a cycle

    if language_of(language) == "en" and stop.message:
        return stop.message
    reason = stop.reason
    if reason is StopReason.INTERRUPTED:
        return sentence(_INTERRUPTED_KEYS.get(stop.raw or "", "stop.provider_error"), language)
    if reason is StopReason.OTHER or reason.value not in {
        "max_output",
        "refusal",
        "context_full",
        "paused",
    }:
        if stop.ok:
            return ""
        return sentence("stop.unknown", language, raw=stop.raw or reason.value)
    return sentence(f"stop.{reason.value}", language)
