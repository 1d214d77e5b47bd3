<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>AboutDialog</name>
    <message>
        <location filename="../../ui/window/about_dialog.py" line="199"/>
        <source>About Continuo</source>
        <translation>关于 Continuo</translation>
    </message>
    <message>
        <location filename="../../ui/window/about_dialog.py" line="200"/>
        <source>Continuo</source>
        <translation>Continuo</translation>
    </message>
    <message>
        <location filename="../../ui/window/about_dialog.py" line="201"/>
        <source>Version:</source>
        <translation>版本：</translation>
    </message>
    <message>
        <location filename="../../ui/window/about_dialog.py" line="202"/>
        <source>Data folder:</source>
        <translation>数据文件夹：</translation>
    </message>
    <message>
        <location filename="../../ui/window/about_dialog.py" line="203"/>
        <source>&amp;Bundled software and licences:</source>
        <translation>内含软件及其许可证(&amp;B)：</translation>
    </message>
    <message>
        <location filename="../../ui/window/about_dialog.py" line="204"/>
        <location filename="../../ui/window/about_dialog.py" line="211"/>
        <source>Reading…</source>
        <translation>正在读取…</translation>
    </message>
    <message>
        <location filename="../../ui/window/about_dialog.py" line="205"/>
        <source>Version</source>
        <translation>版本</translation>
    </message>
    <message>
        <location filename="../../ui/window/about_dialog.py" line="206"/>
        <source>Not known</source>
        <translation>未知</translation>
    </message>
    <message>
        <location filename="../../ui/window/about_dialog.py" line="208"/>
        <source>Data folder</source>
        <translation>数据文件夹</translation>
    </message>
    <message>
        <location filename="../../ui/window/about_dialog.py" line="209"/>
        <source>Bundled software and licences</source>
        <translation>内含软件及其许可证</translation>
    </message>
</context>
<context>
    <name>AnswerView</name>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="527"/>
        <source>Assistant answer</source>
        <translation>助手回答</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="528"/>
        <source>Reasoning</source>
        <translation>推理过程</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="611"/>
        <source>Earlier attempt (stopped)</source>
        <translation>之前的尝试（已停止）</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="613"/>
        <source>Earlier attempt (cut off)</source>
        <translation>之前的尝试（被中断）</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="616"/>
        <source>Show the answer Resume wrote again below</source>
        <translation>显示“继续”在下方重写之前的回答</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="631"/>
        <location filename="../../ui/conversation/tool_card.py" line="487"/>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="633"/>
        <location filename="../../ui/conversation/tool_card.py" line="488"/>
        <source>Show all {count} lines</source>
        <translation>显示全部 {count} 行</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="636"/>
        <location filename="../../ui/conversation/tool_card.py" line="491"/>
        <source>Show all {count} characters</source>
        <translation>显示全部 {count} 个字符</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="717"/>
        <source>Stopped. The partial answer above is saved.</source>
        <translation>已停止。上面的部分回答已保存。</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="718"/>
        <source>The answer was cut off. What arrived is saved.</source>
        <translation>回答被中断。已收到的内容已保存。</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="720"/>
        <source>Stopped. The partial answer above could not be saved.</source>
        <translation>已停止。上面的部分回答没能保存。</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="721"/>
        <source>The answer was cut off. What arrived could not be saved.</source>
        <translation>回答被中断。已收到的内容没能保存。</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="725"/>
        <source>The answer reached the output limit.</source>
        <translation>回答已达到输出长度上限。</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="726"/>
        <source>The model declined to answer.</source>
        <translation>模型拒绝了回答。</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="728"/>
        <source>The conversation is too long for the model. Start a new conversation.</source>
        <translation>对话已超出模型能处理的长度。请开始新的对话。</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="730"/>
        <source>The provider paused this answer.</source>
        <translation>服务商暂停了这个回答。</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="731"/>
        <source>The answer stopped for an unknown reason.</source>
        <translation>回答因未知原因停止。</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="748"/>
        <source>What arrived is saved.</source>
        <translation>已收到的内容已保存。</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="750"/>
        <source>What arrived could not be saved.</source>
        <translation>已收到的内容未能保存。</translation>
    </message>
</context>
<context>
    <name>ApprovalSettings</name>
    <message>
        <location filename="../../ui/settings/approval_settings.py" line="83"/>
        <source>Ask before every tool</source>
        <translation>每次使用工具前询问</translation>
    </message>
    <message>
        <location filename="../../ui/settings/approval_settings.py" line="84"/>
        <source>Allow read-only tools without asking</source>
        <translation>无需询问即允许只读工具</translation>
    </message>
    <message>
        <location filename="../../ui/settings/approval_settings.py" line="87"/>
        <source>With this, the server is trusted to tell the truth: a tool runs without asking when its server says it only reads. Nothing checks that it does. A tool that says nothing, or also says it may destroy things, still asks. Choose this only for servers you trust.</source>
        <translation>选择此项，即相信服务器所说属实：服务器说某个工具只读取，它就会不经询问直接运行。没有任何检查确认它真的只读取。什么都没说的工具，或者同时说自己可能破坏内容的工具，仍会询问。只对你信任的服务器选择此项。</translation>
    </message>
    <message>
        <location filename="../../ui/settings/approval_settings.py" line="93"/>
        <source>Tools that run without asking</source>
        <translation>无需询问即可运行的工具</translation>
    </message>
    <message>
        <location filename="../../ui/settings/approval_settings.py" line="94"/>
        <source>None. Choose “Always allow this tool” on a tool&apos;s card.</source>
        <translation>无。请在工具卡片上选择“始终允许此工具”。</translation>
    </message>
    <message>
        <location filename="../../ui/settings/approval_settings.py" line="96"/>
        <source>Revoke</source>
        <translation>撤销</translation>
    </message>
    <message>
        <location filename="../../ui/settings/approval_settings.py" line="98"/>
        <source>Revoke {tool} of {server}</source>
        <translation>撤销 {server} 的 {tool}</translation>
    </message>
</context>
<context>
    <name>ArchiveActions</name>
    <message>
        <location filename="../../ui/archive/actions.py" line="149"/>
        <source>&amp;Export…</source>
        <translation>导出(&amp;E)…</translation>
    </message>
    <message>
        <location filename="../../ui/archive/actions.py" line="151"/>
        <source>Write conversations to a Markdown, JSON or HTML file</source>
        <translation>把对话写入 Markdown、JSON 或 HTML 文件</translation>
    </message>
    <message>
        <location filename="../../ui/archive/actions.py" line="153"/>
        <source>&amp;Import…</source>
        <translation>导入(&amp;I)…</translation>
    </message>
    <message>
        <location filename="../../ui/archive/actions.py" line="155"/>
        <source>Add the conversations of a Continuo or ChatGPT export</source>
        <translation>添加 Continuo 或 ChatGPT 导出文件中的对话</translation>
    </message>
    <message>
        <location filename="../../ui/archive/actions.py" line="157"/>
        <source>&amp;Back up…</source>
        <translation>备份(&amp;B)…</translation>
    </message>
    <message>
        <location filename="../../ui/archive/actions.py" line="158"/>
        <source>Copy every conversation into one backup file</source>
        <translation>把所有对话复制到一个备份文件</translation>
    </message>
    <message>
        <location filename="../../ui/archive/actions.py" line="159"/>
        <source>&amp;Restore from a backup…</source>
        <translation>从备份恢复(&amp;R)…</translation>
    </message>
    <message>
        <location filename="../../ui/archive/actions.py" line="161"/>
        <source>Replace the conversations with a backup&apos;s; the current ones are kept aside</source>
        <translation>用备份中的对话替换现有对话；现有的会另外保留</translation>
    </message>
    <message>
        <location filename="../../ui/archive/actions.py" line="198"/>
        <source>Wait for the export, import or backup under way to finish.</source>
        <translation>请等待正在进行的导出、导入或备份完成。</translation>
    </message>
</context>
<context>
    <name>ArchiveUI</name>
    <message>
        <location filename="../../ui/archive/_shared.py" line="232"/>
        <source>Export conversations</source>
        <translation>导出对话</translation>
    </message>
    <message>
        <location filename="../../ui/archive/_shared.py" line="233"/>
        <source>Import conversations</source>
        <translation>导入对话</translation>
    </message>
    <message>
        <location filename="../../ui/archive/_shared.py" line="234"/>
        <source>Back up the conversations</source>
        <translation>备份对话</translation>
    </message>
    <message>
        <location filename="../../ui/archive/_shared.py" line="235"/>
        <source>Restore from a backup</source>
        <translation>从备份恢复</translation>
    </message>
    <message>
        <location filename="../../ui/archive/_shared.py" line="238"/>
        <source>Markdown (*.md)</source>
        <translation>Markdown (*.md)</translation>
    </message>
    <message>
        <location filename="../../ui/archive/_shared.py" line="239"/>
        <source>JSON (*.json)</source>
        <translation>JSON (*.json)</translation>
    </message>
    <message>
        <location filename="../../ui/archive/_shared.py" line="240"/>
        <source>HTML (*.html)</source>
        <translation>HTML (*.html)</translation>
    </message>
    <message>
        <location filename="../../ui/archive/_shared.py" line="244"/>
        <source>Exports (*.json *.zip);;All files (*)</source>
        <translation>导出文件 (*.json *.zip);;所有文件 (*)</translation>
    </message>
    <message>
        <location filename="../../ui/archive/_shared.py" line="245"/>
        <source>Continuo backups (*.db)</source>
        <translation>Continuo 备份 (*.db)</translation>
    </message>
    <message>
        <location filename="../../ui/archive/_shared.py" line="246"/>
        <source>Continuo backups (*.db *.sqlite3);;All files (*)</source>
        <translation>Continuo 备份 (*.db *.sqlite3);;所有文件 (*)</translation>
    </message>
    <message>
        <location filename="../../ui/archive/_shared.py" line="296"/>
        <source>1 conversation</source>
        <translation>1 个对话</translation>
    </message>
    <message>
        <location filename="../../ui/archive/_shared.py" line="297"/>
        <source>{count} conversations</source>
        <translation>{count} 个对话</translation>
    </message>
    <message>
        <location filename="../../ui/archive/_shared.py" line="301"/>
        <source>1 message</source>
        <translation>1 条消息</translation>
    </message>
    <message>
        <location filename="../../ui/archive/_shared.py" line="302"/>
        <source>{count} messages</source>
        <translation>{count} 条消息</translation>
    </message>
    <message>
        <location filename="../../ui/archive/_shared.py" line="333"/>
        <source>{path} is the conversation file in use, not a backup. Choose a backup file.</source>
        <translation>{path} 是正在使用的对话文件，不是备份。请选择一个备份文件。</translation>
    </message>
    <message>
        <location filename="../../ui/archive/_shared.py" line="365"/>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <location filename="../../ui/archive/_shared.py" line="366"/>
        <source>Import</source>
        <translation>导入</translation>
    </message>
    <message>
        <location filename="../../ui/archive/_shared.py" line="367"/>
        <source>Back up</source>
        <translation>备份</translation>
    </message>
    <message>
        <location filename="../../ui/archive/_shared.py" line="368"/>
        <source>Restore</source>
        <translation>恢复</translation>
    </message>
