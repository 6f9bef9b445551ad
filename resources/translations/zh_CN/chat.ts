<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
    <context>
        <name>ChatComposer</name>
        <message>
            <source>&amp;Send</source>
            <translation>发送(&amp;S)</translation>
        </message>
        <message>
            <source>S&amp;top</source>
            <translation>停止(&amp;T)</translation>
        </message>
        <message>
            <source>&amp;Regenerate</source>
            <translation>重新生成(&amp;R)</translation>
        </message>
        <message>
            <source>&amp;Edit last</source>
            <translation>编辑上一条(&amp;E)</translation>
        </message>
        <message>
            <source>Put your last message back in the box to change and resend</source>
            <translation>把你的上一条消息放回输入框，修改后重新发送</translation>
        </message>
    </context>
    <context>
        <name>ChatInput</name>
        <message>
            <source>Message (Enter sends, Shift+Enter for a new line)</source>
            <translation>消息（Enter 发送，Shift+Enter 换行）</translation>
        </message>
    </context>
    <context>
        <name>ChatSession</name>
        <message>
            <source>it was cancelled.</source>
            <translation>它已被取消。</translation>
        </message>
        <message>
            <source>it was killed (SIGKILL; when nobody ended it on purpose, the system usually ran out of memory).</source>
            <translation>它被强制终止（SIGKILL；如果没有人有意结束它，通常是系统内存不足）。</translation>
        </message>
        <message>
            <source>it was killed by {signal}.</source>
            <translation>它被 {signal} 终止。</translation>
        </message>
        <message>
            <source>it exited with code {code}. Last error: {line}</source>
            <translation>它以退出码 {code} 退出。最后的错误：{line}</translation>
        </message>
        <message>
            <source>it exited with code {code}.</source>
            <translation>它以退出码 {code} 退出。</translation>
        </message>
        <message>
            <source>The chat worker is not running.</source>
            <translation>对话工作进程未在运行。</translation>
        </message>
        <message>
            <source>Load a model first.</source>
            <translation>请先加载模型。</translation>
        </message>
        <message>
            <source>The model was not loaded. {fix}</source>
            <translation>模型未加载。{fix}</translation>
        </message>
        <message>
            <source>The chat worker stopped: {why} The model is no longer loaded.</source>
            <translation>对话工作进程已停止：{why}模型已不再加载。</translation>
        </message>
    </context>
    <context>
        <name>ChatStore</name>
        <message>
            <source>Conversation {id} does not exist.</source>
            <translation>对话 {id} 不存在。</translation>
        </message>
    </context>
    <context>
        <name>ChatTab</name>
        <message>
            <source>Reading the recent models</source>
            <translation>读取最近使用的模型</translation>
        </message>
        <message>
            <source>This model may not fit</source>
            <translation>此模型可能放不下</translation>
        </message>
        <message>
            <source>{verdict}

Load anyway?</source>
            <translation>{verdict}

