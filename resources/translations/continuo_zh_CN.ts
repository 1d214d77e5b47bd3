<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>AnswerView</name>
    <message>
        <location filename="../../ui/widgets/message_views.py" line="140"/>
        <source>Assistant answer</source>
        <translation>助手回答</translation>
    </message>
    <message>
        <location filename="../../ui/widgets/message_views.py" line="150"/>
        <source>Reasoning</source>
        <translation>推理过程</translation>
    </message>
    <message>
        <location filename="../../ui/widgets/message_views.py" line="194"/>
        <source>Copy</source>
        <extracomment>code blocks in the body, for the Copy links characters of the text given to the splitter characters rendered into the body the text the body shows when complete the text as last streamed tail renders, for the benchmark</extracomment>
        <translation>复制</translation>
    </message>
    <message>
        <location filename="../../ui/widgets/message_views.py" line="260"/>
        <source>Stopped. The partial answer above is saved.</source>
        <translation>已停止。上面的部分回答已保存。</translation>
    </message>
    <message>
        <location filename="../../ui/widgets/message_views.py" line="261"/>
        <source>The answer was cut off. What arrived is saved.</source>
        <translation>回答被中断。已收到的内容已保存。</translation>
    </message>
    <message>
        <location filename="../../ui/widgets/message_views.py" line="262"/>
        <source>The answer reached the output limit.</source>
        <translation>回答已达到输出长度上限。</translation>
    </message>
    <message>
        <location filename="../../ui/widgets/message_views.py" line="263"/>
        <source>The model declined to answer.</source>
        <translation>模型拒绝了回答。</translation>
    </message>
    <message>
        <location filename="../../ui/widgets/message_views.py" line="265"/>
        <source>The conversation is too long for the model. Start a new conversation.</source>
        <translation>对话已超出模型能处理的长度。请开始新的对话。</translation>
    </message>
    <message>
        <location filename="../../ui/widgets/message_views.py" line="267"/>
        <source>The provider paused this answer.</source>
        <translation>服务商暂停了这个回答。</translation>
    </message>
    <message>
        <location filename="../../ui/widgets/message_views.py" line="268"/>
        <source>The answer stopped for an unknown reason.</source>
        <translation>回答因未知原因停止。</translation>
    </message>
</context>
<context>
    <name>Composer</name>
    <message>
        <location filename="../../ui/widgets/composer.py" line="29"/>
        <source>Message</source>
        <extracomment>Enter: the text to send</extracomment>
        <translation>消息</translation>
    </message>
    <message>
        <location filename="../../ui/widgets/composer.py" line="31"/>
        <source>Write a message… (Enter sends, Shift+Enter for a new line)</source>
        <translation>输入消息…（Enter 发送，Shift+Enter 换行）</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <location filename="../../ui/main_window.py" line="74"/>
        <source>Continuo</source>
        <translation>Continuo</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="88"/>
        <location filename="../../ui/main_window.py" line="90"/>
        <source>New chat</source>
        <translation>新对话</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="91"/>
        <source>Start a new conversation (Ctrl+N)</source>
        <translation>开始新的对话（Ctrl+N）</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="94"/>
        <source>Filter conversations</source>
        <translation>筛选对话</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="95"/>
        <source>Filter conversations by title</source>
        <translation>按标题筛选对话</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="100"/>
        <source>Conversations</source>
        <translation>对话</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="117"/>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="118"/>
        <source>The model that answers in this conversation</source>
        <translation>在此对话中回答的模型</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="121"/>
        <source>No model</source>
        <translation>未选择模型</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="124"/>
        <location filename="../../ui/main_window.py" line="394"/>
        <location filename="../../ui/main_window.py" line="442"/>
        <source>System prompt</source>
        <translation>系统提示词</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="126"/>
        <source>Show the system prompt</source>
        <translation>显示系统提示词</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="129"/>
        <location filename="../../ui/main_window.py" line="130"/>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="139"/>
        <source>System prompt for this conversation</source>
        <translation>此对话的系统提示词</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="142"/>
        <source>Instructions the model gets with every message of this conversation (optional)</source>
        <translation>此对话中每条消息都会附带给模型的指示（可选）</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="159"/>
        <source>Error</source>
        <translation>错误</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="170"/>
        <location filename="../../ui/main_window.py" line="172"/>
        <source>Resume</source>
        <translation>继续</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="181"/>
        <location filename="../../ui/main_window.py" line="183"/>
        <source>Send</source>
        <translation>发送</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="184"/>
        <source>Send (Enter)</source>
        <translation>发送（Enter）</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="185"/>
        <location filename="../../ui/main_window.py" line="187"/>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="188"/>
        <source>Stop the answer (Esc); what arrived is kept</source>
        <translation>停止回答（Esc）；已收到的内容会保留</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="216"/>
        <source>&amp;New chat</source>
        <translation>新对话(&amp;N)</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="217"/>
        <source>&amp;Rename…</source>
        <translation>重命名(&amp;R)…</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="219"/>
        <source>&amp;Delete…</source>
        <translation>删除(&amp;D)…</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="225"/>
        <source>&amp;Settings…</source>
        <translation>设置(&amp;S)…</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="230"/>
        <source>&amp;Find conversation</source>
        <translation>查找对话(&amp;F)</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="233"/>
        <source>Write a &amp;message</source>
        <translation>输入消息(&amp;M)</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="235"/>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="237"/>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="240"/>
        <source>&amp;Conversation</source>
        <translation>对话(&amp;C)</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="347"/>
        <source>The model has not answered yet.</source>
        <translation>模型尚未回答。</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="348"/>
        <source>The app stopped while a tool was running.</source>
        <translation>工具运行期间应用停止了。</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="349"/>
        <source>The answer was cut off before it finished.</source>
        <translation>回答在完成前被中断。</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="350"/>
        <source>The answer reached the output limit.</source>
        <translation>回答已达到输出长度上限。</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="392"/>
        <location filename="../../ui/main_window.py" line="442"/>
        <source>System prompt ●</source>
        <translation>系统提示词 ●</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="459"/>
        <source>Rename conversation</source>
        <translation>重命名对话</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="460"/>
        <source>Title:</source>
        <translation>标题：</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="480"/>
        <source>Delete conversation</source>
        <translation>删除对话</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="482"/>
        <source>Delete “{title}”? This cannot be undone.</source>
        <translation>删除“{title}”？此操作无法撤销。</translation>
    </message>
    <message>
        <location filename="../../ui/main_window.py" line="485"/>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