</context>
<context>
    <name>BackupFlow</name>
    <message>
        <location filename="../../ui/archive/backup_flow.py" line="53"/>
        <source>Backing up the conversations…</source>
        <translation>正在备份对话…</translation>
    </message>
    <message>
        <location filename="../../ui/archive/backup_flow.py" line="61"/>
        <source>The backup was cancelled; no file was written.</source>
        <translation>备份已取消；没有写入任何文件。</translation>
    </message>
    <message>
        <location filename="../../ui/archive/backup_flow.py" line="71"/>
        <source>The conversations were not backed up.</source>
        <translation>对话没有备份。</translation>
    </message>
    <message>
        <location filename="../../ui/archive/backup_flow.py" line="74"/>
        <source>The backup is the file {path}</source>
        <translation>备份文件是 {path}</translation>
    </message>
    <message>
        <location filename="../../ui/archive/backup_flow.py" line="76"/>
        <source>The conversations are backed up.</source>
        <translation>对话已备份。</translation>
    </message>
    <message>
        <location filename="../../ui/archive/backup_flow.py" line="79"/>
        <source>The conversations are backed up ({count}).</source>
        <translation>对话已备份（{count}）。</translation>
    </message>
</context>
<context>
    <name>Composer</name>
    <message>
        <location filename="../../ui/conversation/composer.py" line="39"/>
        <source>Message</source>
        <translation>消息</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/composer.py" line="41"/>
        <source>Write a message… (Enter sends, Shift+Enter for a new line)</source>
        <translation>输入消息…（Enter 发送，Shift+Enter 换行）</translation>
    </message>
</context>
<context>
    <name>ComposerBar</name>
    <message>
        <location filename="../../ui/conversation/composer.py" line="123"/>
        <location filename="../../ui/conversation/composer.py" line="124"/>
        <source>Send</source>
        <extracomment>Enter or Send: the text to send Esc in the composer, or Stop</extracomment>
        <translation>发送</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/composer.py" line="125"/>
        <source>Send (Enter)</source>
        <translation>发送（Enter）</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/composer.py" line="126"/>
        <location filename="../../ui/conversation/composer.py" line="127"/>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/composer.py" line="129"/>
        <source>Stop the answer (Esc)</source>
        <translation>停止回答（Esc）</translation>
    </message>
</context>
<context>
    <name>Controller</name>
    <message>
        <location filename="../../ui/common/errors.py" line="190"/>
        <source>Something went wrong inside the app ({name}); the details are in its log.</source>
        <translation>应用内部出错（{name}）；详细信息已写入日志。</translation>
    </message>
    <message>
        <location filename="../../ui/common/errors.py" line="199"/>
        <source>Could not reach the provider.</source>
        <translation>无法连接到服务商。</translation>
    </message>
    <message>
        <location filename="../../ui/common/errors.py" line="202"/>
        <source>Something went wrong ({name}).</source>
        <translation>出了点问题（{name}）。</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/resume_points.py" line="76"/>
        <source>This conversation is open in another window.</source>
        <translation>这个对话已在另一个窗口中打开。</translation>
    </message>
    <message>
        <location filename="../../ui/common/errors.py" line="128"/>
        <source>No model provider is set up yet. Open Settings and add one (for example Ollama or OpenAI).</source>
        <extracomment>no provider is set up: add one in Settings what helps after any failure the window says no answer was cut off what arrived was stored what arrived could not be stored the person&apos;s message was not stored: it is still in the composer (that run only)</extracomment>
        <translation>还没有设置模型服务商。请打开设置添加一个（例如 Ollama 或 OpenAI）。</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/conversations.py" line="443"/>
        <source>Part of this conversation&apos;s record is damaged ({reason}). Its messages are shown as far as they could be read.</source>
        <translation>这个对话的记录有一部分已损坏（{reason}）。能读取的消息都已显示。</translation>
    </message>
    <message>
        <location filename="../../ui/controller.py" line="606"/>
        <source>{title} (branch)</source>
        <translation>{title}（分支）</translation>
    </message>
</context>
<context>
    <name>ConversationCommands</name>
    <message>
        <location filename="../../ui/conversation/commands.py" line="66"/>
        <source>An answer is still coming; press Esc to stop it.</source>
        <extracomment>the message given to the controller and not yet stored: the composer keeps it</extracomment>
        <translation>回答仍在生成中；按 Esc 可停止。</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/commands.py" line="123"/>
        <source>Rename conversation</source>
        <translation>重命名对话</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/commands.py" line="124"/>
        <source>Title:</source>
        <translation>标题：</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/commands.py" line="159"/>
        <source>Delete conversation</source>
        <translation>删除对话</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/commands.py" line="160"/>
        <source>Delete “{title}”? This cannot be undone.</source>
        <translation>删除“{title}”？此操作无法撤销。</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/commands.py" line="163"/>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/commands.py" line="184"/>
        <source>Message copied</source>
        <translation>已复制消息</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/commands.py" line="188"/>
        <source>Wait for the answer to finish, or stop it, first.</source>
        <translation>请先等待回答完成，或先停止它。</translation>
    </message>
</context>
<context>
    <name>ConversationHeader</name>
    <message>
        <location filename="../../ui/window/header.py" line="38"/>
        <location filename="../../ui/window/header.py" line="39"/>
        <source>Settings</source>
        <extracomment>shows the system prompt (`ui.conversation.system_prompt.SystemPromptEditor` runs it)</extracomment>
        <translation>设置</translation>
    </message>
    <message>
        <location filename="../../ui/window/header.py" line="40"/>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <location filename="../../ui/window/header.py" line="41"/>
        <source>The model that answers in this conversation</source>
        <translation>在此对话中回答的模型</translation>
    </message>
    <message>
        <location filename="../../ui/window/header.py" line="42"/>
        <source>No model</source>
        <translation>未选择模型</translation>
    </message>
</context>
<context>
    <name>ErrorBanner</name>
    <message>
        <location filename="../../ui/common/errors.py" line="247"/>
        <source>Open settings</source>
        <extracomment>after these, Resume is all that helps: when the failure cut off an answer, that answer&apos;s row says what happened and the banner stays hidden what helps after these is in the window&apos;s settings: the banner links to them the engine&apos;s sentence, what was kept, what helps the words of the link to the settings (&quot;&quot; for none)</extracomment>
        <translation>打开设置</translation>
    </message>
    <message>
        <location filename="../../ui/common/errors.py" line="257"/>
        <source>What arrived is saved.</source>
        <translation>已收到的内容已保存。</translation>
    </message>
    <message>
        <location filename="../../ui/common/errors.py" line="258"/>
        <source>What arrived could not be saved.</source>
        <translation>已收到的内容没能保存。</translation>
    </message>
    <message>
        <location filename="../../ui/common/errors.py" line="259"/>
        <source>Your message was not sent; it is still in the box below.</source>
        <translation>你的消息没有发送，它仍在下方的输入框中。</translation>
    </message>
    <message>
        <location filename="../../ui/common/errors.py" line="271"/>
        <source>Free some disk space, then press Send again.</source>
        <translation>请腾出一些磁盘空间，然后再次按“发送”。</translation>
    </message>
    <message>
        <location filename="../../ui/common/errors.py" line="274"/>
        <source>Check the data folder&apos;s permissions, then press Send again.</source>
        <translation>请检查数据文件夹的权限，然后再次按“发送”。</translation>
    </message>
    <message>
        <location filename="../../ui/common/errors.py" line="277"/>
        <source>Press Send to try again.</source>
        <translation>按“发送”再试一次。</translation>
    </message>
    <message>
        <location filename="../../ui/common/errors.py" line="284"/>
        <source>Press Resume to carry on.</source>
        <translation>按“继续”接着进行。</translation>
    </message>
    <message>
        <location filename="../../ui/common/errors.py" line="285"/>
        <location filename="../../ui/common/errors.py" line="288"/>
        <source>Then press Resume to carry on.</source>
        <translation>然后按“继续”接着进行。</translation>
    </message>
    <message>
        <location filename="../../ui/common/errors.py" line="291"/>
        <source>Free some disk space, then press Resume.</source>
        <translation>请腾出一些磁盘空间，然后按“继续”。</translation>
    </message>
    <message>
        <location filename="../../ui/common/errors.py" line="294"/>
        <source>Check the data folder and its permissions, then press Resume.</source>
        <translation>请检查数据文件夹及其权限，然后点击“继续”。</translation>
    </message>
    <message>
        <location filename="../../ui/common/errors.py" line="297"/>
        <source>Close the conversation in the other window first.</source>
        <translation>请先在另一个窗口中关闭这个对话。</translation>
    </message>
    <message>
        <location filename="../../ui/common/errors.py" line="300"/>
        <source>Start a new conversation with New chat.</source>
        <translation>请用“新对话”开始一个新对话。</translation>
    </message>
    <message>
        <location filename="../../ui/common/errors.py" line="303"/>
        <source>Install a newer Continuo to open it.</source>
        <translation>请安装更新版本的 Continuo 来打开它。</translation>
    </message>
    <message>
        <location filename="../../ui/common/errors.py" line="306"/>
        <source>Restore the conversation file from a backup.</source>
        <translation>请从备份恢复对话文件。</translation>
    </message>
    <message>
        <location filename="../../ui/common/errors.py" line="309"/>
        <source>Check your account on the provider&apos;s website.</source>
        <translation>请到服务商的网站上检查你的账户。</translation>
    </message>
    <message>
        <location filename="../../ui/window/error_banner.py" line="80"/>
        <source>Error</source>
        <extracomment>the link&apos;s address: the banner emits `settingsWanted` when it is activated the person followed the link to the settings</extracomment>
        <translation>错误</translation>
    </message>