仍要加载吗？</translation>
        </message>
        <message>
            <source>Starting the chat worker</source>
            <translation>启动对话工作进程</translation>
        </message>
        <message>
            <source>Loading {path} ({precision})…</source>
            <translation>正在加载 {path}（{precision}）…</translation>
        </message>
        <message>
            <source>Model unloaded.</source>
            <translation>模型已卸载。</translation>
        </message>
        <message>
            <source>Remembering the model</source>
            <translation>记录模型</translation>
        </message>
        <message>
            <source>Ready: {precision} on {device}.</source>
            <translation>就绪：{precision}，运行于 {device}。</translation>
        </message>
        <message>
            <source>Chat model loaded in {seconds} s</source>
            <translation>对话模型已加载，用时 {seconds} 秒</translation>
        </message>
        <message>
            <source>Model changed to {model}</source>
            <translation>模型已切换为 {model}</translation>
        </message>
        <message>
            <source>Saving the reply</source>
            <translation>保存回复</translation>
        </message>
        <message>
            <source>Last reply: {figures}</source>
            <translation>上一条回复：{figures}</translation>
        </message>
        <message>
            <source>No model loaded.</source>
            <translation>未加载模型。</translation>
        </message>
        <message>
            <source>The reply did not finish.</source>
            <translation>回复未完成。</translation>
        </message>
        <message>
            <source>(not finished)</source>
            <translation>（未完成）</translation>
        </message>
        <message>
            <source>Load a model first (the panel on the right).</source>
            <translation>请先加载模型（右侧面板）。</translation>
        </message>
        <message>
            <source>Saving the conversation</source>
            <translation>保存对话</translation>
        </message>
        <message>
            <source>Saving the message</source>
            <translation>保存消息</translation>
        </message>
        <message>
            <source>Asking for a reply</source>
            <translation>请求回复</translation>
        </message>
        <message>
            <source>Stop the reply before switching conversations.</source>
            <translation>切换对话前请先停止回复。</translation>
        </message>
        <message>
            <source>Opening the conversation</source>
            <translation>打开对话</translation>
        </message>
    </context>
    <context>
        <name>ChatView</name>
        <message>
            <source>Load a model on the right, then type below. Enter sends, Shift+Enter adds a line.</source>
            <translation>先在右侧加载模型，然后在下方输入。Enter 发送，Shift+Enter 换行。</translation>
        </message>
    </context>
    <context>
        <name>ConversationList</name>
        <message>
            <source>&amp;New chat</source>
            <translation>新对话(&amp;N)</translation>
        </message>
        <message>
            <source>Search conversations</source>
            <translation>搜索对话</translation>
        </message>
        <message>
            <source>Export…</source>
            <translation>导出…</translation>
        </message>
        <message>
            <source>Save the selected conversation as Markdown or JSON</source>
            <translation>将所选对话保存为 Markdown 或 JSON</translation>
        </message>
        <message>
            <source>Delete</source>
            <translation>删除</translation>
        </message>
        <message>
            <source>Reading the chat history</source>
            <translation>读取对话历史</translation>
        </message>
        <message>
            <source>Updating the chat history</source>
            <translation>更新对话历史</translation>
        </message>
        <message>
            <source>Exporting the conversation</source>
            <translation>导出对话</translation>
        </message>
        <message>
            <source>Export conversation</source>
            <translation>导出对话</translation>
        </message>
        <message>
            <source>Delete conversation</source>
            <translation>删除对话</translation>
        </message>
        <message>
            <source>Delete this conversation?</source>
            <translation>删除此对话？</translation>
        </message>
        <message>
            <source>Deleting the conversation</source>
            <translation>删除对话</translation>
        </message>
    </context>
    <context>
        <name>LiveFigures</name>
        <message>
            <source>No model loaded.</source>
            <translation>未加载模型。</translation>
        </message>
        <message>
            <source>none</source>
            <translation>无</translation>
        </message>
        <message>
            <source>{text} · preset: {preset}</source>
            <translation>{text} · 预设：{preset}</translation>
        </message>
        <message>
            <source>Generating… {count} token</source>
            <translation>正在生成… {count} 个 token</translation>
        </message>
        <message>
            <source>Generating… {count} tokens</source>
            <translation>正在生成… {count} 个 token</translation>
        </message>
        <message>
            <source>waiting for the first token ({ms} ms)</source>
            <translation>等待第一个 token（{ms} ms）</translation>
        </message>
        <message>
            <source>TTFT {ms} ms</source>
            <translation>TTFT {ms} ms</translation>
        </message>
        <message>
            <source>{rate} tok/s</source>
            <translation>{rate} tok/s</translation>
        </message>
    </context>
    <context>
        <name>LoadedModel</name>
        <message>
            <source>Spread over {gpus}</source>
            <translation>分布在 {gpus} 上</translation>
        </message>
        <message>
            <source> (layers {layers})</source>
            <translation>（第 {layers} 层）</translation>
        </message>
    </context>
    <context>
        <name>MessageWidget</name>
        <message>
            <source>You</source>
            <translation>你</translation>
        </message>
        <message>
            <source>Assistant</source>
            <translation>助手</translation>
        </message>
        <message>
            <source>System</source>
            <translation>系统</translation>
        </message>
        <message>
            <source>Copy</source>
            <translation>复制</translation>
        </message>
        <message>
            <source>Copy this message's text</source>
            <translation>复制这条消息的文本</translation>
        </message>
    </context>
    <context>
        <name>ModelPanel</name>
        <message>
            <source>Auto (GPU when torch sees one)</source>
            <translation>自动（torch 能看到 GPU 时用 GPU）</translation>
        </message>
        <message>
            <source>Model</source>
            <translation>模型</translation>
        </message>
        <message>
            <source>Hugging Face model folder</source>
            <translation>Hugging Face 模型文件夹</translation>
        </message>
        <message>
            <source>Browse…</source>
            <translation>浏览…</translation>
        </message>
        <message>
            <source>F&amp;older:</source>
            <translation>文件夹(&amp;O)：</translation>
        </message>
        <message>
            <source>Recent models</source>
            <translation>最近使用的模型</translation>
        </message>
        <message>
            <source>Re&amp;cent:</source>
            <translation>最近(&amp;C)：</translation>
        </message>
        <message>
            <source>How the weights are held. On a GPU: NF4 (default), 8-bit, fp16, bf16, fp32. On the CPU: bf16 (default) and fp32, and NF4/8-bit through bitsandbytes' CPU kernels (slower per token, but a quarter/half of the memory); fp16 is slow there.</source>
            <translation>权重的存储精度。GPU 上：NF4（默认）、8 位、fp16、bf16、fp32。CPU 上：bf16（默认）和 fp32，以及通过 bitsandbytes 的 CPU 内核运行的 NF4/8 位（每个 token 更慢，但内存只需四分之一/一半）；fp16 在 CPU 上很慢。</translation>
        </message>
        <message>
            <source>&amp;Precision:</source>
            <translation>精度(&amp;P)：</translation>
        </message>
        <message>
            <source>&amp;Device:</source>
            <translation>设备(&amp;D)：</translation>
        </message>
        <message>
            <source> tokens</source>
            <translation> 个 token</translation>
        </message>
        <message>
            <source>Conte&amp;xt:</source>
            <translation>上下文(&amp;X)：</translation>
        </message>
        <message>
            <source>Allow this model's own code (trust_remote_code)</source>
            <translation>允许此模型自带的代码（trust_remote_code）</translation>
        </message>
        <message>
            <source>Runs Python files from the model folder with your rights. LLaMA models never need it. Only for repositories you trust.</source>
            <translation>以你的权限运行模型文件夹中的 Python 文件。LLaMA 模型从不需要它。仅用于你信任的仓库。</translation>
        </message>
        <message>
            <source>Allow Hugging Face hub access</source>
            <translation>允许访问 Hugging Face Hub</translation>
        </message>
        <message>
            <source>Off: the worker runs with HF_HUB_OFFLINE=1 and never reaches the network. Both permissions apply to this folder only and reset when you pick another.</source>
            <translation>关闭时：工作进程以 HF_HUB_OFFLINE=1 运行，从不访问网络。两项权限都只对此文件夹有效，选择其他文件夹时会重置。</translation>
        </message>
        <message>
            <source>Pick a model folder.</source>
            <translation>请选择模型文件夹。</translation>
        </message>
        <message>
            <source>&amp;Load</source>
            <translation>加载(&amp;L)</translation>
        </message>
        <message>
            <source>&amp;Unload</source>
            <translation>卸载(&amp;U)</translation>
        </message>
        <message>
            <source>No model loaded.</source>
            <translation>未加载模型。</translation>
        </message>
        <message>
            <source>System prompt</source>
            <translation>系统提示词</translation>
        </message>
        <message>
            <source>Optional instructions for every reply</source>
            <translation>可选：对每条回复的指示</translation>
        </message>
        <message>
            <source>Saving the chat settings</source>
            <translation>保存对话设置</translation>
        </message>
        <message>
            <source>Model folder</source>
            <translation>模型文件夹</translation>
        </message>
        <message>
            <source>Checking the folder…</source>
            <translation>正在检查文件夹…</translation>
        </message>
        <message>
            <source>Checking the model folder</source>
            <translation>检查模型文件夹</translation>
        </message>
        <message>
            <source>Checking the workload Python's packages…</source>
            <translation>正在检查工作负载 Python 的软件包…</translation>
        </message>
        <message>
            <source>process RSS</source>
            <translation>进程 RSS</translation>
        </message>
        <message>
            <source>Loaded &lt;b&gt;{name}&lt;/b&gt;: {precision} on {device}, {params} parameters, context {context}, in {seconds} s; {memory} {kind}.{where}</source>
            <translation>已加载 &lt;b&gt;{name}&lt;/b&gt;：{precision}，运行于 {device}，{params} 参数，上下文 {context}，用时 {seconds} 秒；{memory} {kind}。{where}</translation>
        </message>
    </context>
    <context>
        <name>PackagesBox</name>
        <message>
            <source>Install missing packages</source>
            <translation>安装缺少的软件包</translation>
        </message>
        <message>
            <source>Install PyTorch and the chat's packages…</source>
            <translation>安装 PyTorch 和对话所需的软件包…</translation>
        </message>
        <message>
            <source>The chat cannot load a model yet. {fix}</source>
            <translation>对话暂时无法加载模型。{fix}</translation>
        </message>
    </context>
    <context>
        <name>ReplyFigures</name>
        <message>
            <source>{count} tokens</source>
            <translation>{count} 个 token</translation>
        </message>
        <message>
            <source>{rate} tok/s</source>
            <translation>{rate} tok/s</translation>
        </message>
        <message>
            <source>TTFT {ms} ms</source>
            <translation>TTFT {ms} ms</translation>
        </message>
        <message>
            <source>peak {memory}</source>
            <translation>峰值 {memory}</translation>
        </message>
        <message>
            <source>stopped</source>
            <translation>已停止</translation>
        </message>
    </context>
    <context>
        <name>SamplingBox</name>
        <message>
            <source>Sampling</source>
            <translation>采样</translation>
        </message>
        <message>
            <source>0 = greedy (always the likeliest)</source>
            <translation>0 = 贪心（总是选最可能的）</translation>
        </message>
        <message>
            <source>Te&amp;mperature:</source>
            <translation>温度(&amp;M)：</translation>
        </message>
        <message>
            <source>Nucleus sampling threshold</source>
            <translation>核采样阈值</translation>
        </message>
        <message>
            <source>Top-p:</source>
            <translation>Top-p：</translation>
        </message>
        <message>
            <source>Top-&amp;k:</source>
            <translation>Top-k(&amp;K)：</translation>
        </message>
        <message>
            <source>1.0 = no penalty</source>
            <translation>1.0 = 不惩罚</translation>
        </message>
        <message>
            <source>Repetition penalt&amp;y:</source>
            <translation>重复惩罚(&amp;Y)：</translation>
        </message>
        <message>
            <source>Max ne&amp;w tokens:</source>
            <translation>最大新 token 数(&amp;W)：</translation>
        </message>
        <message>
            <source>random</source>
            <translation>随机</translation>
        </message>
        <message>
            <source>Seed:</source>
            <translation>随机种子：</translation>
        </message>
    </context>
    <context>
        <name>ServePanel</name>
        <message>
            <source>Serve</source>
            <translation>服务</translation>
        </message>
        <message>
            <source>Port:</source>
            <translation>端口：</translation>
        </message>
        <message>
            <source>any free</source>
            <translation>任意空闲端口</translation>
        </message>
        <message>
            <source>Port</source>
            <translation>端口</translation>
        </message>
        <message>
            <source>Not serving.</source>
            <translation>未提供服务。</translation>
        </message>
        <message>
            <source>Starting…</source>
            <translation>正在启动…</translation>
        </message>
        <message>
            <source>No API key was read.</source>
            <translation>未读取到 API 密钥。</translation>
        </message>
        <message>
            <source>Reading the API key</source>
            <translation>读取 API 密钥</translation>
        </message>
        <message>
            <source>The chat worker is not running.</source>
            <translation>对话工作进程未在运行。</translation>
        </message>
        <message>
            <source>Starting the server</source>
            <translation>启动服务器</translation>
        </message>
        <message>
            <source>Restarting with the new key…</source>
            <translation>正在使用新密钥重启…</translation>
        </message>
        <message>
            <source>Stopping…</source>
            <translation>正在停止…</translation>
        </message>
        <message>
            <source>Stopping the server</source>
            <translation>停止服务器</translation>
        </message>
        <message>
            <source>Serving {model}.</source>
            <translation>正在提供 {model} 的服务。</translation>
        </message>
        <message>
            <source>Clients using the current key will get 401 until they are given the new one. The server restarts with the new key.</source>
            <translation>使用当前密钥的客户端在拿到新密钥之前会收到 401。服务器将使用新密钥重启。</translation>
        </message>
        <message>
            <source>Clients using the current key will get 401 until they are given the new one.</source>
            <translation>使用当前密钥的客户端在拿到新密钥之前会收到 401。</translation>
        </message>
        <message>
            <source>Make a new API key?</source>
            <translation>生成新的 API 密钥？</translation>
        </message>
        <message>
            <source>No API key was made.</source>
            <translation>未能生成 API 密钥。</translation>
        </message>
        <message>
            <source>Making a new API key</source>
            <translation>生成新的 API 密钥</translation>
        </message>
        <message>
            <source>Saving the serve port</source>
            <translation>保存服务端口</translation>
        </message>
        <message>
            <source>Serve over HTTP</source>
            <translation>通过 HTTP 提供服务</translation>
        </message>
        <message>
            <source>Serve the loaded model over an OpenAI-compatible API on 127.0.0.1 (this computer only), with an API key. Chat keeps working; replies and requests take turns.</source>
            <translation>在 127.0.0.1（仅限本机）上通过兼容 OpenAI 的 API 提供已加载模型的服务，使用 API 密钥。对话仍可使用；回复和请求轮流处理。</translation>
        </message>
        <message>
            <source>Load a model first: the server answers with the model loaded here.</source>
            <translation>请先加载模型：服务器使用此处加载的模型作答。</translation>
        </message>
        <message>
            <source>Serving needs a real model loaded on this machine; the demo has recordings only.</source>
            <translation>提供服务需要在本机加载真实模型；演示模式只有录制的数据。</translation>
        </message>
        <message>
            <source>Listens on 127.0.0.1 only. To listen on another address, run rocmpanel serve --host ADDRESS (anyone who can reach it and has the key can use the model).</source>
            <translation>仅监听 127.0.0.1。要监听其他地址，请运行 rocmpanel serve --host ADDRESS（任何能访问该地址并持有密钥的人都能使用此模型）。</translation>
        </message>
        <message>
            <source>Stopped: the model stays loaded for Chat; Unload frees its memory.</source>
            <translation>已停止：模型仍为对话保持加载；卸载可释放其内存。</translation>
        </message>
        <message>
            <source>Stopped: the model was unloaded.</source>
            <translation>已停止：模型已卸载。</translation>
        </message>
        <message>
            <source>Stopped: another model is loading. Switch Serve on again when it is ready.</source>
            <translation>已停止：正在加载另一个模型。模型就绪后请重新打开服务。</translation>
        </message>
        <message>
            <source>Stopped: the chat worker ended, and the server with it.</source>
            <translation>已停止：对话工作进程已结束，服务器也随之结束。</translation>
        </message>
        <message>
            <source>Port {port} is already in use by another program. Pick another port and switch Serve on again.</source>
            <translation>端口 {port} 已被其他程序占用。请选择其他端口，然后重新打开服务。</translation>
        </message>
        <message>
            <source>Serving needs packages the workload Python lacks. {fix}</source>
            <translation>提供服务需要工作负载 Python 缺少的软件包。{fix}</translation>
        </message>
    </context>
    <context>
        <name>ServeStatus</name>
        <message>
            <source>Time</source>
            <translation>时间</translation>
        </message>
        <message>
            <source>Endpoint</source>
            <translation>端点</translation>
        </message>
        <message>
            <source>Status</source>
            <translation>状态</translation>
        </message>
        <message>
            <source>Tokens</source>
            <translation>Token 数</translation>
        </message>
        <message>
            <source>Latency</source>
            <translation>延迟</translation>
        </message>
        <message>
            <source>client left</source>
            <translation>客户端已断开</translation>
        </message>
        <message>
            <source>1 running</source>
            <translation>1 个正在处理</translation>
        </message>
        <message>
            <source>none running</source>
            <translation>没有正在处理的</translation>
        </message>
        <message>
            <source>Requests/min: {rate} · Tokens/s: {speed} · Queue: {waiting} waiting, {running}</source>
            <translation>请求/分钟：{rate} · Token/秒：{speed} · 队列：{waiting} 个等待，{running}</translation>
        </message>
        <message>
            <source>unknown</source>
            <translation>未知</translation>
        </message>
        <message>
            <source>{method} {path} from {client}</source>
            <translation>{method} {path}，来自 {client}</translation>
        </message>
        <message>
            <source>{prompt} prompt tokens, {generated} generated</source>
            <translation>提示 {prompt} 个 token，生成 {generated} 个</translation>
        </message>
        <message>
            <source>streamed</source>
            <translation>流式</translation>
        </message>
        <message>
            <source>first token after {seconds} s</source>
            <translation>首个 token 用时 {seconds} 秒</translation>
        </message>
        <message>
            <source>{rate} tokens/s</source>
            <translation>{rate} token/秒</translation>
        </message>
        <message>
            <source>finished: {reason}</source>
            <translation>结束原因：{reason}</translation>
        </message>
        <message>
            <source>error: {error}</source>
            <translation>错误：{error}</translation>
        </message>
        <message>
            <source>Server base URL</source>
            <translation>服务器基础 URL</translation>
        </message>
        <message>
            <source>The base URL for OpenAI clients (base_url).</source>
            <translation>OpenAI 客户端使用的基础 URL（base_url）。</translation>
        </message>
        <message>
            <source>Copy</source>
            <translation>复制</translation>
        </message>
        <message>
            <source>Copy the URL</source>
            <translation>复制 URL</translation>
        </message>
        <message>
            <source>URL:</source>
            <translation>URL：</translation>
        </message>
        <message>
            <source>API key</source>
            <translation>API 密钥</translation>
        </message>
        <message>
            <source>Clients send it as 'Authorization: Bearer &lt;key&gt;'.</source>
            <translation>客户端以 'Authorization: Bearer &lt;key&gt;' 的形式发送它。</translation>
        </message>
        <message>
            <source>Show</source>
            <translation>显示</translation>
        </message>
        <message>
            <source>Show the API key</source>
            <translation>显示 API 密钥</translation>
        </message>
        <message>
            <source>Copy the API key</source>
            <translation>复制 API 密钥</translation>
        </message>
        <message>
            <source>Key:</source>
            <translation>密钥：</translation>
        </message>
        <message>
            <source>New key…</source>
            <translation>新密钥…</translation>
        </message>
        <message>
            <source>Make a new API key; the old one stops working (a running server restarts).</source>
            <translation>生成新的 API 密钥；旧密钥将失效（运行中的服务器会重启）。</translation>
        </message>
        <message>
            <source>Last requests</source>
            <translation>最近的请求</translation>
        </message>
        <message>
            <source>Stored in {path}. Clients send it as 'Authorization: Bearer &lt;key&gt;'.</source>
            <translation>保存在 {path}。客户端以 'Authorization: Bearer &lt;key&gt;' 的形式发送它。</translation>
        </message>
        <message>
            <source>Hide</source>
            <translation>隐藏</translation>
        </message>
    </context>
    <context>
        <name>VllmBox</name>
        <message>
            <source>When one GPU is not enough</source>
            <translation>一个 GPU 不够用时</translation>
        </message>
        <message>
            <source>Load a model to see the vLLM command for it.</source>
            <translation>加载模型后可查看对应的 vLLM 命令。</translation>
        </message>
        <message>
            <source>Sources: {links}</source>
            <translation>来源：{links}</translation>
        </message>
        <message>
            <source>Copy</source>
            <translation>复制</translation>
        </message>
        <message>
            <source>Copy the {name}</source>
            <translation>复制 {name}</translation>
        </message>
        <message>
            <source>The vLLM-on-ROCm command to run instead, over several GPUs.</source>
            <translation>改用多个 GPU 运行的 vLLM-on-ROCm 命令。</translation>
        </message>
        <message>
            <source>vLLM command</source>
            <translation>vLLM 命令</translation>
        </message>
        <message>
            <source>Or in vLLM's ROCm container (Docker):</source>
            <translation>或在 vLLM 的 ROCm 容器（Docker）中：</translation>
        </message>
        <message>
            <source>vLLM Docker command</source>
            <translation>vLLM Docker 命令</translation>
        </message>
        <message>
            <source>Building the command…</source>
            <translation>正在生成命令…</translation>
        </message>
        <message>
            <source>Building the vLLM command</source>
            <translation>生成 vLLM 命令</translation>
        </message>
        <message>
            <source>Run this instead (vLLM on ROCm, tensor parallel over {cards} GPUs), with the key in {variable}:</source>
            <translation>改为运行此命令（ROCm 上的 vLLM，在 {cards} 个 GPU 上张量并行），密钥放在 {variable} 中：</translation>
        </message>
        <message>
            <source>Run this instead (vLLM on ROCm, on one GPU), with the key in {variable}:</source>
            <translation>改为运行此命令（ROCm 上的 vLLM，单个 GPU），密钥放在 {variable} 中：</translation>
        </message>
    </context>
    <context>
        <name>WorkerBanner</name>
        <message>
            <source>Reload</source>
            <translation>重新加载</translation>
        </message>
        <message>
            <source>Reload smaller</source>
            <translation>以更小设置重新加载</translation>
        </message>
        <message>
            <source>Dismiss</source>
            <translation>关闭</translation>
        </message>
        <message>
            <source>Reload with {precision}, context {context}</source>
            <translation>以 {precision}、上下文 {context} 重新加载</translation>
        </message>
    </context>
    <context>
        <name>check_summary</name>
        <message>
            <source>unknown architecture</source>
            <translation>未知架构</translation>
        </message>
        <message>
            <source>&lt;b&gt;{name}&lt;/b&gt;, {params} parameters, {size} on disk</source>
            <translation>&lt;b&gt;{name}&lt;/b&gt;，{params} 参数，磁盘上 {size}</translation>
        </message>
        <message>
            <source>Hub access is on for this model: transformers may contact huggingface.co and download files it finds missing.</source>
            <translation>已为此模型开启 Hub 访问：transformers 可能会连接 huggingface.co 并下载缺少的文件。</translation>
        </message>
        <message>
            <source>fp16 on the CPU is slow; bf16 or fp32 work better there, NF4/int8 run through bitsandbytes' CPU kernels.</source>
            <translation>fp16 在 CPU 上很慢；在 CPU 上 bf16 或 fp32 更好，NF4/int8 通过 bitsandbytes 的 CPU 内核运行。</translation>
        </message>
        <message>
            <source> (weights {weights}, KV cache {kv_cache}, overhead {overhead})</source>
            <translation>（权重 {weights}，KV 缓存 {kv_cache}，额外开销 {overhead}）</translation>
        </message>
    </context>
    <context>
        <name>figures</name>
        <message>
            <source>VRAM n/a</source>
            <translation>显存 n/a</translation>
        </message>
        <message>
            <source>VRAM used {memory}</source>
            <translation>已用显存 {memory}</translation>
        </message>
        <message>
            <source>memory n/a</source>
            <translation>内存 n/a</translation>
        </message>
        <message>
            <source>worker RSS {memory}</source>
            <translation>工作进程 RSS {memory}</translation>
        </message>
    </context>
    <context>
        <name>load_steps</name>
        <message>
            <source>Importing torch and transformers</source>
            <translation>正在导入 torch 和 transformers</translation>
        </message>
        <message>
            <source>Reading the tokenizer</source>
            <translation>正在读取分词器</translation>
        </message>
        <message>
            <source>Ready check</source>
            <translation>就绪检查</translation>
        </message>
        <message>
            <source>Loaded</source>
            <translation>已加载</translation>
        </message>
        <message>
            <source>Loading weights ({done}/{total})</source>
            <translation>正在加载权重（{done}/{total}）</translation>
        </message>
        <message>
            <source>Loading weights ({precision} on {count} GPUs)</source>
            <translation>正在加载权重（{precision}，{count} 个 GPU）</translation>
        </message>
        <message>
            <source>Loading weights ({precision} on {device})</source>
            <translation>正在加载权重（{precision}，{device}）</translation>
        </message>
    </context>
    <context>
        <name>memory_estimate</name>
        <message>
            <source>{first} and {last}</source>
            <translation>{first} 和 {last}</translation>
        </message>
        <message>
            <source>free</source>
            <translation>可用</translation>
        </message>
        <message>
            <source>free or in all</source>
            <translation>可用或总计</translation>
        </message>
        <message>
            <source>Needs about {need}: more than the first GPU has free, so it goes on {gpu} alone ({room} {words}).</source>
            <translation>约需 {need}：超过第一个 GPU 的可用量，因此单独放在 {gpu} 上（{room} {words}）。</translation>
        </message>
        <message>
            <source>Needs about {need}, more than one GPU has free: it will be spread over {names} ({rooms} {words}).</source>
            <translation>约需 {need}，超过任何一个 GPU 的可用量：将分布在 {names} 上（{rooms} {words}）。</translation>
        </message>
        <message>
            <source>unknown</source>
            <translation>未知</translation>
        </message>
        <message>
            <source>Needs about {need} but the {count} chosen GPUs have only {rooms} {words}: it will not fit, not even spread over them.</source>
            <translation>约需 {need}，但所选的 {count} 个 GPU 只有 {rooms} {words}：放不下，即使分布到它们上也不行。</translation>
        </message>
        <message>
            <source>Needs about {need} but the device has only {total} of {where}: it will not fit.</source>
            <translation>约需 {need}，但该设备的 {where} 只有 {total}：放不下。</translation>
        </message>
        <message>
            <source>Needs about {need}; free {where} is unknown (of {total} in all).</source>
            <translation>约需 {need}；可用 {where} 未知（共 {total}）。</translation>
        </message>
        <message>
            <source>Needs about {need}; free {where} is unknown.</source>
            <translation>约需 {need}；可用 {where} 未知。</translation>
        </message>
        <message>
            <source>Needs about {need} but only {free} of {where} is free: it will not fit.</source>
            <translation>约需 {need}，但 {where} 只有 {free} 可用：放不下。</translation>
        </message>
        <message>
            <source>Needs about {need} of {free} free {where}: tight, other programs may push it out of memory.</source>
            <translation>约需 {need}，可用 {where} 为 {free}：比较紧张，其他程序可能导致内存不足。</translation>
        </message>
        <message>
            <source>Needs about {need}; {free} of {where} is free.</source>
            <translation>约需 {need}；{where} 可用 {free}。</translation>
        </message>
        <message>
            <source> Try {precision} or a shorter context.</source>
            <translation>请尝试 {precision} 或更短的上下文。</translation>
        </message>
        <message>
            <source> Try a shorter context or a smaller model.</source>
            <translation>请尝试更短的上下文或更小的模型。</translation>
        </message>
    </context>
    <context>
        <name>model_check</name>
        <message>
            <source>{file} is not a regular file (a FIFO, a device or a socket), so it is not a safetensors file.</source>
            <translation>{file} 不是普通文件（是 FIFO、设备或套接字），因此不是 safetensors 文件。</translation>
        </message>
        <message>
            <source>{file} is too short to be a safetensors file.</source>
            <translation>{file} 太短，不可能是 safetensors 文件。</translation>
        </message>
        <message>
            <source>{file} has an implausible safetensors header.</source>
            <translation>{file} 的 safetensors 头不合理。</translation>
        </message>
        <message>
            <source>{file} is cut short: its safetensors header is incomplete.</source>
            <translation>{file} 被截断：其 safetensors 头不完整。</translation>
        </message>
        <message>
            <source>Could not read {file}: {reason}.</source>
            <translation>无法读取 {file}：{reason}。</translation>
        </message>
        <message>
            <source>{file} has a damaged safetensors header.</source>
            <translation>{file} 的 safetensors 头已损坏。</translation>
        </message>
        <message>
            <source>the entry of tensor {tensor} is not a description</source>
            <translation>张量 {tensor} 的条目不是描述</translation>
        </message>
        <message>
            <source>tensor {tensor} has the shape {shape}, not a list of sizes</source>
            <translation>张量 {tensor} 的形状为 {shape}，不是尺寸列表</translation>
        </message>
        <message>
            <source>tensor {tensor} has the unknown dtype {dtype}</source>
            <translation>张量 {tensor} 的 dtype {dtype} 未知</translation>
        </message>
        <message>
            <source>tensor {tensor} would hold more than 10 trillion parameters, far more than any model</source>
            <translation>张量 {tensor} 将包含超过 10 万亿个参数，远超任何模型</translation>
        </message>
        <message>
            <source>{file} has a damaged header: {detail}. Download the file again; it cannot be loaded as it is.</source>
            <translation>{file} 的头已损坏：{detail}。请重新下载该文件；它在当前状态下无法加载。</translation>
        </message>
        <message>
            <source>{file} is not valid JSON.</source>
            <translation>{file} 不是有效的 JSON。</translation>
        </message>
        <message>
            <source>{file} cannot be used: {reason}.</source>
            <translation>{file} 无法使用：{reason}。</translation>
        </message>
        <message>
            <source>{missing} of {listed} weight shards are missing (first: {first}); the download is incomplete.</source>
            <translation>{listed} 个权重分片中缺少 {missing} 个（第一个：{first}）；下载不完整。</translation>
        </message>
        <message>
            <source>Only pickled weights were found ({file}); rocmpanel loads safetensors only, because pickled files can run code. Convert the model or pick the safetensors version.</source>
            <translation>只找到 pickle 格式的权重（{file}）；rocmpanel 只加载 safetensors，因为 pickle 文件可以运行代码。请转换模型或选择 safetensors 版本。</translation>
        </message>
        <message>
            <source>No weights were found: the folder has no .safetensors files.</source>
            <translation>未找到权重：文件夹中没有 .safetensors 文件。</translation>
        </message>
        <message>
            <source>{file} is damaged: its weight_map is not a mapping from tensor names to files. Download the model again.</source>
            <translation>{file} 已损坏：其 weight_map 不是从张量名到文件的映射。请重新下载模型。</translation>
        </message>
        <message>
            <source>{file} is damaged: its weight_map names the shard {shard}, which is not a file name. Download the model again.</source>
            <translation>{file} 已损坏：其 weight_map 指定的分片 {shard} 不是文件名。请重新下载模型。</translation>
        </message>
        <message>
            <source>{file} names the shard {shard}, which is outside the model folder; rocmpanel reads only files inside it.</source>
            <translation>{file} 指定的分片 {shard} 位于模型文件夹之外；rocmpanel 只读取文件夹内的文件。</translation>
        </message>
        <message>
            <source>it is not valid JSON</source>
            <translation>它不是有效的 JSON</translation>
        </message>
        <message>
            <source>{file} is damaged: {detail}. Download the model's tokenizer files again.</source>
            <translation>{file} 已损坏：{detail}。请重新下载模型的分词器文件。</translation>
        </message>
        <message>
            <source>it is not a JSON object</source>
            <translation>它不是 JSON 对象</translation>
        </message>
        <message>
            <source>it has no 'added_tokens' list</source>
            <translation>它没有 'added_tokens' 列表</translation>
        </message>
        <message>
            <source>its 'added_tokens' list holds {entry}, which has no token id</source>
            <translation>它的 'added_tokens' 列表包含 {entry}，该项没有 token id</translation>
        </message>
        <message>
            <source>it has no 'model' section</source>
            <translation>它没有 'model' 部分</translation>
        </message>
        <message>
            <source>{folder} is not a folder.</source>
            <translation>{folder} 不是文件夹。</translation>
        </message>
        <message>
            <source>config.json is missing: this is not a Hugging Face model folder.</source>
            <translation>缺少 config.json：这不是 Hugging Face 模型文件夹。</translation>
        </message>
        <message>
            <source>config.json holds no settings object (a JSON object is expected): this is not a Hugging Face model folder.</source>
            <translation>config.json 中没有设置对象（应为 JSON 对象）：这不是 Hugging Face 模型文件夹。</translation>
        </message>
        <message>
            <source>config.json names no architecture.</source>
            <translation>config.json 未指定架构。</translation>
        </message>
        <message>
            <source>{architecture} is not a text-generation (causal LM) model.</source>
            <translation>{architecture} 不是文本生成（因果语言模型）模型。</translation>
        </message>
        <message>
            <source>Model type {type} is not LLaMA-family; loading may work, the memory estimate may be off.</source>
            <translation>模型类型 {type} 不属于 LLaMA 系列；可能可以加载，但内存估算可能不准。</translation>
        </message>
        <message>
            <source>This model ships its own Python code and you allowed it to run: it runs with your user's rights. Only do this for a repository you trust.</source>
            <translation>此模型自带 Python 代码，并且你允许了它运行：它将以你的用户权限运行。仅对你信任的仓库这样做。</translation>
        </message>
        <message>
            <source>This model needs its own Python code (auto_map / custom modelling files), which rocmpanel does not run unless you allow remote code for this model.</source>
            <translation>此模型需要运行自带的 Python 代码（auto_map / 自定义建模文件），除非你为此模型允许远程代码，否则 rocmpanel 不会运行它。</translation>
        </message>
        <message>
            <source>The weights are already quantized ({method}); the precision choice does not apply.</source>
            <translation>权重已经量化（{method}）；精度选择不适用。</translation>
        </message>
        <message>
            <source>The safetensors headers add up to more than 10 trillion parameters, far more than any model: a header is damaged. Download the model again.</source>
            <translation>safetensors 头加起来超过 10 万亿个参数，远超任何模型：某个头已损坏。请重新下载模型。</translation>
        </message>
        <message>
            <source>No tokenizer was found (tokenizer.json or tokenizer.model).</source>
            <translation>未找到分词器（tokenizer.json 或 tokenizer.model）。</translation>
        </message>
        <message>
            <source>The tokenizer has no chat template; a plain 'role: text' layout is used, which a base (non-chat) model may continue oddly.</source>
            <translation>分词器没有对话模板；将使用简单的 'role: text' 格式，基础（非对话）模型可能会接续得很奇怪。</translation>
        </message>
    </context>
    <context>
        <name>requirements</name>
        <message>
            <source>{name} {installed} (needs {minimum} or newer)</source>
            <translation>{name} {installed}（需要 {minimum} 或更新版本）</translation>
        </message>
        <message>
            <source>PyTorch is not installed in the workload Python: install PyTorch from the PyTorch tab (its plan picks the build for this GPU).</source>
            <translation>工作负载 Python 中未安装 PyTorch：请在“PyTorch”标签页安装 PyTorch（其安装计划会为此 GPU 选择合适的版本）。</translation>
        </message>
        <message>
            <source>The install button below installs them.</source>
            <translation>下方的安装按钮会安装它们。</translation>
        </message>
        <message>
            <source>Install them into the workload Python.</source>
            <translation>请将它们安装到工作负载 Python 中。</translation>
        </message>
        <message>
            <source>It also lacks {names}. {fix}</source>
            <translation>它还缺少 {names}。{fix}</translation>
        </message>
        <message>
            <source>The workload Python lacks {names}. {fix}</source>
            <translation>工作负载 Python 缺少 {names}。{fix}</translation>
        </message>
        <message>
            <source>{first} {second}</source>
            <translation>{first}{second}</translation>
        </message>
    </context>
    <context>
        <name>vllm</name>
        <message>
            <source>{file} is not valid YAML.</source>
            <translation>{file} 不是有效的 YAML。</translation>
        </message>
        <message>
            <source>{file} is malformed.</source>
            <translation>{file} 格式有误。</translation>
        </message>
        <message>
            <source>Could not read {file}.</source>
            <translation>无法读取 {file}。</translation>
        </message>
        <message>
            <source>vLLM splits the model over {count} GPUs (tensor parallel) and answers many requests at once; rocmpanel serves on one device, one request at a time.</source>
            <translation>vLLM 将模型拆分到 {count} 个 GPU 上（张量并行），并能同时处理多个请求；rocmpanel 在一个设备上服务，一次处理一个请求。</translation>
        </message>
        <message>
            <source>With one GPU this serves on one device, as rocmpanel does, but answers many requests at once; select more GPUs to split the model over them.</source>
            <translation>只有一个 GPU 时，它和 rocmpanel 一样在一个设备上服务，但能同时处理多个请求；选择更多 GPU 即可把模型拆分到它们上。</translation>
        </message>
        <message>
            <source>It serves the folder's own weights in their dtype (usually bf16): about 2 bytes per parameter, spread over the GPUs, plus the KV cache; vLLM takes 90% of each GPU's memory by default (--gpu-memory-utilization). rocmpanel's 4-bit and 8-bit (bitsandbytes) do not carry over: vLLM loads bitsandbytes on ROCm only on Radeon GPUs, not on Instinct.</source>
            <translation>它以文件夹中权重本身的 dtype（通常为 bf16）提供服务：每个参数约 2 字节，分布在各 GPU 上，另加 KV 缓存；vLLM 默认占用每个 GPU 90% 的显存（--gpu-memory-utilization）。rocmpanel 的 4 位和 8 位（bitsandbytes）不适用：vLLM 在 ROCm 上只在 Radeon GPU 上加载 bitsandbytes，Instinct 上不行。</translation>
        </message>
        <message>
            <source>vLLM on ROCm supports {targets}.</source>
            <translation>ROCm 上的 vLLM 支持 {targets}。</translation>
        </message>
        <message>
            <source>vLLM on ROCm supports {targets}; {target} is not among them, so it may not run here.</source>
            <translation>ROCm 上的 vLLM 支持 {targets}；{target} 不在其中，因此可能无法在此运行。</translation>
        </message>
        <message>
            <source>vLLM on ROCm supports {targets}; {target} are not among them, so it may not run here.</source>
            <translation>ROCm 上的 vLLM 支持 {targets}；{target} 不在其中，因此可能无法在此运行。</translation>
        </message>
        <message>
            <source>Set {variable} to the API key first (export {variable}="$(cat {file})"): vLLM reads it as {vllm_variable}, so the key is neither in this line nor in the process list. vLLM checks the key only under /v1 and a few other paths, so other endpoints answer anyone who can reach it.</source>
            <translation>请先将 {variable} 设置为 API 密钥（export {variable}="$(cat {file})"）：vLLM 以 {vllm_variable} 读取它，因此密钥既不在这行命令中，也不在进程列表中。vLLM 只在 /v1 和少数其他路径下检查密钥，因此其他端点会响应任何能访问它的人。</translation>
        </message>
        <message>
            <source>It listens on {host}: anyone who can reach this machine there can use the endpoints vLLM does not guard, over plain HTTP.</source>
            <translation>它监听 {host}：任何能通过该地址访问本机的人，都能通过明文 HTTP 使用 vLLM 未保护的端点。</translation>
        </message>
        <message>
            <source>vLLM does not run on Windows (its documentation points to WSL): run this on a Linux machine with the GPUs; the line is for a POSIX shell such as bash.</source>
            <translation>vLLM 不能在 Windows 上运行（其文档建议使用 WSL）：请在装有这些 GPU 的 Linux 机器上运行；此命令行适用于 bash 等 POSIX shell。</translation>
        </message>
    </context>
    <context>
        <name>worker_link</name>
        <message>
            <source>Ending the chat worker</source>
            <translation>结束对话工作进程</translation>
        </message>
    </context>
</TS>