</context>
<context>
    <name>NoticeView</name>
    <message>
        <location filename="../../ui/widgets/message_views.py" line="399"/>
        <source>Resumed: the cut-off answer is redone</source>
        <translation>已继续：重新生成被中断的回答</translation>
    </message>
    <message>
        <location filename="../../ui/widgets/message_views.py" line="400"/>
        <source>Resumed: continuing after the output limit</source>
        <translation>已继续：从输出上限处接着写</translation>
    </message>
    <message>
        <location filename="../../ui/widgets/message_views.py" line="401"/>
        <source>Goal not reached yet: carrying on</source>
        <translation>目标尚未达成：继续进行</translation>
    </message>
    <message>
        <location filename="../../ui/widgets/message_views.py" line="406"/>
        <source>Resumed</source>
        <translation>已继续</translation>
    </message>
</context>
<context>
    <name>SessionListModel</name>
    <message>
        <location filename="../../ui/models/sessions.py" line="37"/>
        <source>New conversation</source>
        <translation>新对话</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <location filename="../../ui/settings_dialog.py" line="89"/>
        <source>OpenAI-compatible</source>
        <extracomment>Seconds a connection test may take; one attempt, so a wrong address fails promptly.</extracomment>
        <translation>OpenAI 兼容</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="90"/>
        <source>Anthropic</source>
        <translation>Anthropic</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="91"/>
        <source>Ollama</source>
        <translation>Ollama</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="101"/>
        <source>the server</source>
        <translation>服务器</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="103"/>
        <source>The server refused the API key (HTTP {status}). Check that the key is correct and still active, then test again.</source>
        <translation>服务器拒绝了该 API 密钥（HTTP {status}）。请确认密钥正确且仍然有效，然后重新测试。</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="109"/>
        <source>The server says too many requests were made. Wait a minute and test again.</source>
        <translation>服务器提示请求过于频繁。请稍等一分钟后重新测试。</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="114"/>
        <source>The server answered with an error (HTTP {status}): {detail}</source>
        <translation>服务器返回了错误（HTTP {status}）：{detail}</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="118"/>
        <source>{url} did not answer in time. Check the address, or try again later.</source>
        <translation>{url} 没有及时响应。请检查地址，或稍后再试。</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="122"/>
        <source>Could not connect to {url}. Check the address and that the server is running.</source>
        <translation>无法连接到 {url}。请检查地址，并确认服务器正在运行。</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="127"/>
        <source>The server&apos;s answer was not understood ({detail}). Check that the address points to this kind of server.</source>
        <translation>无法识别服务器的响应（{detail}）。请确认该地址指向的是这种类型的服务器。</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="135"/>
        <source>The connection test failed: {detail}</source>
        <translation>连接测试失败：{detail}</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="197"/>
        <source>Settings</source>
        <extracomment>provider id → key to store (&quot;&quot; = forget)</extracomment>
        <translation>设置</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="234"/>
        <source>No system keychain was found, so API keys are saved in {path}, a file only your user account can read. Anyone with access to your account can read them.</source>
        <extracomment>provider id → new key (&quot;&quot; = forget) id of the provider in the form saves: finish even if the dialog closes</extracomment>
        <translation>未找到系统钥匙串，因此 API 密钥保存在 {path} 中，该文件只有你的用户账户可以读取。能访问你账户的任何人都能读取这些密钥。</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="247"/>
        <source>Providers</source>
        <translation>服务商</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="248"/>
        <source>Found on this computer</source>
        <translation>在本机发现</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="249"/>
        <source>Language and look</source>
        <translation>语言与外观</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="258"/>
        <source>Move the damaged settings file aside and save</source>
        <translation>将损坏的设置文件移到一旁并保存</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="287"/>
        <location filename="../../ui/settings_dialog.py" line="518"/>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="290"/>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="314"/>
        <source>Forget key</source>
        <translation>清除密钥</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="323"/>
        <source>Ask the server</source>
        <translation>由服务器决定</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="324"/>
        <source>Use for new conversations</source>
        <translation>用于新对话</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="326"/>
        <source>Test connection</source>
        <translation>测试连接</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="334"/>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="335"/>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="336"/>
        <source>Base URL</source>
        <translation>基础 URL</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="337"/>
        <source>API key</source>
        <translation>API 密钥</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="338"/>
        <source>Default model</source>
        <translation>默认模型</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="353"/>
        <source>Continuo looked for model servers running on this computer and for API keys set in your environment. Add any of them with one click, or add a provider by hand on the Providers page.</source>
        <translation>Continuo 查找了本机正在运行的模型服务器，以及环境变量中设置的 API 密钥。点一下即可添加其中任意一项，也可以在“服务商”页面手动添加。</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="361"/>
        <location filename="../../ui/settings_dialog.py" line="481"/>
        <source>Looking for model servers…</source>
        <translation>正在查找模型服务器…</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="375"/>
        <source>Look again</source>
        <translation>重新查找</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="379"/>
        <source>Add a provider by hand</source>
        <translation>手动添加服务商</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="395"/>
        <location filename="../../ui/settings_dialog.py" line="402"/>
        <source>System</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="403"/>
        <source>Light</source>
        <translation>浅色</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="404"/>
        <source>Dark</source>
        <translation>深色</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="405"/>
        <source>A new language takes effect the next time Continuo starts.</source>
        <translation>新的语言将在下次启动 Continuo 时生效。</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="408"/>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="410"/>
        <source>Theme</source>
        <translation>主题</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="492"/>
        <source>Found {count}:</source>
        <translation>找到 {count} 项：</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="496"/>
        <source>Nothing found. Start Ollama, LM Studio, llama.cpp or vLLM and press Look again, or add a provider by hand on the Providers page.</source>
        <translation>未找到任何服务。请启动 Ollama、LM Studio、llama.cpp 或 vLLM 后点击“重新查找”，或在“服务商”页面手动添加。</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="509"/>
        <source>API key from {variable}</source>
        <translation>来自 {variable} 的 API 密钥</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="511"/>
        <source>running at {address}, {count} model(s)</source>
        <translation>运行于 {address}，共 {count} 个模型</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="526"/>
        <location filename="../../ui/settings_dialog.py" line="771"/>
        <source>Added</source>
        <translation>已添加</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="541"/>
        <source>{name} (default)</source>
        <translation>{name}（默认）</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="599"/>
        <source>The saved key will be forgotten</source>
        <translation>已保存的密钥将被清除</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="601"/>
        <source>A key is saved; leave empty to keep it</source>
        <translation>已保存密钥；留空则保持不变</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="603"/>
        <source>Not set (local servers need none)</source>
        <translation>未设置（本地服务器无需密钥）</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="691"/>
        <source>Connecting…</source>
        <translation>正在连接…</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="715"/>
        <source>Connected. {count} model(s): {names}</source>
        <translation>连接成功。共 {count} 个模型：{names}</translation>
    </message>
    <message>
        <location filename="../../ui/settings_dialog.py" line="719"/>
        <source>Connected, but the server lists no models.</source>
        <translation>连接成功，但服务器没有列出任何模型。</translation>
    </message>