</context>
<context>
    <name>ExportDialog</name>
    <message>
        <location filename="../../ui/archive/export_flow.py" line="203"/>
        <source>Export conversations</source>
        <translation>导出对话</translation>
    </message>
    <message>
        <location filename="../../ui/archive/export_flow.py" line="208"/>
        <source>This conversation: {title}</source>
        <translation>这个对话：{title}</translation>
    </message>
    <message>
        <location filename="../../ui/archive/export_flow.py" line="210"/>
        <source>This conversation</source>
        <translation>这个对话</translation>
    </message>
    <message>
        <location filename="../../ui/archive/export_flow.py" line="213"/>
        <source>All conversations</source>
        <translation>所有对话</translation>
    </message>
    <message>
        <location filename="../../ui/archive/export_flow.py" line="224"/>
        <source>Markdown, to read</source>
        <translation>Markdown，便于阅读</translation>
    </message>
    <message>
        <location filename="../../ui/archive/export_flow.py" line="226"/>
        <source>JSON, to keep or import again (everything, every version)</source>
        <translation>JSON，便于保存或再次导入（全部内容，所有版本）</translation>
    </message>
    <message>
        <location filename="../../ui/archive/export_flow.py" line="229"/>
        <source>HTML, one page to share</source>
        <translation>HTML，一个便于分享的网页</translation>
    </message>
    <message>
        <location filename="../../ui/archive/export_flow.py" line="233"/>
        <source>Format:</source>
        <translation>格式：</translation>
    </message>
    <message>
        <location filename="../../ui/archive/export_flow.py" line="234"/>
        <source>Export:</source>
        <translation>导出：</translation>
    </message>
    <message>
        <location filename="../../ui/archive/export_flow.py" line="239"/>
        <source>Export…</source>
        <translation>导出…</translation>
    </message>
</context>
<context>
    <name>ExportFlow</name>
    <message>
        <location filename="../../ui/archive/export_flow.py" line="102"/>
        <source>Exporting the conversations…</source>
        <translation>正在导出对话…</translation>
    </message>
    <message>
        <location filename="../../ui/archive/export_flow.py" line="119"/>
        <source>The export was cancelled; no file was written.</source>
        <translation>导出已取消；没有写入任何文件。</translation>
    </message>
    <message>
        <location filename="../../ui/archive/export_flow.py" line="123"/>
        <source>The conversations were not exported.</source>
        <translation>对话没有导出。</translation>
    </message>
    <message>
        <location filename="../../ui/archive/export_flow.py" line="129"/>
        <source>The attached files&apos; originals ({count}) are in the folder {folder}</source>
        <translation>附件原件（{count} 个）在文件夹 {folder} 中</translation>
    </message>
    <message>
        <location filename="../../ui/archive/export_flow.py" line="134"/>
        <source>Exported {count}, {messages}.</source>
        <translation>已导出 {count}，{messages}。</translation>
    </message>
    <message>
        <location filename="../../ui/archive/export_flow.py" line="155"/>
        <source>It is written as {format}, as its name ends in {suffix} ({chosen} was chosen in the list).</source>
        <translation>文件以 {format} 格式写入，因为它的名字以 {suffix} 结尾（列表中选的是 {chosen}）。</translation>
    </message>
    <message>
        <location filename="../../ui/archive/export_flow.py" line="168"/>
        <source>It is written as {format}, though its name ends in {suffix}.</source>
        <translation>文件以 {format} 格式写入，虽然它的名字以 {suffix} 结尾。</translation>
    </message>
    <message>
        <location filename="../../ui/archive/export_flow.py" line="177"/>
        <source>Markdown</source>
        <translation>Markdown</translation>
    </message>
    <message>
        <location filename="../../ui/archive/export_flow.py" line="178"/>
        <source>JSON</source>
        <translation>JSON</translation>
    </message>
    <message>
        <location filename="../../ui/archive/export_flow.py" line="179"/>
        <source>HTML</source>
        <translation>HTML</translation>
    </message>
    <message>
        <location filename="../../ui/archive/export_flow.py" line="126"/>
        <source>The export is the file {path}</source>
        <translation>导出文件是 {path}</translation>
    </message>
</context>
<context>
    <name>FindBar</name>
    <message>
        <location filename="../../ui/search/find_bar.py" line="63"/>
        <location filename="../../ui/search/find_bar.py" line="64"/>
        <source>Find in this conversation</source>
        <translation>在这个对话中查找</translation>
    </message>
    <message>
        <location filename="../../ui/search/find_bar.py" line="65"/>
        <source>Previous match (Shift+Enter)</source>
        <translation>上一个匹配（Shift+Enter）</translation>
    </message>
    <message>
        <location filename="../../ui/search/find_bar.py" line="66"/>
        <source>Previous match</source>
        <translation>上一个匹配</translation>
    </message>
    <message>
        <location filename="../../ui/search/find_bar.py" line="67"/>
        <source>Next match (Enter)</source>
        <translation>下一个匹配（Enter）</translation>
    </message>
    <message>
        <location filename="../../ui/search/find_bar.py" line="68"/>
        <source>Next match</source>
        <translation>下一个匹配</translation>
    </message>
    <message>
        <location filename="../../ui/search/find_bar.py" line="69"/>
        <source>Close (Esc)</source>
        <translation>关闭（Esc）</translation>
    </message>
    <message>
        <location filename="../../ui/search/find_bar.py" line="70"/>
        <source>Close find</source>
        <translation>关闭查找</translation>
    </message>
    <message>
        <location filename="../../ui/search/find_bar.py" line="101"/>
        <source>No matches</source>
        <translation>没有匹配</translation>
    </message>
    <message>
        <location filename="../../ui/search/find_bar.py" line="103"/>
        <source>{current} of {total}</source>
        <translation>第 {current} 个，共 {total} 个</translation>
    </message>
</context>
<context>
    <name>FoldedCallsView</name>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="606"/>
        <source>{count} more calls of this answer are not shown</source>
        <translation>此回答另有 {count} 个调用未显示</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="610"/>
        <source>{count} more calls of this answer did not run: too many calls in one answer (at most {limit} run)</source>
        <translation>此回答另有 {count} 个调用没有运行：一个回答中的调用太多（最多运行 {limit} 个）</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="619"/>
        <source> and {count} more</source>
        <translation> 等另外 {count} 个</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="620"/>
        <source>Tools asked for: {names}</source>
        <translation>请求的工具：{names}</translation>
    </message>
</context>
<context>
    <name>ImportDialog</name>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="440"/>
        <source>Import MCP servers</source>
        <translation>导入 MCP 服务器</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="443"/>
        <source>Paste a JSON object with &quot;mcpServers&quot; (Claude desktop, Cursor, LM Studio) or &quot;servers&quot; (VS Code).</source>
        <translation>粘贴一个包含 &quot;mcpServers&quot;（Claude desktop、Cursor、LM Studio）或 &quot;servers&quot;（VS Code）的 JSON 对象。</translation>
    </message>
</context>
<context>
    <name>ImportFlow</name>
    <message>
        <location filename="../../ui/archive/import_flow.py" line="53"/>
        <source>Importing the conversations…</source>
        <translation>正在导入对话…</translation>
    </message>
    <message>
        <location filename="../../ui/archive/import_flow.py" line="64"/>
        <source>The import was cancelled; the conversations imported before it stay.</source>
        <translation>导入已取消；之前已导入的对话会保留。</translation>
    </message>
    <message>
        <location filename="../../ui/archive/import_flow.py" line="68"/>
        <source>The conversations were not imported.</source>
        <translation>对话没有导入。</translation>
    </message>
    <message>
        <location filename="../../ui/archive/import_flow.py" line="78"/>
        <source>Imported {count}, {messages}.</source>
        <translation>已导入 {count}，{messages}。</translation>
    </message>
    <message>
        <location filename="../../ui/archive/import_flow.py" line="83"/>
        <source>No conversation was imported.</source>
        <translation>没有导入任何对话。</translation>
    </message>
    <message>
        <location filename="../../ui/archive/import_flow.py" line="87"/>
        <source>One conversation was already here.</source>
        <translation>有 1 个对话已经存在。</translation>
    </message>
    <message>
        <location filename="../../ui/archive/import_flow.py" line="89"/>
        <source>{count} conversations were already here.</source>
        <translation>有 {count} 个对话已经存在。</translation>
    </message>
    <message>
        <location filename="../../ui/archive/import_flow.py" line="93"/>
        <source>Pictures brought in with their messages: {count}.</source>
        <translation>随消息导入的图片：{count} 张。</translation>
    </message>
    <message>
        <location filename="../../ui/archive/import_flow.py" line="100"/>
        <source>Pictures the export did not hold or that could not be read: {count}. A note stands in the place of each.</source>
        <translation>导出文件中没有或无法读取的图片：{count} 张。每张的位置都留有一条说明。</translation>
    </message>
    <message>
        <location filename="../../ui/archive/import_flow.py" line="109"/>
        <source>Pictures or attachments that could not be imported: {count}. A note stands in the place of each.</source>
        <translation>无法导入的图片或附件：{count} 个。每一处都用一条说明代替。</translation>
    </message>
    <message>
        <location filename="../../ui/archive/import_flow.py" line="115"/>
        <source>Conversations that could not be imported: {count}</source>
        <translation>无法导入的对话：{count} 个</translation>
    </message>
    <message>
        <location filename="../../ui/archive/import_flow.py" line="119"/>
        <source>(untitled)</source>
        <translation>（无标题）</translation>
    </message>
    <message>
        <location filename="../../ui/archive/import_flow.py" line="123"/>
        <source>… and {count} more.</source>
        <translation>……还有 {count} 个。</translation>
    </message>
