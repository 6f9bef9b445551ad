<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
    <context>
        <name>AboutDialog</name>
        <message>
            <source>About rocmpanel</source>
            <translation>关于 rocmpanel</translation>
        </message>
        <message>
            <source>rocmpanel {version}</source>
            <translation>rocmpanel {version}</translation>
        </message>
        <message>
            <source>A control panel for PyTorch and local LLMs on AMD GPUs with ROCm.</source>
            <translation>在 AMD GPU 上通过 ROCm 运行 PyTorch 和本地大语言模型的控制面板。</translation>
        </message>
        <message>
            <source>Settings: {settings}&lt;br&gt;Data: {data}&lt;br&gt;Log: {log}&lt;br&gt;Panel Python: {python}</source>
            <translation>设置：{settings}&lt;br&gt;数据：{data}&lt;br&gt;日志：{log}&lt;br&gt;面板的 Python：{python}</translation>
        </message>
    </context>
    <context>
        <name>ActivePresetHolder</name>
        <message>
            <source>Preset: {name}</source>
            <translation>预设：{name}</translation>
        </message>
        <message>
            <source>Preset: none</source>
            <translation>预设：无</translation>
        </message>
    </context>
    <context>
        <name>CrashDialog</name>
        <message>
            <source>rocmpanel: unexpected error</source>
            <translation>rocmpanel：意外错误</translation>
        </message>
        <message>
            <source>The panel is still running; nothing was lost. The details are also in the log at {path}.</source>
            <translation>面板仍在运行，没有丢失任何内容。详细信息也已写入日志 {path}。</translation>
        </message>
        <message>
            <source>&amp;Copy details</source>
            <translation>复制详细信息(&amp;C)</translation>
        </message>
        <message>
            <source>Copied</source>
            <translation>已复制</translation>
        </message>
    </context>
    <context>
        <name>FirstRunGuide</name>
        <message>
            <source>1  Check this machine</source>
            <translation>1  检查这台机器</translation>
        </message>
        <message>
            <source>The Setup tab: the verdict for your GPUs and the checklist of the ROCm stack, with a Fix next to each failing check.</source>
            <translation>“环境检测”标签页：你的 GPU 的支持结论和 ROCm 软件栈检查清单，每个未通过的检查项旁都有“修复”按钮。</translation>
        </message>
        <message>
            <source>2  Install PyTorch</source>
            <translation>2  安装 PyTorch</translation>
        </message>
        <message>
            <source>The PyTorch tab: the right build for your GPU into an environment of its own (Install).</source>
            <translation>“PyTorch”标签页：把适合你的 GPU 的版本装进一个独立的环境（“安装”）。</translation>
        </message>
        <message>
            <source>3  Validate it</source>
            <translation>3  验证</translation>
        </message>
        <message>
            <source>The PyTorch tab: Validate active Python runs the checks on the GPU and shows pass or fail with measured figures.</source>
            <translation>“PyTorch”标签页：“验证当前 Python”在 GPU 上运行检查，并显示通过或失败及实测数据。</translation>
        </message>
        <message>
            <source>Getting started</source>
            <translation>入门</translation>
        </message>
        <message>
            <source>three steps to PyTorch on your AMD GPU</source>
            <translation>三步在你的 AMD GPU 上用上 PyTorch</translation>
        </message>
        <message>
            <source>Don't show again</source>
            <translation>不再显示</translation>
        </message>
        <message>
            <source>Help → First-run guide shows it again.</source>
            <translation>可通过“帮助 → 入门指南”再次打开。</translation>
        </message>
        <message>
            <source>Close the guide until next start</source>
            <translation>关闭指南，下次启动时再显示</translation>
        </message>
        <message>
            <source>Close the guide</source>
            <translation>关闭指南</translation>
        </message>
        <message>
            <source>Done</source>
            <translation>已完成</translation>
        </message>
    </context>
    <context>
        <name>GpuBox</name>
        <message>
            <source>Detecting…</source>
            <translation>正在检测…</translation>
        </message>
        <message>
            <source>No AMD GPU was found.</source>
            <translation>未找到 AMD GPU。</translation>
        </message>
        <message>
            <source>GPUs</source>
            <translation>GPU</translation>
        </message>
        <message>
            <source>The GPUs could not be detected.</source>
            <translation>无法检测 GPU。</translation>
        </message>
        <message>
            <source>Detecting the GPUs</source>
            <translation>检测 GPU</translation>
        </message>
    </context>
    <context>
        <name>GpuPicker</name>
        <message>
            <source>integrated</source>
            <translation>集成</translation>
        </message>
        <message>
            <source>GPUs for jobs</source>
            <translation>任务使用的 GPU</translation>
        </message>
        <message>
            <source>GPUs: …</source>
            <translation>GPU：…</translation>
        </message>
        <message>
            <source>GPUs: none</source>
            <translation>GPU：无</translation>
        </message>
        <message>
            <source>GPU: {index}</source>
            <translation>GPU：{index}</translation>
        </message>
        <message>
            <source>GPUs: {indices}</source>
            <translation>GPU：{indices}</translation>
        </message>
        <message>
            <source>Jobs run on: {gpus}.</source>
            <translation>任务运行于：{gpus}。</translation>
        </message>
        <message>
            <source>They get {variables}.</source>
            <translation>任务会得到 {variables}。</translation>
        </message>
        <message>
            <source>Click to choose.</source>
            <translation>点击选择。</translation>
        </message>
        <message>
            <source>Reading the GPUs…</source>
            <translation>正在读取 GPU…</translation>
        </message>
        <message>
            <source>Jobs run on:</source>
            <translation>任务运行于：</translation>
        </message>
        <message>
            <source>Default: the discrete GPUs</source>
            <translation>默认：独立 GPU</translation>
        </message>
        <message>
            <source>An integrated GPU next to a discrete one is left out.</source>
            <translation>同时存在独立 GPU 时，不使用集成 GPU。</translation>
        </message>
        <message>
            <source>All GPUs</source>
            <translation>全部 GPU</translation>
        </message>
        <message>
            <source>No AMD GPU is visible to ROCm on this machine</source>
            <translation>这台机器上 ROCm 看不到任何 AMD GPU</translation>
        </message>
        <message>
            <source>What this sets…</source>
            <translation>这会设置什么…</translation>
        </message>
        <message>
            <source>At least one GPU stays chosen; pick another first.</source>
            <translation>至少要选中一个 GPU；请先选择另一个。</translation>
        </message>
        <message>
            <source>Jobs started from now on run on {gpus}.</source>
            <translation>从现在起启动的任务将运行于 {gpus}。</translation>
        </message>
        <message>
            <source>Saving the GPU choice</source>
            <translation>保存 GPU 选择</translation>
        </message>
        <message>
            <source>Jobs run on {gpus}.</source>
            <translation>任务运行于 {gpus}。</translation>
        </message>
        <message>
            <source>removed</source>
            <translation>已移除</translation>
        </message>
        <message>
            <source>Jobs get no visibility variable: they see every GPU.</source>
            <translation>任务不会得到可见性变量：它们能看到所有 GPU。</translation>
        </message>
        <message>
            <source>GPUs are numbered in the runtime's order (the KFD topology), which can differ from rocm-smi's card numbers.</source>
            <translation>GPU 按运行时的顺序（KFD 拓扑）编号，可能与 rocm-smi 的显卡编号不同。</translation>
        </message>
    </context>
    <context>
        <name>HealthReportDialog</name>
        <message>
            <source>Export health report</source>
            <translation>导出健康报告</translation>
        </message>
        <message>
            <source>Gathering the report…</source>
            <translation>正在收集报告…</translation>
        </message>
        <message>
            <source>Off: your home folder becomes ~ and user names become &lt;user&gt;. The host name and secrets are always left out.</source>
            <translation>关闭时：主文件夹写作 ~，用户名写作 &lt;user&gt;。主机名和密钥始终不会包含在内。</translation>
        </message>
        <message>
            <source>Include &amp;user names in paths</source>
            <translation>在路径中包含用户名(&amp;U)</translation>
        </message>
        <message>
            <source>&amp;Formatted</source>
            <translation>格式化(&amp;F)</translation>
        </message>
        <message>
            <source>&amp;Markdown text</source>
            <translation>Markdown 文本(&amp;M)</translation>
        </message>
        <message>
            <source>&amp;Save as…</source>
            <translation>另存为(&amp;S)…</translation>
        </message>
        <message>
            <source>&amp;Copy Markdown</source>
            <translation>复制 Markdown(&amp;C)</translation>
        </message>
        <message>
            <source>Cl&amp;ose</source>
            <translation>关闭(&amp;O)</translation>
        </message>
        <message>
            <source>Preview:</source>
            <translation>预览：</translation>
        </message>
        <message>
            <source>Gathering the health report</source>
            <translation>收集健康报告</translation>
        </message>
        <message>
            <source>Check the report before you share it. The host name and secrets are left out; user names in paths too, unless you tick the box.</source>
            <translation>分享前请检查报告内容。主机名和密钥不会包含在内；除非勾选该选项，路径中的用户名也不会包含。</translation>
        </message>
        <message>
            <source>Copied the Markdown to the clipboard.</source>
            <translation>已将 Markdown 复制到剪贴板。</translation>
        </message>
        <message>
            <source>HTML page (*.html)</source>
            <translation>HTML 网页 (*.html)</translation>
        </message>
        <message>
            <source>Markdown (*.md)</source>
            <translation>Markdown (*.md)</translation>
        </message>
        <message>
            <source>Save health report</source>
            <translation>保存健康报告</translation>
        </message>
        <message>
            <source>Name a file ending in {suffixes}.</source>
            <translation>请使用以 {suffixes} 结尾的文件名。</translation>
        </message>
        <message>
            <source>Saving the health report</source>
            <translation>保存健康报告</translation>
        </message>
        <message>
            <source>Saved to {path}.</source>
            <translation>已保存到 {path}。</translation>
        </message>
    </context>
    <context>
        <name>JobChip</name>
        <message>
            <source>Cancelling…</source>
            <translation>正在取消…</translation>
        </message>
        <message>
            <source>Unloading…</source>
            <translation>正在卸载…</translation>
        </message>
        <message>
            <source>✓ done</source>
            <translation>✓ 完成</translation>
        </message>
        <message>
            <source>✗ failed</source>
            <translation>✗ 失败</translation>
        </message>
        <message>
            <source>✗ crashed</source>
            <translation>✗ 崩溃</translation>
        </message>
        <message>
            <source>cancelled</source>
            <translation>已取消</translation>
        </message>
        <message>
            <source>Cancel</source>
            <translation>取消</translation>
        </message>
        <message>
            <source>Unload</source>
            <translation>卸载</translation>
        </message>
        <message>
            <source>Runs on {gpus}.</source>
            <translation>运行于 {gpus}。</translation>
        </message>
        <message>
            <source>{job}: click to see its log</source>
            <translation>{job}：点击查看日志</translation>
        </message>
        <message>
            <source>Starting…</source>
            <translation>正在启动…</translation>
        </message>
        <message>
            <source>{action} {job}</source>
            <translation>{action} {job}</translation>
        </message>
        <message>
            <source>Remove from the strip</source>
            <translation>从任务列表中移除</translation>
        </message>
        <message>
            <source>Stopping…</source>
            <translation>正在停止…</translation>
        </message>
    </context>
    <context>
        <name>JobLogDialog</name>
        <message>
            <source>Job log: {name}</source>
            <translation>任务日志：{name}</translation>
        </message>
        <message>
            <source>&amp;Copy log</source>
            <translation>复制日志(&amp;C)</translation>
        </message>
        <message>
            <source>Running (pid {pid}): {command}</source>
            <translation>运行中（pid {pid}）：{command}</translation>
        </message>
    </context>
    <context>
        <name>JobState</name>
        <message>
            <source>Running</source>
            <translation>运行中</translation>
        </message>
        <message>
            <source>Succeeded</source>
            <translation>成功</translation>
        </message>
        <message>
            <source>Failed</source>
            <translation>失败</translation>
        </message>
        <message>
            <source>Cancelled</source>
            <translation>已取消</translation>
        </message>
        <message>
            <source>Crashed</source>
            <translation>崩溃</translation>
        </message>
    </context>
    <context>
        <name>JobsStrip</name>
        <message>
            <source>Jobs:</source>
            <translation>任务：</translation>
        </message>
        <message>
            <source>none running</source>
            <translation>没有正在运行的任务</translation>
        </message>
        <message>
            <source>… and {count} more done</source>
            <translation>… 另有 {count} 个已完成</translation>
        </message>
    </context>
    <context>
        <name>LogText</name>
        <message>
            <source>[… {count:,} lines not shown: they came faster than they can be read]</source>
            <translation>[… 有 {count:,} 行未显示：输出速度超过了可阅读的速度]</translation>
        </message>
        <message>
            <source>[… {count:,} lines not shown: they came faster than they can be read; Copy log copies the job's last {kept} lines]</source>
            <translation>[… 有 {count:,} 行未显示：输出速度超过了可阅读的速度；“复制日志”会复制该任务最后 {kept} 行]</translation>
        </message>
    </context>
    <context>
        <name>MainWindow</name>
        <message>
            <source>rocmpanel — DEMO: recorded GPUs, not this machine</source>
            <translation>rocmpanel — 演示：录制的 GPU，不是这台机器</translation>
        </message>
        <message>
            <source>DEMO — recorded GPUs (Radeon RX 7900 XT and RX 6900 XT) with a replayed workload, not this machine. Settings and files live in a temporary folder removed at exit; nothing here changes this machine.</source>
            <translation>演示 — 录制的 GPU（Radeon RX 7900 XT 和 RX 6900 XT）及回放的负载，不是这台机器。设置和文件保存在退出时删除的临时文件夹中；这里的任何操作都不会改动这台机器。</translation>
        </message>
        <message>
            <source>cannot be used: {why}</source>
            <translation>无法使用：{why}</translation>
        </message>
        <message>
            <source>no longer exists</source>
            <translation>已不存在</translation>
        </message>
        <message>
            <source>Settings file damaged: using defaults — see the message.</source>
            <translation>设置文件已损坏：正在使用默认设置 — 请查看提示。</translation>
        </message>
        <message>
            <source>Settings file has a problem: see the message.</source>
            <translation>设置文件有一个问题：请查看提示。</translation>
        </message>
        <message>
            <source>Settings file has {count} problems: see the message.</source>
            <translation>设置文件有 {count} 个问题：请查看提示。</translation>
        </message>
        <message>
            <source>No tabs are available in this build. Help → About probes the workload environment; the log is under View → Log.</source>
            <extracomment>Emitted once, right after the window's first frame: what start-up defers until then (the application icon, the log's rotation) connects here.</extracomment>
            <translation>此版本没有可用的标签页。“帮助 → 关于”可探测工作负载环境；日志在“视图 → 日志”中。</translation>
        </message>
        <message>
            <source>DEMO: recorded GPUs</source>
            <translation>演示：录制的 GPU</translation>
        </message>
        <message>
            <source>The tuning preset jobs run under: click to choose one</source>
            <translation>任务使用的调优预设：点击选择</translation>
        </message>
        <message>
            <source>Ready</source>
            <translation>就绪</translation>
        </message>
        <message>
            <source>The {tab} tab could not load: {why}</source>
            <translation>无法加载“{tab}”标签页：{why}</translation>
        </message>
        <message>
            <source>Loading the {tab} tab</source>
            <translation>加载“{tab}”标签页</translation>
        </message>
        <message>
            <source>rocmpanel: settings file</source>
            <translation>rocmpanel：设置文件</translation>
        </message>
        <message>
            <source>Some of your settings could not be used ({path}).</source>
            <translation>你的部分设置无法使用（{path}）。</translation>
        </message>
        <message>
            <source>Log</source>
            <translation>日志</translation>
        </message>
        <message>
            <source>&amp;File</source>
            <translation>文件(&amp;F)</translation>
        </message>
        <message>
            <source>&amp;View</source>
            <translation>视图(&amp;V)</translation>
        </message>
        <message>
            <source>&amp;Help</source>
            <translation>帮助(&amp;H)</translation>
        </message>
        <message>
            <source>&amp;Settings…</source>
            <translation>设置(&amp;S)…</translation>
        </message>
        <message>
            <source>&amp;Export health report…</source>
            <translation>导出健康报告(&amp;E)…</translation>
        </message>
        <message>
            <source>&amp;Quit</source>
            <translation>退出(&amp;Q)</translation>
        </message>
        <message>
            <source>&amp;Log</source>
            <translation>日志(&amp;L)</translation>
        </message>
        <message>
            <source>&amp;Next tab</source>
            <translation>下一个标签页(&amp;N)</translation>
        </message>
        <message>
            <source>&amp;Previous tab</source>
            <translation>上一个标签页(&amp;P)</translation>
        </message>
        <message>
            <source>&amp;Keyboard shortcuts</source>
            <translation>键盘快捷键(&amp;K)</translation>
        </message>
        <message>
            <source>&amp;First-run guide</source>
            <translation>入门指南(&amp;F)</translation>
        </message>
        <message>
            <source>&amp;About rocmpanel</source>
            <translation>关于 rocmpanel(&amp;A)</translation>
        </message>
        <message>
            <source>This build has no {tab} tab.</source>
            <translation>此版本没有“{tab}”标签页。</translation>
        </message>
        <message>
            <source>Saving the settings</source>
            <translation>保存设置</translation>
        </message>
        <message>
            <source>The demo could not start: {error}. The panel's Python could not be run again; reinstalling rocmpanel usually fixes this.</source>
            <translation>演示无法启动：{error}。无法再次运行面板的 Python；重新安装 rocmpanel 通常可以解决。</translation>
        </message>
        <message>
            <source>Opening the demo</source>
            <translation>打开演示</translation>
        </message>
        <message>
            <source>Opening the demo in a second window…</source>
            <translation>正在新窗口中打开演示…</translation>
        </message>
        <message>
            <source>Installing packages needs the PyTorch tab, which this build lacks.</source>
            <translation>安装软件包需要“PyTorch”标签页，但此版本没有。</translation>
        </message>
        <message>
            <source>Choosing a tuning preset needs the Tuning tab, which this build lacks.</source>
            <translation>选择调优预设需要“调优”标签页，但此版本没有。</translation>
        </message>
        <message>
            <source>could not be read</source>
            <translation>无法读取</translation>
        </message>
        <message>
            <source>The tuning preset “{preset}” chosen for jobs {why}: jobs run without a preset. Choose one in the Tuning tab.</source>
            <translation>为任务选择的调优预设“{preset}”{why}：任务将不使用预设运行。请在“调优”标签页中重新选择。</translation>
        </message>
        <message>
            <source>1 job running</source>
            <translation>1 个任务正在运行</translation>
        </message>
        <message>
            <source>{count} jobs running</source>
            <translation>{count} 个任务正在运行</translation>
        </message>
        <message>
            <source>Closing the {tab} tab</source>
            <translation>关闭“{tab}”标签页</translation>
        </message>
    </context>
    <context>
        <name>PythonField</name>
        <message>
            <source>Browse…</source>
            <translation>浏览…</translation>
        </message>
        <message>
            <source>Choose the interpreter ({name}) in a file dialog</source>
            <translation>在文件对话框中选择解释器（{name}）</translation>
        </message>
    </context>
    <context>
        <name>SettingsDialog</name>
        <message>
            <source>&amp;General</source>
            <translation>常规(&amp;G)</translation>
        </message>
        <message>
            <source>&amp;Workload</source>
            <translation>工作负载(&amp;W)</translation>
        </message>
        <message>
            <source>&amp;Monitor</source>
            <translation>监控(&amp;M)</translation>
        </message>
        <message>
            <source>C&amp;hat</source>
            <translation>对话(&amp;H)</translation>
        </message>
        <message>
            <source>&amp;Network</source>
            <translation>网络(&amp;N)</translation>
        </message>
        <message>
            <source>The chat model, precision, device, context length, sampling and system prompt are chosen in the Chat tab, which remembers them.</source>
            <translation>对话模型、精度、设备、上下文长度、采样参数和系统提示词在“对话”标签页中选择，并由它记住。</translation>
        </message>
        <message>
            <source>System</source>
            <translation>跟随系统</translation>
        </message>
        <message>
            <source>English</source>
            <translation>English</translation>
        </message>
        <message>
            <source>Light</source>
            <translation>浅色</translation>
        </message>
        <message>
            <source>Dark</source>
            <translation>深色</translation>
        </message>
        <message>
            <source>The new language takes effect when the panel starts again.</source>
            <translation>新的语言将在面板下次启动时生效。</translation>
        </message>
        <message>
            <source>Settings</source>
            <translation>设置</translation>
        </message>
        <message>
            <source>:</source>
            <translation>：</translation>
        </message>
        <message>
            <source>Choose a Python</source>
            <translation>选择 Python</translation>
        </message>
        <message>
            <source>Saving settings</source>
            <translation>保存设置</translation>
        </message>
        <message>
            <source>Settings saved</source>
            <translation>设置已保存</translation>
        </message>
    </context>
    <context>
        <name>ShortcutsDialog</name>
        <message>
            <source>Keyboard shortcuts</source>
            <translation>键盘快捷键</translation>
        </message>
        <message>
            <source>Action</source>
            <translation>操作</translation>
        </message>
        <message>
            <source>Keys</source>
            <translation>按键</translation>
        </message>
        <message>
            <source>In a tab, Alt and the underlined letter of a button or field presses or reaches it; Tab and Shift+Tab move between them.</source>
            <translation>在标签页中，按 Alt 加按钮或输入框上带下划线的字母即可按下或跳转到它；Tab 和 Shift+Tab 在它们之间移动。</translation>
        </message>
    </context>
    <context>
        <name>StatusLine</name>
        <message>
            <source>{doing}…</source>
            <translation>{doing}…</translation>
        </message>
    </context>
    <context>
        <name>Tabs</name>
        <message>
            <source>Setup</source>
            <translation>环境检测</translation>
        </message>
        <message>
            <source>Monitor</source>
            <translation>监控</translation>
        </message>
        <message>
            <source>PyTorch</source>
            <translation>PyTorch</translation>
        </message>
        <message>
            <source>Tuning</source>
            <translation>调优</translation>
        </message>
        <message>
            <source>Chat</source>
            <translation>对话</translation>
        </message>
        <message>
            <source>Multi-GPU</source>
            <translation>多 GPU</translation>
        </message>
    </context>
    <context>
        <name>WorkloadProbeBox</name>
        <message>
            <source>Not probed yet.</source>
            <translation>尚未探测。</translation>
        </message>
        <message>
            <source>Workload environment</source>
            <translation>工作负载环境</translation>
        </message>
        <message>
            <source>&amp;Probe</source>
            <translation>探测(&amp;P)</translation>
        </message>
        <message>
            <source>Ask the workload Python which torch build and GPUs it has</source>
            <translation>询问工作负载 Python 使用哪个 torch 版本、能看到哪些 GPU</translation>
        </message>
        <message>
            <source>Interpreter: {python}</source>
            <translation>解释器：{python}</translation>
        </message>
        <message>
            <source>Starting the probe</source>
            <translation>启动探测</translation>
        </message>
        <message>
            <source>Probing… (importing torch can take a few seconds)</source>
            <translation>正在探测…（导入 torch 可能需要几秒钟）</translation>
        </message>
        <message>
            <source>The probe failed: {outcome}</source>
            <translation>探测失败：{outcome}</translation>
        </message>
    </context>
    <context>
        <name>about</name>
        <message>
            <source>{memory} VRAM</source>
            <translation>{memory} 显存</translation>
        </message>
        <message>
            <source>integrated</source>
            <translation>集成</translation>
        </message>
    </context>
    <context>
        <name>gpu_picker</name>
        <message>
            <source>Reading the GPUs for jobs</source>
            <translation>读取任务使用的 GPU</translation>
        </message>
    </context>
    <context>
        <name>report</name>
        <message>
            <source>{doing} failed: {error}</source>
            <translation>{doing}失败：{error}</translation>
        </message>
        <message>
            <source>Unexpected error: {error}</source>
            <translation>意外错误：{error}</translation>
        </message>
    </context>
    <context>
        <name>settings_dialog</name>
        <message>
            <source>There is no program called {text} on PATH. Give the full path of a Python, or leave the field empty for the panel's own Python.</source>
            <translation>PATH 中没有名为 {text} 的程序。请填写 Python 的完整路径，或留空以使用面板自己的 Python。</translation>
        </message>
        <message>
            <source>{text} is not a full path, so it would depend on the folder the panel starts in. Give the full path, or choose the file with Browse.</source>
            <translation>{text} 不是完整路径，结果会取决于面板启动时所在的文件夹。请填写完整路径，或用“浏览”选择文件。</translation>
        </message>
        <message>
            <source>{text} does not exist. Choose a Python with Browse, or leave the field empty for the panel's own Python.</source>
            <translation>{text} 不存在。请用“浏览”选择一个 Python，或留空以使用面板自己的 Python。</translation>
        </message>
        <message>
            <source>{text} is a folder. Choose the Python program inside it (bin/python, or python.exe on Windows).</source>
            <translation>{text} 是一个文件夹。请选择其中的 Python 程序（bin/python，Windows 上为 python.exe）。</translation>
        </message>
        <message>
            <source>{text} is not a program this user can run. Choose a Python executable.</source>
            <translation>{text} 不是当前用户可以运行的程序。请选择一个 Python 可执行文件。</translation>
        </message>
    </context>
</TS>