</context>
<context>
    <name>ToolCardView</name>
    <message>
        <location filename="../../ui/widgets/message_views.py" line="326"/>
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <location filename="../../ui/widgets/message_views.py" line="347"/>
        <source>waiting</source>
        <translation>等待中</translation>
    </message>
    <message>
        <location filename="../../ui/widgets/message_views.py" line="348"/>
        <source>running…</source>
        <translation>运行中…</translation>
    </message>
    <message>
        <location filename="../../ui/widgets/message_views.py" line="349"/>
        <source>done</source>
        <translation>已完成</translation>
    </message>
    <message>
        <location filename="../../ui/widgets/message_views.py" line="350"/>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <location filename="../../ui/widgets/message_views.py" line="351"/>
        <source>interrupted</source>
        <translation>已中断</translation>
    </message>
    <message>
        <location filename="../../ui/widgets/message_views.py" line="356"/>
        <source>Tool call {name}</source>
        <translation>工具调用 {name}</translation>
    </message>
    <message>
        <location filename="../../ui/widgets/message_views.py" line="358"/>
        <source>(no arguments)</source>
        <translation>（无参数）</translation>
    </message>
</context>
<context>
    <name>TranscriptView</name>
    <message>
        <location filename="../../ui/widgets/transcript_view.py" line="40"/>
        <source>Conversation</source>
        <extracomment>pixels from the bottom that still count as &quot;at the bottom&quot;</extracomment>
        <translation>对话</translation>
    </message>
</context>
<context>
    <name>UserView</name>
    <message>
        <location filename="../../ui/widgets/message_views.py" line="128"/>
        <source>Your message</source>
        <translation>你的消息</translation>
    </message>
</context>
</TS>