</context>
<context>
    <name>ImportedPromptBar</name>
    <message>
        <location filename="../../ui/conversation/imported_prompt.py" line="91"/>
        <source>Imported with this conversation: a system prompt. It is not used until you accept it.</source>
        <translation>这个对话是连同一个系统提示一起导入的。在你接受之前，它不会被使用。</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/imported_prompt.py" line="95"/>
        <source>Imported system prompt, not used</source>
        <translation>导入的系统提示（未使用）</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/imported_prompt.py" line="96"/>
        <source>Use this prompt</source>
        <translation>使用这个提示</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/imported_prompt.py" line="98"/>
        <source>Every message of this conversation will be sent with these instructions.</source>
        <translation>这个对话的每条消息都会连同这些指令一起发送。</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/imported_prompt.py" line="100"/>
        <source>Discard</source>
        <translation>丢弃</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/imported_prompt.py" line="101"/>
        <source>Imported system prompt</source>
        <translation>导入的系统提示</translation>
    </message>
</context>
<context>
    <name>LinkCheck</name>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="213"/>
        <source>Open this link?</source>
        <translation>打开这个链接？</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="214"/>
        <source>The link&apos;s text shows {named}, but it goes to {host}:
{url}</source>
        <translation>链接文字显示的是 {named}，但它实际指向 {host}：
{url}</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="217"/>
        <source>Open {host}</source>
        <translation>打开 {host}</translation>
    </message>
</context>
<context>
    <name>MCPFile</name>
    <message>
        <location filename="../../ui/settings/mcp_file.py" line="89"/>
        <source>The MCP server file {path} cannot be used ({detail}). It was not changed; fix it, or move it aside to start with no servers.</source>
        <extracomment>the entry&apos;s key listing which of its values are in the keychain (&quot;env.NAME&quot;, &quot;headers.Name&quot;)</extracomment>
        <translation>无法使用 MCP 服务器文件 {path}（{detail}）。该文件未被更改；请修复它，或将其移开以便从无服务器开始。</translation>
    </message>
    <message>
        <location filename="../../ui/settings/mcp_file.py" line="244"/>
        <source>Could not write the MCP server file {path} ({error}). It was not changed.</source>
        <translation>无法写入 MCP 服务器文件 {path}（{error}）。该文件未被更改。</translation>
    </message>
    <message>
        <location filename="../../ui/settings/mcp_file.py" line="427"/>
        <source>Could not save the value of {what} of the MCP server {server} in the system keychain ({error}). Unlock the keychain and try again.</source>
        <translation>无法将 MCP 服务器 {server} 的 {what} 的值保存到系统钥匙串（{error}）。请解锁钥匙串后重试。</translation>
    </message>
    <message>
        <location filename="../../ui/settings/mcp_file.py" line="220"/>
        <source>not UTF-8 text: {r}</source>
        <translation>不是 UTF-8 文本：{r}</translation>
    </message>
    <message>
        <location filename="../../ui/settings/mcp_file.py" line="224"/>
        <source>not valid JSON: {msg} at line {line}</source>
        <translation>不是有效的 JSON：{msg}，位于第 {line} 行</translation>
    </message>
    <message>
        <location filename="../../ui/settings/mcp_file.py" line="228"/>
        <source>it does not hold a JSON object</source>
        <translation>其中不包含 JSON 对象</translation>
    </message>
    <message>
        <location filename="../../ui/settings/mcp_file.py" line="260"/>
        <source>the server {server} has a bad &quot;{field}&quot;: {problem}</source>
        <translation>服务器 {server} 的“{field}”有误：{problem}</translation>
    </message>
    <message>
        <location filename="../../ui/settings/mcp_file.py" line="460"/>
        <source>Could not read a value of the MCP server {server} from the system keychain ({error}). Unlock the keychain and try again.</source>
        <translation>无法从系统钥匙串读取 MCP 服务器 {server} 的值（{error}）。请解锁钥匙串后重试。</translation>
    </message>
    <message>
        <location filename="../../ui/settings/mcp_file.py" line="235"/>
        <source>The MCP server file {path} is a link to {target}, which cannot be written. The link was left as it is; fix or remove it, then save again.</source>
        <translation>MCP 服务器文件 {path} 是指向 {target} 的链接，无法写入。该链接保持原样；请修复或删除它，然后再次保存。</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <location filename="../../ui/main_window.py" line="369"/>
        <source>Continuo</source>
        <translation>Continuo</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="373"/>
        <source>{title} — Continuo</source>
        <translation>{title} — Continuo</translation>
    </message>
</context>
<context>
    <name>MessageActions</name>
    <message>
        <location filename="../../ui/conversation/message_actions.py" line="144"/>
        <location filename="../../ui/conversation/message_actions.py" line="145"/>
        <source>Previous version</source>
        <translation>上一个版本</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_actions.py" line="146"/>
        <location filename="../../ui/conversation/message_actions.py" line="147"/>
        <source>Next version</source>
        <translation>下一个版本</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_actions.py" line="148"/>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_actions.py" line="149"/>
        <source>Copy the whole message (its Markdown)</source>
        <translation>复制整条消息（Markdown 原文）</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_actions.py" line="150"/>
        <source>Copy message</source>
        <translation>复制消息</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_actions.py" line="151"/>
        <source>Regenerate</source>
        <translation>重新生成</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_actions.py" line="152"/>
        <source>Write another answer; this one stays as a version</source>
        <translation>重新写一个回答；这个回答作为一个版本保留</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_actions.py" line="153"/>
        <source>Edit</source>
        <translation>编辑</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_actions.py" line="154"/>
        <source>Change this message and send it again as a new version</source>
        <translation>修改这条消息，并作为新版本重新发送</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_actions.py" line="155"/>
        <source>Branch</source>
        <translation>分支</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_actions.py" line="157"/>
        <source>Branch into a new chat: a copy of the conversation up to here</source>
        <translation>分支到新对话：复制到此处为止的对话</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_actions.py" line="159"/>
        <source>Branch into a new chat</source>
        <translation>分支到新对话</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_actions.py" line="166"/>
        <source>Regenerate with</source>
        <translation>重新生成，使用</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_actions.py" line="177"/>
        <source>No other model is set up</source>
        <translation>没有设置其他模型</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_actions.py" line="202"/>
        <source>Version {n} of {count}</source>
        <translation>第 {n} 个版本，共 {count} 个</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_actions.py" line="215"/>
        <source>{count} tokens</source>
        <translation>{count} 个 token</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_actions.py" line="218"/>
        <source>{rate} tokens/s</source>
        <translation>{rate} token/秒</translation>
    </message>
</context>
<context>
    <name>NoticeView</name>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="805"/>
        <source>Resumed: the cut-off answer is redone</source>
        <translation>已继续：重新生成被中断的回答</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="806"/>
        <source>Resumed: continuing after the output limit</source>
        <translation>已继续：从输出上限处接着写</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="807"/>
        <source>Goal not reached yet: carrying on</source>
        <translation>目标尚未达成：继续进行</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="812"/>
        <source>Resumed</source>
        <translation>已继续</translation>
    </message>
</context>
<context>
    <name>PairsTable</name>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="83"/>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="83"/>
        <source>Value</source>
        <translation>值</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="83"/>
        <source>Keychain</source>
        <translation>钥匙串</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="85"/>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="86"/>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="90"/>
        <source>Kept in the keychain; leave empty to keep it</source>
        <translation>已保存在钥匙串中；留空则保持不变</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="92"/>
        <source>Keep in keychain</source>
        <translation>保存在钥匙串中</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="94"/>
        <source>Keep this value in the system keychain instead of mcp.json</source>
        <translation>将此值保存在系统钥匙串中，而不是 mcp.json</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="97"/>
        <source>No system keychain was found: values are kept in mcp.json, a file only your user account can read.</source>
        <translation>未找到系统钥匙串：值将保存在 mcp.json 中，该文件只有你的用户账户可以读取。</translation>
    </message>
</context>
<context>
    <name>ProgressDialog</name>
    <message>
        <location filename="../../ui/archive/_shared.py" line="467"/>
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
</context>
<context>
    <name>ProviderPage</name>
    <message>
        <location filename="../../ui/settings/provider_page.py" line="197"/>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <location filename="../../ui/settings/provider_page.py" line="198"/>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <location filename="../../ui/settings/provider_page.py" line="199"/>
        <source>Forget key</source>
        <translation>清除密钥</translation>
    </message>
    <message>
        <location filename="../../ui/settings/provider_page.py" line="202"/>
        <source>Ask the server</source>
        <translation>由服务器决定</translation>
    </message>
    <message>
        <location filename="../../ui/settings/provider_page.py" line="203"/>
        <source>Use for new conversations</source>
        <translation>用于新对话</translation>
    </message>
    <message>
        <location filename="../../ui/settings/provider_page.py" line="204"/>
        <source>Test connection</source>
        <translation>测试连接</translation>
    </message>
    <message>
        <location filename="../../ui/settings/provider_page.py" line="205"/>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <location filename="../../ui/settings/provider_page.py" line="206"/>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <location filename="../../ui/settings/provider_page.py" line="207"/>
        <source>Base URL</source>
        <translation>基础 URL</translation>
    </message>
    <message>
        <location filename="../../ui/settings/provider_page.py" line="208"/>
        <location filename="../../ui/settings/provider_page.py" line="211"/>
        <source>API key</source>
        <translation>API 密钥</translation>
    </message>
    <message>
        <location filename="../../ui/settings/provider_page.py" line="209"/>
        <source>Default model</source>
        <translation>默认模型</translation>
    </message>
    <message>
        <location filename="../../ui/settings/provider_page.py" line="210"/>
        <source>Providers</source>
        <translation>服务商</translation>
    </message>
    <message>
        <location filename="../../ui/settings/provider_page.py" line="241"/>
        <location filename="../../ui/settings/provider_page.py" line="398"/>
        <source>{name} (default)</source>
        <translation>{name}（默认）</translation>
    </message>
    <message>
        <location filename="../../ui/settings/provider_page.py" line="312"/>
        <location filename="../../ui/settings/provider_page.py" line="321"/>
        <source>The saved key will be forgotten</source>
        <translation>已保存的密钥将被清除</translation>
    </message>
    <message>
        <location filename="../../ui/settings/provider_page.py" line="314"/>
        <location filename="../../ui/settings/provider_page.py" line="322"/>
        <source>A key is saved; leave empty to keep it</source>
        <translation>已保存密钥；留空则保持不变</translation>
    </message>
    <message>
        <location filename="../../ui/settings/provider_page.py" line="316"/>
        <location filename="../../ui/settings/provider_page.py" line="323"/>
        <source>Not set (local servers need none)</source>
        <translation>未设置（本地服务器无需密钥）</translation>
    </message>
    <message>
        <location filename="../../ui/settings/provider_page.py" line="471"/>
        <source>Connecting…</source>
        <translation>正在连接…</translation>
    </message>
    <message numerus="yes">
        <location filename="../../ui/settings/provider_page.py" line="495"/>
        <source>Connected. %n model(s): {names}</source>
        <translation>
            <numerusform>连接成功。共 %n 个模型：{names}</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../../ui/settings/provider_page.py" line="497"/>
        <source>Connected, but the server lists no models.</source>
        <translation>连接成功，但服务器没有列出任何模型。</translation>
    </message>
</context>
<context>
    <name>QAbstractFileIconProvider</name>
    <message>
        <location filename="../../ui/common/qt_strings.py" line="33"/>
        <source>Drive</source>
        <translation>驱动器</translation>
    </message>
    <message>
        <location filename="../../ui/common/qt_strings.py" line="34"/>
        <source>Folder</source>
        <comment>All other platforms</comment>
        <translation>文件夹</translation>
    </message>
    <message>
        <location filename="../../ui/common/qt_strings.py" line="35"/>
        <source>Shortcut</source>
        <comment>All other platforms</comment>
        <translation>快捷方式</translation>
    </message>
    <message>
        <location filename="../../ui/common/qt_strings.py" line="36"/>
        <source>Unknown</source>
        <translation>未知</translation>
    </message>
</context>
<context>
    <name>QFileDialog</name>
    <message>
        <location filename="../../ui/common/qt_strings.py" line="31"/>
        <source>&amp;Look in:</source>
        <translation>查找范围(&amp;L)：</translation>
    </message>
    <message>
        <location filename="../../ui/common/qt_strings.py" line="32"/>
        <source>Files of &amp;type:</source>
        <translation>文件类型(&amp;T)：</translation>
    </message>
</context>
<context>
    <name>RestoreFlow</name>
    <message>
        <location filename="../../ui/archive/restore_flow.py" line="117"/>
        <source>The backup was not restored; your conversations are as they were.</source>
        <translation>备份没有恢复；你的对话保持原样。</translation>
    </message>
    <message>
        <location filename="../../ui/archive/restore_flow.py" line="85"/>
        <source>Restoring the backup…</source>
        <translation>正在恢复备份…</translation>
    </message>
    <message>
        <location filename="../../ui/archive/restore_flow.py" line="100"/>
        <source>The conversations you had before are kept in {path}</source>
        <translation>你之前的对话保存在 {path}</translation>
    </message>
    <message>
        <location filename="../../ui/archive/restore_flow.py" line="107"/>
        <source>The backup is restored ({count}).</source>
        <translation>备份已恢复（{count}）。</translation>
    </message>
    <message>
        <location filename="../../ui/archive/restore_flow.py" line="116"/>
        <source>The chosen file is not a Continuo backup. Nothing changed.</source>
        <translation>所选文件不是 Continuo 备份。什么都没有改动。</translation>
    </message>
    <message>
        <location filename="../../ui/archive/restore_flow.py" line="140"/>
        <source>never</source>
        <translation>从未</translation>
    </message>
    <message>
        <location filename="../../ui/archive/restore_flow.py" line="145"/>
        <source>Restore from a backup</source>
        <translation>从备份恢复</translation>
    </message>
    <message>
        <location filename="../../ui/archive/restore_flow.py" line="147"/>
        <source>Replace your conversations with the backup&apos;s ({count}, last changed {when})?</source>
        <translation>用备份中的对话（{count}，最后修改于 {when}）替换你现有的对话吗？</translation>
    </message>
    <message>
        <location filename="../../ui/archive/restore_flow.py" line="150"/>
        <source>Nothing is deleted: the current conversation file is kept in {folder} as {name}.before-restore-&lt;date and time&gt;. Answers being written now are stopped and saved first.

Backup: {path}</source>
        <translation>不会删除任何内容：当前的对话文件会以 {name}.before-restore-&lt;日期和时间&gt; 的名字保存在 {folder}。正在生成的回答会先停止并保存。

备份：{path}</translation>
    </message>
    <message>
        <location filename="../../ui/archive/restore_flow.py" line="154"/>
        <source>Restore</source>
        <translation>恢复</translation>
    </message>
</context>
<context>
    <name>ResumeBar</name>
    <message>
        <location filename="../../ui/conversation/resume_bar.py" line="92"/>
        <source>The model has not answered yet.</source>
        <extracomment>the person pressed Resume the point shown (None: nothing to resume, or held elsewhere)</extracomment>
        <translation>模型尚未回答。</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/resume_bar.py" line="93"/>
        <source>The app stopped while a tool was running.</source>
        <translation>工具运行期间应用停止了。</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/resume_bar.py" line="94"/>
        <source>Resume writes the answer again.</source>
        <translation>“继续”会重新写这个回答。</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/resume_bar.py" line="95"/>
        <source>Resume continues the answer.</source>
        <translation>“继续”会接着写这个回答。</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/resume_bar.py" line="102"/>
        <source>The app stopped before the tool started, so it did not run.</source>
        <translation>应用在工具启动前就停止了，所以工具没有运行。</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/resume_bar.py" line="106"/>
        <location filename="../../ui/conversation/resume_bar.py" line="107"/>
        <source>Resume</source>
        <translation>继续</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/resume_bar.py" line="108"/>
        <source>Why the conversation can be resumed</source>
        <translation>为什么可以继续这段对话</translation>
    </message>
</context>
<context>
    <name>RetryLine</name>
    <message>
        <location filename="../../ui/conversation/retry_line.py" line="43"/>
        <source>Retrying in {delay} s, {attempt} of {attempts}…</source>
        <translation>{delay} 秒后重试（第 {attempt} 次，共 {attempts} 次）…</translation>
    </message>
</context>
<context>
    <name>SearchHitsModel</name>
    <message>
        <location filename="../../ui/search/hits.py" line="100"/>
        <source>(on another version)</source>
        <translation>（在另一个版本中）</translation>
    </message>
</context>
<context>
    <name>ServerEditor</name>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="299"/>
        <source>Edit MCP server</source>
        <translation>编辑 MCP 服务器</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="299"/>
        <source>Add an MCP server</source>
        <translation>添加 MCP 服务器</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="302"/>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="303"/>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="304"/>
        <source>Command</source>
        <translation>命令</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="305"/>
        <source>Arguments (one a line)</source>
        <translation>参数（每行一个）</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="306"/>
        <location filename="../../ui/settings/tool_server_editor.py" line="325"/>
        <source>Working folder</source>
        <translation>工作文件夹</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="307"/>
        <source>Environment variables</source>
        <translation>环境变量</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="308"/>
        <source>URL</source>
        <translation>URL</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="309"/>
        <source>Headers</source>
        <translation>请求头</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="310"/>
        <source>Timeout of a call (seconds)</source>
        <translation>调用超时（秒）</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="314"/>
        <source>Program on this computer (stdio)</source>
        <translation>本机程序（stdio）</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="315"/>
        <source>Server at a URL (HTTP)</source>
        <translation>位于 URL 的服务器（HTTP）</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="316"/>
        <source>Choose…</source>
        <translation>选择…</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="317"/>
        <source>e.g. uvx or npx</source>
        <translation>例如 uvx 或 npx</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="386"/>
        <source>Give the server a name.</source>
        <translation>请为服务器命名。</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tool_server_editor.py" line="388"/>
        <source>There is already a server named {name}.</source>
        <translation>已存在名为 {name} 的服务器。</translation>
    </message>
</context>
<context>
    <name>SessionListModel</name>
    <message>
        <location filename="../../ui/conversation/sessions.py" line="67"/>
        <source>New conversation</source>
        <translation>新对话</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/sessions.py" line="86"/>
        <source>Today</source>
        <translation>今天</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/sessions.py" line="88"/>
        <source>Yesterday</source>
        <translation>昨天</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/sessions.py" line="90"/>
        <source>Previous 7 days</source>
        <translation>过去 7 天</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/sessions.py" line="93"/>
        <source>MMMM yyyy</source>
        <translation>yyyy年M月</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/sessions.py" line="114"/>
        <source>{title} (unreadable)</source>
        <translation>{title}（无法读取）</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/sessions.py" line="146"/>
        <source>Waiting for Resume</source>
        <translation>等待继续</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <location filename="../../ui/settings/provider_page.py" line="66"/>
        <source>OpenAI-compatible</source>
        <translation>OpenAI 兼容</translation>
    </message>
    <message>
        <location filename="../../ui/settings/provider_page.py" line="67"/>
        <source>Anthropic</source>
        <translation>Anthropic</translation>
    </message>
    <message>
        <location filename="../../ui/settings/provider_page.py" line="68"/>
        <source>Ollama</source>
        <translation>Ollama</translation>
    </message>
    <message>
        <location filename="../../ui/common/errors.py" line="322"/>
        <source>the server</source>
        <translation>服务器</translation>
    </message>
    <message>
        <location filename="../../ui/common/errors.py" line="324"/>
        <source>The server refused the API key (HTTP {status}). Check that the key is correct and still active, then test again.</source>
        <translation>服务器拒绝了该 API 密钥（HTTP {status}）。请确认密钥正确且仍然有效，然后重新测试。</translation>
    </message>
    <message>
        <location filename="../../ui/common/errors.py" line="330"/>
        <source>The server says too many requests were made. Wait a minute and test again.</source>
        <translation>服务器提示请求过于频繁。请稍等一分钟后重新测试。</translation>
    </message>
    <message>
        <location filename="../../ui/common/errors.py" line="335"/>
        <source>The server answered with an error (HTTP {status}): {detail}</source>
        <translation>服务器返回了错误（HTTP {status}）：{detail}</translation>
    </message>
    <message>
        <location filename="../../ui/common/errors.py" line="339"/>
        <source>{url} did not answer in time. Check the address, or try again later.</source>
        <translation>{url} 没有及时响应。请检查地址，或稍后再试。</translation>
    </message>
    <message>
        <location filename="../../ui/common/errors.py" line="343"/>
        <source>Could not connect to {url}. Check the address and that the server is running.</source>
        <translation>无法连接到 {url}。请检查地址，并确认服务器正在运行。</translation>
    </message>
    <message>
        <location filename="../../ui/common/errors.py" line="348"/>
        <source>The server&apos;s answer was not understood ({detail}). Check that the address points to this kind of server.</source>
        <translation>无法识别服务器的响应（{detail}）。请确认该地址指向的是这种类型的服务器。</translation>
    </message>
    <message>
        <location filename="../../ui/common/errors.py" line="356"/>
        <source>The connection test failed: {detail}</source>
        <translation>连接测试失败：{detail}</translation>
    </message>
    <message>
        <location filename="../../ui/settings/dialog.py" line="347"/>
        <location filename="../../ui/settings/dialog.py" line="348"/>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <location filename="../../ui/settings/dialog.py" line="351"/>
        <source>No system keychain was found, so API keys are saved in {path}, a file only your user account can read. Anyone with access to your account can read them.</source>
        <translation>未找到系统钥匙串，因此 API 密钥保存在 {path} 中，该文件只有你的用户账户可以读取。能访问你账户的任何人都能读取这些密钥。</translation>
    </message>
    <message>
        <location filename="../../ui/settings/dialog.py" line="355"/>
        <source>Providers</source>
        <translation>服务商</translation>
    </message>
    <message>
        <location filename="../../ui/settings/dialog.py" line="356"/>
        <source>Found on this computer</source>
        <translation>在本机发现</translation>
    </message>
    <message>
        <location filename="../../ui/settings/dialog.py" line="357"/>
        <source>Language and look</source>
        <translation>语言与外观</translation>
    </message>
    <message>
        <location filename="../../ui/settings/dialog.py" line="358"/>
        <source>Tools</source>
        <translation>工具</translation>
    </message>
    <message>
        <location filename="../../ui/settings/dialog.py" line="359"/>
        <source>Tool approval</source>
        <translation>工具批准</translation>
    </message>
    <message>
        <location filename="../../ui/settings/dialog.py" line="360"/>
        <source>Error</source>
        <translation>错误</translation>
    </message>
    <message>
        <location filename="../../ui/settings/dialog.py" line="361"/>
        <source>Move the damaged settings file aside and save</source>
        <translation>将损坏的设置文件移到一旁并保存</translation>
    </message>
    <message>
        <location filename="../../ui/settings/dialog.py" line="364"/>
        <source>Continuo looked for model servers running on this computer and for API keys set in your environment. Add any of them with one click, or add a provider by hand on the Providers page.</source>
        <translation>Continuo 查找了本机正在运行的模型服务器，以及环境变量中设置的 API 密钥。点一下即可添加其中任意一项，也可以在“服务商”页面手动添加。</translation>
    </message>
    <message>
        <location filename="../../ui/settings/dialog.py" line="382"/>
        <source>Looking for model servers…</source>
        <translation>正在查找模型服务器…</translation>
    </message>
    <message>
        <location filename="../../ui/settings/dialog.py" line="370"/>
        <source>Look again</source>
        <translation>重新查找</translation>
    </message>
    <message>
        <location filename="../../ui/settings/dialog.py" line="371"/>
        <source>Add a provider by hand</source>
        <translation>手动添加服务商</translation>
    </message>
    <message>
        <location filename="../../ui/settings/dialog.py" line="374"/>
        <location filename="../../ui/settings/dialog.py" line="376"/>
        <source>System</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <location filename="../../ui/settings/dialog.py" line="376"/>
        <source>Light</source>
        <translation>浅色</translation>
    </message>
    <message>
        <location filename="../../ui/settings/dialog.py" line="376"/>
        <source>Dark</source>
        <translation>深色</translation>
    </message>
    <message>
        <location filename="../../ui/settings/dialog.py" line="372"/>
        <location filename="../../ui/settings/dialog.py" line="375"/>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <location filename="../../ui/settings/dialog.py" line="373"/>
        <location filename="../../ui/settings/dialog.py" line="378"/>
        <source>Theme</source>
        <translation>主题</translation>
    </message>
    <message>
        <location filename="../../ui/settings/dialog.py" line="384"/>
        <source>Found {count}:</source>
        <translation>找到 {count} 项：</translation>
    </message>
    <message>
        <location filename="../../ui/settings/dialog.py" line="387"/>
        <source>Nothing found. Start Ollama, LM Studio, llama.cpp or vLLM and press Look again, or add a provider by hand on the Providers page.</source>
        <translation>未找到任何服务。请启动 Ollama、LM Studio、llama.cpp 或 vLLM 后点击“重新查找”，或在“服务商”页面手动添加。</translation>
    </message>
</context>
<context>
    <name>SideSplitter</name>
    <message>
        <location filename="../../ui/window/side_split.py" line="160"/>
        <source>Conversations</source>
        <translation>对话列表</translation>
    </message>
    <message>
        <location filename="../../ui/window/side_split.py" line="162"/>
        <source>Show or hide the conversations (folded away while the window is narrow)</source>
        <translation>显示或隐藏对话列表（窗口较窄时会收起）</translation>
    </message>
</context>
<context>
    <name>Sidebar</name>
    <message>
        <location filename="../../ui/window/sidebar.py" line="129"/>
        <source>No matches</source>
        <extracomment>the person picked a conversation in the list: (its id)</extracomment>
        <translation>没有匹配的对话</translation>
    </message>
    <message>
        <location filename="../../ui/window/sidebar.py" line="136"/>
        <source>Your conversations will appear here — press {keys} or write a message below to start one.</source>
        <translation>你的对话会显示在这里——按 {keys} 或在下方输入消息即可开始。</translation>
    </message>
    <message>
        <location filename="../../ui/window/sidebar.py" line="148"/>
        <location filename="../../ui/window/sidebar.py" line="149"/>
        <source>New chat</source>
        <translation>新对话</translation>
    </message>
    <message>
        <location filename="../../ui/window/sidebar.py" line="150"/>
        <source>Start a new conversation (Ctrl+N)</source>
        <translation>开始新的对话（Ctrl+N）</translation>
    </message>
    <message>
        <location filename="../../ui/window/sidebar.py" line="151"/>
        <source>Search conversations</source>
        <translation>搜索对话</translation>
    </message>
    <message>
        <location filename="../../ui/window/sidebar.py" line="152"/>
        <source>Search conversation titles and messages</source>
        <translation>搜索对话标题和消息</translation>
    </message>
    <message>
        <location filename="../../ui/window/sidebar.py" line="153"/>
        <source>Messages found</source>
        <translation>找到的消息</translation>
    </message>
    <message>
        <location filename="../../ui/window/sidebar.py" line="154"/>
        <source>Conversations</source>
        <translation>对话</translation>
    </message>
</context>
<context>
    <name>StatusLine</name>
    <message>
        <location filename="../../ui/window/status_line.py" line="39"/>
        <source>Copied</source>
        <translation>已复制</translation>
    </message>
    <message>
        <location filename="../../ui/window/status_line.py" line="43"/>
        <source>The conversations can now be searched.</source>
        <translation>现在可以搜索对话了。</translation>
    </message>
    <message>
        <location filename="../../ui/window/status_line.py" line="46"/>
        <source>Preparing the conversations for search: {percent}%…</source>
        <translation>正在为搜索准备对话：{percent}%…</translation>
    </message>
    <message>
        <location filename="../../ui/window/status_line.py" line="55"/>
        <source>Restored the conversation “{title}” to its newest messages (the app had stopped while changing it).</source>
        <translation>已将对话“{title}”恢复到最新的消息（应用在修改它时停止了）。</translation>
    </message>
    <message>
        <location filename="../../ui/window/status_line.py" line="60"/>
        <source>Restored a conversation to its newest messages (the app had stopped while changing it).</source>
        <translation>已将一个对话恢复到最新的消息（应用在修改它时停止了）。</translation>
    </message>
    <message>
        <location filename="../../ui/window/status_line.py" line="65"/>
        <source>Restored {count} conversations to their newest messages (the app had stopped while changing them).</source>
        <translation>已将 {count} 个对话恢复到最新的消息（应用在修改它们时停止了）。</translation>
    </message>
    <message>
        <location filename="../../ui/window/status_line.py" line="77"/>
        <source>The conversation file was checked: no damage found.</source>
        <translation>对话文件已检查完毕：未发现损坏。</translation>
    </message>
    <message>
        <location filename="../../ui/window/status_line.py" line="83"/>
        <source>Checking the conversation file…</source>
        <translation>正在检查对话文件…</translation>
    </message>
</context>
<context>
    <name>StorageNotice</name>
    <message>
        <location filename="../../ui/window/storage_notice.py" line="112"/>
        <source>File: {path}</source>
        <translation>文件：{path}</translation>
    </message>
    <message>
        <location filename="../../ui/window/storage_notice.py" line="121"/>
        <source>The disk is full</source>
        <translation>磁盘已满</translation>
    </message>
    <message>
        <location filename="../../ui/window/storage_notice.py" line="122"/>
        <source>The conversation file cannot be used</source>
        <translation>无法使用对话文件</translation>
    </message>
    <message>
        <location filename="../../ui/window/storage_notice.py" line="123"/>
        <source>The conversation file is damaged</source>
        <translation>对话文件已损坏</translation>
    </message>
    <message>
        <location filename="../../ui/window/storage_notice.py" line="124"/>
        <source>The conversation file is from a newer Continuo</source>
        <translation>对话文件来自更新版本的 Continuo</translation>
    </message>
    <message>
        <location filename="../../ui/window/storage_notice.py" line="126"/>
        <source>The conversations cannot be saved</source>
        <translation>无法保存对话</translation>
    </message>
    <message>
        <location filename="../../ui/window/storage_notice.py" line="134"/>
        <source>Free some disk space, then press Try again. Nothing already saved is lost.</source>
        <translation>请腾出一些磁盘空间，然后按“重试”。已保存的内容不会丢失。</translation>
    </message>
    <message>
        <location filename="../../ui/window/storage_notice.py" line="137"/>
        <source>Check the data folder&apos;s permissions: your user must be able to read and write it and the file. Or start Continuo with another folder (--data-dir). Then press Try again.</source>
        <translation>请检查数据文件夹的权限：你的用户必须能读写该文件夹和文件。也可以用另一个文件夹启动 Continuo（--data-dir）。然后按“重试”。</translation>
    </message>
    <message>
        <location filename="../../ui/window/storage_notice.py" line="142"/>
        <source>Restore the file from a backup, or move it aside to start with an empty list, then press Try again. Continuo has not changed it.</source>
        <translation>请从备份恢复该文件，或把它移走以从空列表开始，然后按“重试”。Continuo 没有改动它。</translation>
    </message>
    <message>
        <location filename="../../ui/window/storage_notice.py" line="146"/>
        <source>Install a newer Continuo to open it. This version has not changed it.</source>
        <translation>请安装更新版本的 Continuo 来打开它。这个版本没有改动它。</translation>
    </message>
    <message>
        <location filename="../../ui/window/storage_notice.py" line="149"/>
        <source>Press Try again once the problem is fixed.</source>
        <translation>问题解决后请按“重试”。</translation>
    </message>
    <message>
        <location filename="../../ui/window/storage_notice.py" line="152"/>
        <source>Problem with the conversation file</source>
        <translation>对话文件有问题</translation>
    </message>
    <message>
        <location filename="../../ui/window/storage_notice.py" line="153"/>
        <source>Try again</source>
        <translation>重试</translation>
    </message>
    <message>
        <location filename="../../ui/window/storage_notice.py" line="154"/>
        <source>Restore from a backup…</source>
        <translation>从备份恢复…</translation>
    </message>
</context>
<context>
    <name>SystemPromptEditor</name>
    <message>
        <location filename="../../ui/conversation/system_prompt.py" line="61"/>
        <source>System prompt ●</source>
        <extracomment>the person changed the prompt and paused: (the text, stripped) the header&apos;s button that shows and hides the editor (made by the window, in the header&apos;s place in the Tab order)</extracomment>
        <translation>系统提示词 ●</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/system_prompt.py" line="61"/>
        <source>System prompt</source>
        <translation>系统提示词</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/system_prompt.py" line="65"/>
        <source>Show the system prompt</source>
        <translation>显示系统提示词</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/system_prompt.py" line="67"/>
        <source>System prompt for this conversation</source>
        <translation>此对话的系统提示词</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/system_prompt.py" line="70"/>
        <source>Instructions the model gets with every message of this conversation (optional)</source>
        <translation>此对话中每条消息都会附带给模型的指示（可选）</translation>
    </message>
</context>
<context>
    <name>ToolCardView</name>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="239"/>
        <source>Arguments</source>
        <extracomment>The characters of a call&apos;s arguments a card shows until the person asks for all, and the lines: a label lays out all of its text at once (1 MB of arguments froze the window for half a minute), and a person reads the beginning first.</extracomment>
        <translation>参数</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="240"/>
        <source>Show the tool&apos;s arguments</source>
        <translation>显示工具的参数</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="241"/>
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="242"/>
        <source>Show the tool&apos;s result</source>
        <translation>显示工具的结果</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="243"/>
        <source>Allow once</source>
        <translation>允许一次</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="244"/>
        <source>Always allow this tool</source>
        <translation>始终允许此工具</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="246"/>
        <source>Run this tool of this server from now on without asking</source>
        <translation>今后无需询问即运行此服务器的此工具</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="248"/>
        <source>Deny</source>
        <translation>拒绝</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="249"/>
        <source>Do not run it; the model is told (Esc)</source>
        <translation>不运行它；模型会收到通知（Esc）</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="250"/>
        <source>Reason (optional)</source>
        <translation>原因（可选）</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="251"/>
        <source>Reason for denying (optional)</source>
        <translation>拒绝原因（可选）</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="257"/>
        <source>waiting</source>
        <translation>等待中</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="258"/>
        <source>waiting for your answer</source>
        <translation>正在等待你的答复</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="259"/>
        <source>running…</source>
        <translation>运行中…</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="260"/>
        <source>done</source>
        <translation>已完成</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="261"/>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="262"/>
        <source>denied</source>
        <translation>已拒绝</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="263"/>
        <source>did not run</source>
        <translation>未运行</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="264"/>
        <source>interrupted</source>
        <translation>已中断</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="270"/>
        <source>Treated as destructive: its server calls it read-only, then says things that contradict it (that it destroys, or is not safe to repeat)</source>
        <translation>按破坏性处理：它的服务器称它只读，却又说了与此矛盾的话（会破坏内容，或重复运行不安全）</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="275"/>
        <source>Treated as destructive: its server says nothing about what it does</source>
        <translation>按破坏性处理：它的服务器没有说明它做什么</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="278"/>
        <source>Read-only, says its server</source>
        <translation>只读（据其服务器声明）</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="279"/>
        <source>May change things, says its server</source>
        <translation>可能会更改内容（据其服务器声明）</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="280"/>
        <source>May delete or overwrite things (destructive)</source>
        <translation>可能会删除或覆盖内容（破坏性）</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="287"/>
        <source>{tool} from {server}</source>
        <translation>{server} 的 {tool}</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="297"/>
        <source>· {server}</source>
        <translation>· {server}</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="302"/>
        <source>“{title}”, says its server</source>
        <translation>“{title}”，它的服务器这样称呼它</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="369"/>
        <source>Show all {count} characters</source>
        <translation>显示全部 {count} 个字符</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="390"/>
        <source>Allow {tool} to run with these arguments?</source>
        <translation>允许 {tool} 使用这些参数运行吗？</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="393"/>
        <source>Tool {tool} waits for your approval</source>
        <translation>工具 {tool} 等待你的批准</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="404"/>
        <source>Tool call {name}</source>
        <translation>工具调用 {name}</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="448"/>
        <source>{seconds} s</source>
        <translation>{seconds} 秒</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/tool_card.py" line="343"/>
        <source>(no arguments)</source>
        <translation>（无参数）</translation>
    </message>
</context>
<context>
    <name>ToolServerButton</name>
    <message>
        <location filename="../../ui/tools/tool_server_menu.py" line="92"/>
        <source>Tools {count}/{total}</source>
        <translation>工具 {count}/{total}</translation>
    </message>
    <message>
        <location filename="../../ui/tools/tool_server_menu.py" line="94"/>
        <source>Tools</source>
        <translation>工具</translation>
    </message>
    <message>
        <location filename="../../ui/tools/tool_server_menu.py" line="95"/>
        <source>Which tool servers this conversation may use</source>
        <translation>此对话可以使用哪些工具服务器</translation>
    </message>
    <message>
        <location filename="../../ui/tools/tool_server_menu.py" line="97"/>
        <source>Tools: {count} of {total} servers offered</source>
        <translation>工具：已提供 {total} 个服务器中的 {count} 个</translation>
    </message>
    <message>
        <location filename="../../ui/tools/tool_server_menu.py" line="99"/>
        <source>Set up tools…</source>
        <translation>设置工具…</translation>
    </message>
    <message>
        <location filename="../../ui/tools/tool_server_menu.py" line="101"/>
        <source>Offer the tools of {server} here</source>
        <translation>在此提供 {server} 的工具</translation>
    </message>
</context>
<context>
    <name>ToolStatus</name>
    <message>
        <location filename="../../ui/tools/tool_status.py" line="126"/>
        <source>The tool server {server} could not start: {why}. Its log: {log}</source>
        <extracomment>under the last message while a card of the shown conversation waits</extracomment>
        <translation>工具服务器 {server} 无法启动：{why}。日志：{log}</translation>
    </message>
    <message>
        <location filename="../../ui/tools/tool_status.py" line="128"/>
        <source>The tool server {server} could not start: {why}</source>
        <translation>工具服务器 {server} 无法启动：{why}</translation>
    </message>
    <message>
        <location filename="../../ui/tools/tool_status.py" line="137"/>
        <source>Starting the tool servers…</source>
        <translation>正在启动工具服务器…</translation>
    </message>
    <message>
        <location filename="../../ui/tools/tool_status.py" line="154"/>
        <source>Waiting for your answer about a tool</source>
        <translation>正在等待你对工具的答复</translation>
    </message>
</context>
<context>
    <name>ToolsPage</name>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="292"/>
        <source>No system keychain was found, so secret values of MCP servers are saved in {path}, a file only your user account can read.</source>
        <translation>未找到系统钥匙串，因此 MCP 服务器的机密值保存在 {path} 中，该文件只有你的用户账户可以读取。</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="296"/>
        <source>MCP servers</source>
        <translation>MCP 服务器</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="298"/>
        <source>Move the damaged MCP server file aside and start with no servers</source>
        <translation>将损坏的 MCP 服务器文件移开，并从无服务器开始</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="300"/>
        <source>Add…</source>
        <translation>添加…</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="301"/>
        <source>Edit…</source>
        <translation>编辑…</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="302"/>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="303"/>
        <source>Import: paste JSON…</source>
        <translation>导入：粘贴 JSON…</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="304"/>
        <source>Import a file…</source>
        <translation>导入文件…</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="305"/>
        <source>Check</source>
        <translation>检查</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="306"/>
        <source>Tools</source>
        <translation>工具</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="307"/>
        <source>Add a reference server</source>
        <translation>添加参考服务器</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="309"/>
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="310"/>
        <source>Fetch web pages</source>
        <translation>获取网页</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="311"/>
        <source>Files in a folder…</source>
        <translation>文件夹中的文件…</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="312"/>
        <source>Git repository…</source>
        <translation>Git 仓库…</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="313"/>
        <source>Memory</source>
        <translation>记忆</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="325"/>
        <source>Needs uv (uvx) — install it from https://docs.astral.sh/uv/</source>
        <translation>需要 uv（uvx）——请从 https://docs.astral.sh/uv/ 安装</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="326"/>
        <source>Needs Node.js (npx) — install it from https://nodejs.org/</source>
        <translation>需要 Node.js（npx）——请从 https://nodejs.org/ 安装</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="331"/>
        <source>needs uv</source>
        <translation>需要 uv</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="331"/>
        <source>needs Node.js</source>
        <translation>需要 Node.js</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="333"/>
        <source>installed with Continuo</source>
        <translation>随 Continuo 安装</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="335"/>
        <source>installed: {command}</source>
        <translation>已安装：{command}</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="336"/>
        <source>with {program}</source>
        <translation>通过 {program}</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="351"/>
        <source>&lt;folder&gt;</source>
        <translation>&lt;文件夹&gt;</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="353"/>
        <source>&lt;repository&gt;</source>
        <translation>&lt;仓库&gt;</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="354"/>
        <source>Runs: {command}</source>
        <translation>运行：{command}</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="468"/>
        <source>Not started</source>
        <translation>未启动</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="469"/>
        <source>Running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="470"/>
        <source>Stopped; it starts again when a tool is used</source>
        <translation>已停止；使用工具时会再次启动</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="471"/>
        <source>Failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="567"/>
        <source>Import MCP servers</source>
        <translation>导入 MCP 服务器</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="569"/>
        <source>JSON files (*.json)</source>
        <translation>JSON 文件 (*.json)</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="569"/>
        <source>All files (*)</source>
        <translation>所有文件 (*)</translation>
    </message>
    <message numerus="yes">
        <location filename="../../ui/settings/tools_page.py" line="591"/>
        <source>Imported %n server(s); they are saved with Save or Apply.</source>
        <translation>
            <numerusform>已导入 %n 个服务器；点击“保存”或“应用”后才会保存。</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="596"/>
        <source>{old} was already there, so the new one is {new}.</source>
        <translation>{old} 已存在，因此新的服务器名为 {new}。</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="628"/>
        <source>Folder the server may read and change</source>
        <translation>服务器可以读取和更改的文件夹</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="630"/>
        <source>Git repository</source>
        <translation>Git 仓库</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="668"/>
        <source>{name} is switched off: switch it on and press Apply, then Check.</source>
        <translation>{name} 已关闭：请先打开它并点“应用”，再点“检查”。</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="670"/>
        <source>Press Apply first: {name} is not applied yet, and Check starts a server as it was applied.</source>
        <translation>请先点“应用”：{name} 还没有应用，而“检查”启动的是已应用的服务器。</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="674"/>
        <source>Press Apply first: {name} has changes that are not applied yet, and Check starts a server as it was applied.</source>
        <translation>请先点“应用”：{name} 有尚未应用的更改，而“检查”启动的是已应用的服务器。</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="717"/>
        <source>No server chosen.</source>
        <translation>未选择服务器。</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="743"/>
        <source>read-only</source>
        <translation>只读</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="745"/>
        <source>may change things</source>
        <translation>可能会更改内容</translation>
    </message>
    <message>
        <location filename="../../ui/settings/tools_page.py" line="747"/>
        <source>destructive</source>
        <translation>破坏性</translation>
    </message>
</context>
<context>
    <name>TranscriptView</name>
    <message>
        <location filename="../../ui/conversation/transcript_view.py" line="173"/>
        <source>Conversation</source>
        <extracomment>rows whose widgets are built in one turn of the event loop when many arrive at once (an answer&apos;s many tool cards: a card takes a few milliseconds to build); the others wait as light placeholders, built over the next turns, so the window keeps painting</extracomment>
        <translation>对话</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/transcript_view.py" line="176"/>
        <source>Write a message below to begin. Every message is saved the moment it is complete; if an answer is cut off, Resume carries on from there.</source>
        <translation>在下方输入消息即可开始。每条消息一完成就已保存；回答若被中断，按“继续”即可从中断处接着往下。</translation>
    </message>
</context>
<context>
    <name>UserView</name>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="394"/>
        <source>Your message</source>
        <translation>你的消息</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="395"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="396"/>
        <source>Save and send</source>
        <translation>保存并发送</translation>
    </message>
    <message>
        <location filename="../../ui/conversation/message_views.py" line="397"/>
        <source>Edit your message</source>
        <translation>编辑你的消息</translation>
    </message>
</context>
<context>
    <name>WindowMenus</name>
    <message>
        <location filename="../../ui/window/menus.py" line="101"/>
        <source>&amp;New chat</source>
        <translation>新对话(&amp;N)</translation>
    </message>
    <message>
        <location filename="../../ui/window/menus.py" line="102"/>
        <source>&amp;Rename…</source>
        <translation>重命名(&amp;R)…</translation>
    </message>
    <message>
        <location filename="../../ui/window/menus.py" line="103"/>
        <source>&amp;Delete…</source>
        <translation>删除(&amp;D)…</translation>
    </message>
    <message>
        <location filename="../../ui/window/menus.py" line="104"/>
        <source>&amp;Settings…</source>
        <translation>设置(&amp;S)…</translation>
    </message>
    <message>
        <location filename="../../ui/window/menus.py" line="105"/>
        <source>&amp;Find in this conversation</source>
        <translation>在这个对话中查找(&amp;F)</translation>
    </message>
    <message>
        <location filename="../../ui/window/menus.py" line="106"/>
        <source>&amp;Search all conversations</source>
        <translation>搜索所有对话(&amp;S)</translation>
    </message>
    <message>
        <location filename="../../ui/window/menus.py" line="107"/>
        <source>Write a &amp;message</source>
        <translation>输入消息(&amp;M)</translation>
    </message>
    <message>
        <location filename="../../ui/window/menus.py" line="108"/>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <location filename="../../ui/window/menus.py" line="109"/>
        <source>&amp;About Continuo</source>
        <translation>关于 Continuo(&amp;A)</translation>
    </message>
    <message>
        <location filename="../../ui/window/menus.py" line="110"/>
        <source>&amp;Check the conversation file</source>
        <translation>检查对话文件(&amp;C)</translation>
    </message>
    <message>
        <location filename="../../ui/window/menus.py" line="113"/>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <location filename="../../ui/window/menus.py" line="114"/>
        <source>&amp;Conversation</source>
        <translation>对话(&amp;C)</translation>
    </message>
    <message>
        <location filename="../../ui/window/menus.py" line="115"/>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
</context>
<context>
    <name>WindowSearch</name>
    <message>
        <location filename="../../ui/search/window_search.py" line="201"/>
        <source>Only the first {count} characters are searched; the rest was left out.</source>
        <translation>只搜索前 {count} 个字符，其余部分已略去。</translation>
    </message>
    <message>
        <location filename="../../ui/search/window_search.py" line="274"/>
        <source>In messages: {count} found</source>
        <translation>消息中：找到 {count} 条</translation>
    </message>
    <message>
        <location filename="../../ui/search/window_search.py" line="276"/>
        <source>In messages: the newest {count}</source>
        <translation>消息中：最新的 {count} 条</translation>
    </message>
    <message>
        <location filename="../../ui/search/window_search.py" line="284"/>
        <source>Later messages are not shown: show the latest</source>
        <translation>后面的消息没有显示：显示最新消息</translation>
    </message>
    <message>
        <location filename="../../ui/search/window_search.py" line="285"/>
        <source>Show the latest messages</source>
        <translation>显示最新消息</translation>
    </message>
    <message>
        <location filename="../../ui/search/window_search.py" line="328"/>
        <source>That message is on another version, which cannot be shown while the conversation is answering.</source>
        <translation>那条消息在另一个版本中，对话正在回答时无法显示它。</translation>
    </message>
    <message>
        <location filename="../../ui/search/window_search.py" line="332"/>
        <source>That message is no longer there.</source>
        <translation>那条消息已经不在了。</translation>
    </message>
    <message>
        <location filename="../../ui/search/window_search.py" line="338"/>
        <source>Switched to the version holding the match.</source>
        <translation>已切换到包含匹配内容的版本。</translation>
    </message>
</context>
<context>
    <name>_FoundRow</name>
    <message>
        <location filename="../../ui/settings/dialog.py" line="149"/>
        <source>API key from {variable}</source>
        <translation>来自 {variable} 的 API 密钥</translation>
    </message>
    <message numerus="yes">
        <location filename="../../ui/settings/dialog.py" line="151"/>
        <source>running at {address}, %n model(s)</source>
        <translation>
            <numerusform>运行于 {address}，共 %n 个模型</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../../ui/settings/dialog.py" line="155"/>
        <location filename="../../ui/settings/dialog.py" line="159"/>
        <source>Added</source>
        <translation>已添加</translation>
    </message>
    <message>
        <location filename="../../ui/settings/dialog.py" line="155"/>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <location filename="../../ui/settings/dialog.py" line="157"/>
        <source>Add {name}</source>
        <translation>添加 {name}</translation>
    </message>
</context>
</TS>
