<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>InstallPanel</name>
    <message>
        <source>No wheels for this Python: set &apos;Base Python for new environments&apos; in Settings</source>
        <translation>没有适用于此 Python 的 wheel：请在设置中设置“新环境的基础 Python”</translation>
    </message>
    <message>
        <source>This is a demo: it shows the plan for the demo GPUs but installs nothing.</source>
        <translation>这是演示：它显示演示 GPU 的安装计划，但不会安装任何内容。</translation>
    </message>
    <message>
        <source>PyTorch</source>
        <translation>PyTorch</translation>
    </message>
    <message>
        <source>PyTorch + local LLM</source>
        <translation>PyTorch + 本地 LLM</translation>
    </message>
    <message>
        <source>torch, torchvision and torchaudio: validation and your own scripts</source>
        <translation>torch、torchvision 和 torchaudio：用于验证和你自己的脚本</translation>
    </message>
    <message>
        <source>Also transformers, accelerate, safetensors, tokenizers and, where it works on this GPU, bitsandbytes for 4-bit models: what the Chat tab needs</source>
        <translation>另加 transformers、accelerate、safetensors、tokenizers，以及在此 GPU 上可用时用于 4 位模型的 bitsandbytes：“对话”标签页所需的包</translation>
    </message>
    <message>
        <source>Removing the partial environment</source>
        <translation>删除未完成的环境</translation>
    </message>
    <message>
        <source>What the install puts next to torch</source>
        <translation>安装时在 torch 之外附带的内容</translation>
    </message>
    <message>
        <source>Name of the new environment (a new folder under envs/)</source>
        <translation>新环境的名称（envs/ 下的新文件夹）</translation>
    </message>
    <message>
        <source>&amp;Install</source>
        <translation>安装(&amp;I)</translation>
    </message>
    <message>
        <source>&amp;Cancel</source>
        <translation>取消(&amp;C)</translation>
    </message>
    <message>
        <source>Nothing is being installed.</source>
        <translation>当前没有正在进行的安装。</translation>
    </message>
    <message>
        <source>pip&apos;s output appears here during an install.</source>
        <translation>安装期间 pip 的输出显示在这里。</translation>
    </message>
    <message>
        <source>Install:</source>
        <translation>安装：</translation>
    </message>
    <message>
        <source>Environment:</source>
        <translation>环境：</translation>
    </message>
    <message>
        <source>Removing the folders of unfinished installs</source>
        <translation>删除未完成安装的文件夹</translation>
    </message>
    <message>
        <source>Suggesting an environment name</source>
        <translation>建议环境名称</translation>
    </message>
    <message>
        <source>Checking the name and the free disk…</source>
        <translation>正在检查名称和可用磁盘空间…</translation>
    </message>
    <message>
        <source>Preparing the install</source>
        <translation>准备安装</translation>
    </message>
    <message>
        <source>Cancelled before anything was installed.</source>
        <translation>已在安装任何内容之前取消。</translation>
    </message>
    <message>
        <source>Starting the install</source>
        <translation>启动安装</translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation>正在启动…</translation>
    </message>
    <message>
        <source>Installing {what}…</source>
        <translation>正在安装 {what}…</translation>
    </message>
    <message>
        <source>Installed {versions} into the active environment.</source>
        <translation>已将 {versions} 安装到当前环境中。</translation>
    </message>
    <message>
        <source>Cancelled. Packages pip had already installed stay; run it again to finish.</source>
        <translation>已取消。pip 已安装的包会保留；再次运行即可完成。</translation>
    </message>
    <message>
        <source>Install failed: {message}</source>
        <translation>安装失败：{message}</translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
    <message>
        <source>Recording the new environment…</source>
        <translation>正在记录新环境…</translation>
    </message>
    <message>
        <source>Removing the partial environment…</source>
        <translation>正在删除未完成的环境…</translation>
    </message>
    <message>
        <source>Recording the environment</source>
        <translation>记录环境</translation>
    </message>
    <message>
        <source>Making the new environment active</source>
        <translation>将新环境设为当前环境</translation>
    </message>
    <message>
        <source>Installed {name} ({versions}); it is now active.</source>
        <translation>已安装 {name}（{versions}）；它现在是当前环境。</translation>
    </message>
    <message>
        <source>PyTorch environment {name} installed and active.</source>
        <translation>PyTorch 环境 {name} 已安装并设为当前环境。</translation>
    </message>
    <message>
        <source>Cancelled.</source>
        <translation>已取消。</translation>
    </message>
    <message>
        <source>{what} The partial environment was removed; the active environment is unchanged.</source>
        <translation>{what}未完成的环境已删除；当前环境未改变。</translation>
    </message>
</context>
<context>
    <name>InstallPlanPanel</name>
    <message>
        <source>Detecting the GPU…</source>
        <translation>正在检测 GPU…</translation>
    </message>
    <message>
        <source>detected</source>
        <translation>自动检测</translation>
    </message>
    <message>
        <source>Plan for another GPU target, e.g. gfx1100</source>
        <translation>为另一个 GPU 目标制定计划，例如 gfx1100</translation>
    </message>
    <message>
        <source>planned index (or set a mirror in Settings)</source>
        <translation>计划的索引（或在设置中设置镜像）</translation>
    </message>
    <message>
        <source>Install from this index instead, e.g. your own mirror of it</source>
        <translation>改从此索引安装，例如你自己的镜像</translation>
    </message>
    <message>
        <source>&amp;Detect again</source>
        <translation>重新检测(&amp;D)</translation>
    </message>
    <message>
        <source>Detect the GPUs and the base Python again</source>
        <translation>重新检测 GPU 和基础 Python</translation>
    </message>
    <message>
        <source>The exact pip command the install runs in the new env</source>
        <translation>安装时在新环境中运行的确切 pip 命令</translation>
    </message>
    <message>
        <source>gfx:</source>
        <translation>gfx：</translation>
    </message>
    <message>
        <source>Build:</source>
        <translation>版本：</translation>
    </message>
    <message>
        <source>Adds:</source>
        <translation>附加：</translation>
    </message>
    <message>
        <source>Command:</source>
        <translation>命令：</translation>
    </message>
    <message>
        <source>Size:</source>
        <translation>大小：</translation>
    </message>
    <message>
        <source>Index:</source>
        <translation>索引：</translation>
    </message>
    <message>
        <source>Asking the base Python its version</source>
        <translation>查询基础 Python 的版本</translation>
    </message>
    <message>
        <source>Reading the PyTorch build manifest</source>
        <translation>读取 PyTorch 版本清单</translation>
    </message>
    <message>
        <source>Detecting the GPU</source>
        <translation>检测 GPU</translation>
    </message>
    <message>
        <source>GPU: &lt;b&gt;{name}&lt;/b&gt; ({gfx}{vram})</source>
        <translation>GPU：&lt;b&gt;{name}&lt;/b&gt;（{gfx}{vram}）</translation>
    </message>
    <message>
        <source>; ROCm {version}</source>
        <translation>；ROCm {version}</translation>
    </message>
    <message>
        <source>&lt;b&gt;No AMD GPU detected.&lt;/b&gt; {note}</source>
        <translation>&lt;b&gt;未检测到 AMD GPU。&lt;/b&gt;{note}</translation>
    </message>
    <message>
        <source>Base Python {version} ({path})</source>
        <translation>基础 Python {version}（{path}）</translation>
    </message>
    <message>
        <source>Base Python …</source>
        <translation>基础 Python …</translation>
    </message>
    <message>
        <source>No install:</source>
        <translation>无法安装：</translation>
    </message>
    <message>
        <source>preview</source>
        <translation>预览版</translation>
    </message>
    <message>
        <source>&lt;b&gt;torch {torch}&lt;/b&gt; for ROCm {rocm} ({kind}: {url}){preview}</source>
        <translation>&lt;b&gt;torch {torch}&lt;/b&gt;，适用于 ROCm {rocm}（{kind}：{url}）{preview}</translation>
    </message>
    <message>
        <source>Wheels for Python {versions}</source>
        <translation>提供 wheel 的 Python 版本：{versions}</translation>
    </message>
    <message>
        <source>download ≈ {download}, free disk needed ≈ {disk} (estimates)</source>
        <translation>下载 ≈ {download}，所需可用磁盘 ≈ {disk}（估计值）</translation>
    </message>
    <message>
        <source>index</source>
        <translation>索引</translation>
    </message>
    <message>
        <source>nothing else (torch, torchvision, torchaudio only)</source>
        <translation>无其他包（仅 torch、torchvision、torchaudio）</translation>
    </message>
</context>
<context>
    <name>MarkdownDialog</name>
    <message>
        <source>&amp;Copy Markdown</source>
        <translation>复制 Markdown(&amp;C)</translation>
    </message>
</context>
<context>
    <name>PyTorchTab</name>
    <message>
        <source>The workload Python has no PyTorch yet. Install (profile “PyTorch + local LLM”) makes a new environment with the PyTorch build planned above and the chat&apos;s packages, and makes it the workload Python.</source>
        <translation>工作负载 Python 中还没有 PyTorch。“安装”（配置“PyTorch + 本地 LLM”）会用上面计划的 PyTorch 版本和对话所需的包创建一个新环境，并将其设为工作负载 Python。</translation>
    </message>
    <message>
        <source>Install plan</source>
        <translation>安装计划</translation>
    </message>
    <message>
        <source>Environments</source>
        <translation>环境</translation>
    </message>
    <message>
        <source>Validation</source>
        <translation>验证</translation>
    </message>
    <message>
        <source>This is a demo: it installs nothing.</source>
        <translation>这是演示：不会安装任何内容。</translation>
    </message>
    <message>
        <source>An install is running already: wait for it or cancel it first.</source>
        <translation>已有安装正在进行：请等待其完成或先取消。</translation>
    </message>
    <message>
        <source>Checking which packages the environment has…</source>
        <translation>正在检查环境中已有哪些包…</translation>
    </message>
    <message>
        <source>Nothing is being installed.</source>
        <translation>当前没有正在进行的安装。</translation>
    </message>
    <message>
        <source>Adding packages to the active environment</source>
        <translation>向当前环境添加包</translation>
    </message>
    <message>
        <source>The active environment has every package of this profile already.</source>
        <translation>当前环境已包含此配置的全部包。</translation>
    </message>
    <message>
        <source>Starting the install</source>
        <translation>启动安装</translation>
    </message>
</context>
<context>
    <name>TorchEnvsPanel</name>
    <message>
        <source>Environment</source>
        <translation>环境</translation>
    </message>
    <message>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>Interpreter</source>
        <translation>解释器</translation>
    </message>
    <message>
        <source>Make &amp;active</source>
        <translation>设为当前(&amp;A)</translation>
    </message>
    <message>
        <source>GPU jobs (probe, validation, chat) will use this Python</source>
        <translation>GPU 任务（探测、验证、对话）将使用此 Python</translation>
    </message>
    <message>
        <source>&amp;Register…</source>
        <translation>登记(&amp;R)…</translation>
    </message>
    <message>
        <source>Add an existing Python interpreter to the list</source>
        <translation>将现有的 Python 解释器添加到列表</translation>
    </message>
    <message>
        <source>Re&amp;move…</source>
        <translation>删除(&amp;M)…</translation>
    </message>
    <message>
        <source>not installed</source>
        <translation>未安装</translation>
    </message>
    <message>
        <source>Listing the PyTorch environments</source>
        <translation>列出 PyTorch 环境</translation>
    </message>
    <message>
        <source>Panel&apos;s own Python</source>
        <translation>面板自带的 Python</translation>
    </message>
    <message>
        <source>built-in</source>
        <translation>内置</translation>
    </message>
    <message>
        <source>managed</source>
        <translation>托管</translation>
    </message>
    <message>
        <source>{path}
index: {url}</source>
        <translation>{path}
索引：{url}</translation>
    </message>
    <message>
        <source>n/a</source>
        <translation>n/a</translation>
    </message>
    <message>
        <source>damaged</source>
        <translation>已损坏</translation>
    </message>
    <message>
        <source>Its record {record} is damaged: {problem}.
{advice}</source>
        <translation>其记录 {record} 已损坏：{problem}。
{advice}</translation>
    </message>
    <message>
        <source>registered</source>
        <translation>已登记</translation>
    </message>
    <message>
        <source>missing</source>
        <translation>缺失</translation>
    </message>
    <message>
        <source>Active: GPU jobs run in this Python</source>
        <translation>当前：GPU 任务在此 Python 中运行</translation>
    </message>
    <message>
        <source>deleting…</source>
        <translation>正在删除…</translation>
    </message>
    <message>
        <source>Being deleted</source>
        <translation>正在删除</translation>
    </message>
    <message>
        <source>Saving the active Python</source>
        <translation>保存当前 Python</translation>
    </message>
    <message>
        <source>GPU jobs now use {python}.</source>
        <translation>GPU 任务现在使用 {python}。</translation>
    </message>
    <message>
        <source>the panel’s own Python</source>
        <translation>面板自带的 Python</translation>
    </message>
    <message>
        <source>Choose a Python interpreter</source>
        <translation>选择 Python 解释器</translation>
    </message>
    <message>
        <source>Registering an interpreter</source>
        <translation>登记解释器</translation>
    </message>
    <message>
        <source>The damaged list of registered interpreters was kept as {path}; a new list was started.</source>
        <translation>已损坏的已登记解释器列表保留为 {path}；已新建列表。</translation>
    </message>
    <message>
        <source>Remove environment</source>
        <translation>删除环境</translation>
    </message>
    <message>
        <source>Delete the environment “{name}” and all its files?
{path}</source>
        <translation>删除环境“{name}”及其所有文件？
{path}</translation>
    </message>
    <message>
        <source>Deleting {name}…</source>
        <translation>正在删除 {name}…</translation>
    </message>
    <message>
        <source>Deleting {name}</source>
        <translation>删除 {name}</translation>
    </message>
    <message>
        <source>Removed {name}.</source>
        <translation>已删除 {name}。</translation>
    </message>
</context>
<context>
    <name>TorchValidationPanel</name>
    <message>
        <source>&amp;Validate active Python</source>
        <translation>验证当前 Python(&amp;V)</translation>
    </message>
    <message>
        <source>Run the checks (build, GPU, GEMM vs CPU, SDPA, memory, bandwidth, TFLOPS) in the active workload Python</source>
        <translation>在当前的工作负载 Python 中运行检查（版本、GPU、GEMM 与 CPU 对比、SDPA、显存、带宽、TFLOPS）</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>No validation run yet.</source>
        <translation>尚未运行验证。</translation>
    </message>
    <message>
        <source>Check</source>
        <translation>检查项</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Figure</source>
        <translation>数值</translation>
    </message>
    <message>
        <source>Likely cause / fix</source>
        <translation>可能原因 / 修复</translation>
    </message>
    <message>
        <source>This is a demo: it runs no jobs on this machine.</source>
        <translation>这是演示：不会在本机上运行任何任务。</translation>
    </message>
    <message>
        <source>This is a demo: validation runs on a real machine&apos;s workload Python.</source>
        <translation>这是演示：验证需在真实机器的工作负载 Python 中运行。</translation>
    </message>
    <message>
        <source>Preparing…</source>
        <translation>正在准备…</translation>
    </message>
    <message>
        <source>Preparing the validation</source>
        <translation>准备验证</translation>
    </message>
    <message>
        <source>Starting the validation</source>
        <translation>启动验证</translation>
    </message>
    <message>
        <source>the panel’s Python</source>
        <translation>面板的 Python</translation>
    </message>
    <message>
        <source>Validating {where}…</source>
        <translation>正在验证 {where}…</translation>
    </message>
    <message>
        <source>Validation: {counts}.</source>
        <translation>验证：{counts}。</translation>
    </message>
    <message>
        <source>Saving the validation run</source>
        <translation>保存验证记录</translation>
    </message>
    <message>
        <source>{cause}
Fix: {fix}</source>
        <translation>{cause}
修复：{fix}</translation>
    </message>
    <message>
        <source>no GPU visible</source>
        <translation>没有可见的 GPU</translation>
    </message>
    <message>
        <source> — ended early ({outcome})</source>
        <translation> — 提前结束（{outcome}）</translation>
    </message>
    <message>
        <source>n/a</source>
        <translation>n/a</translation>
    </message>
    <message>
        <source> — torch {torch} ({build} build) in {where}; {device}; preset: {preset}{ended}</source>
        <translation> — torch {torch}（{build} 版本），位于 {where}；{device}；预设：{preset}{ended}</translation>
    </message>
</context>
<context>
    <name>ValidationHistory</name>
    <message>
        <source>#{id} damaged run</source>
        <translation>#{id} 已损坏的运行记录</translation>
    </message>
    <message>
        <source>panel&apos;s Python</source>
        <translation>面板的 Python</translation>
    </message>
    <message>
        <source>#{id} {when} {where}: {passed}✓ {failed}✗ {skipped} skip</source>
        <translation>#{id} {when} {where}：{passed}✓ {failed}✗ {skipped} 跳过</translation>
    </message>
    <message>
        <source>C&amp;ompare two</source>
        <translation>比较两次(&amp;O)</translation>
    </message>
    <message>
        <source>Select two runs to compare them side by side</source>
        <translation>选择两次运行以并排比较</translation>
    </message>
    <message>
        <source>E&amp;xport Markdown…</source>
        <translation>导出 Markdown(&amp;X)…</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>Run history</source>
        <translation>运行历史</translation>
    </message>
    <message>
        <source>Reading the validation history</source>
        <translation>读取验证历史</translation>
    </message>
    <message>
        <source>Compare validation runs</source>
        <translation>比较验证记录</translation>
    </message>
    <message>
        <source>Export validation run</source>
        <translation>导出验证记录</translation>
    </message>
    <message>
        <source>Markdown (*.md)</source>
        <translation>Markdown (*.md)</translation>
    </message>
    <message>
        <source>Exporting the validation run</source>
        <translation>导出验证记录</translation>
    </message>
    <message>
        <source>Saved {path}</source>
        <translation>已保存 {path}</translation>
    </message>
    <message>
        <source>Delete runs</source>
        <translation>删除运行记录</translation>
    </message>
    <message>
        <source>Delete {count} validation run(s) from the history?</source>
        <translation>从历史中删除 {count} 条验证记录？</translation>
    </message>
    <message>
        <source>Deleting validation runs</source>
        <translation>删除验证记录</translation>
    </message>
</context>
<context>
    <name>add_packages</name>
    <message>
        <source>torch is not installed in {python}, so its chat packages cannot be added: pip would fetch a torch without ROCm support with them. Install PyTorch first (the install plan makes a new environment with the chat packages), or make an environment with torch active.</source>
        <translation>{python} 中未安装 torch，因此无法添加对话所需的包：pip 会连带获取一个不支持 ROCm 的 torch。请先安装 PyTorch（安装计划会创建一个包含对话所需包的新环境），或将一个已有 torch 的环境设为当前环境。</translation>
    </message>
    <message>
        <source>Nothing to install: every package of the profile is there already.</source>
        <translation>无需安装：此配置的所有包都已存在。</translation>
    </message>
</context>
<context>
    <name>environments</name>
    <message>
        <source>{name} is not a usable environment name.</source>
        <translation>{name} 不是可用的环境名称。</translation>
    </message>
    <message>
        <source>Use a name of at most {room} characters, or turn on Windows long paths (in an elevated PowerShell: {command}).</source>
        <translation>请使用不超过 {room} 个字符的名称，或开启 Windows 长路径（在管理员 PowerShell 中：{command}）。</translation>
    </message>
    <message>
        <source>The folder of environments, {folder}, is {length} characters long, which leaves no room for a name. Turn on Windows long paths (in an elevated PowerShell: {command}), then restart rocmpanel; or set ROCMPANEL_HOME to a short folder such as {short}.</source>
        <translation>环境文件夹 {folder} 长 {length} 个字符，已没有留给名称的空间。请开启 Windows 长路径（在管理员 PowerShell 中：{command}），然后重启 rocmpanel；或将 ROCMPANEL_HOME 设为较短的文件夹，例如 {short}。</translation>
    </message>
    <message>
        <source>The environment folder {path} is {length} characters long, but with long paths off Windows refuses paths over {max_file} characters and PyTorch&apos;s files lie up to {depth} characters below that folder: pip would fail (Errno 2 or WinError 206). The folder may be at most {limit} characters long. {fix}</source>
        <translation>环境文件夹 {path} 长 {length} 个字符，但在长路径关闭时 Windows 拒绝超过 {max_file} 个字符的路径，而 PyTorch 的文件位于该文件夹下最深 {depth} 个字符处：pip 会失败（Errno 2 或 WinError 206）。该文件夹最多只能有 {limit} 个字符。{fix}</translation>
    </message>
    <message>
        <source>Not enough free disk: the install needs about {needed}, {free} is free on {path}.</source>
        <translation>可用磁盘空间不足：安装约需 {needed}，{path} 上可用 {free}。</translation>
    </message>
    <message>
        <source>An environment named {name} already exists.</source>
        <translation>名为 {name} 的环境已存在。</translation>
    </message>
    <message>
        <source>The install left no interpreter at {path}.</source>
        <translation>安装未在 {path} 留下解释器。</translation>
    </message>
    <message>
        <source>The record of {name} could not be read back.</source>
        <translation>无法读回 {name} 的记录。</translation>
    </message>
    <message>
        <source>Repair {record}, or select it and press Remove… to delete the environment.</source>
        <translation>请修复 {record}，或选中它并点击“删除…”以删除该环境。</translation>
    </message>
    <message>
        <source>No managed environment named {name}.</source>
        <translation>没有名为 {name} 的托管环境。</translation>
    </message>
    <message>
        <source>Refusing to delete {path}: it is not {expected}.</source>
        <translation>拒绝删除 {path}：它不是 {expected}。</translation>
    </message>
    <message>
        <source>Could not delete all of {path}.</source>
        <translation>无法完全删除 {path}。</translation>
    </message>
</context>
<context>
    <name>explanations</name>
    <message>
        <source>HSA_OVERRIDE_GFX_VERSION does nothing on Windows: use a build that supports this GPU (AMD&apos;s Windows wheels cover RDNA3, RDNA4 and Strix Halo).</source>
        <translation>HSA_OVERRIDE_GFX_VERSION 在 Windows 上无效：请使用支持此 GPU 的版本（AMD 的 Windows wheel 支持 RDNA3、RDNA4 和 Strix Halo）。</translation>
    </message>
    <message>
        <source>Install a build whose kernels include {gfx} (see the plan). The HSA_OVERRIDE_GFX_VERSION={value} workaround is known to harm this GPU: </source>
        <translation>请安装内核包含 {gfx} 的版本（见安装计划）。已知 HSA_OVERRIDE_GFX_VERSION={value} 这一变通办法对此 GPU 有害：</translation>
    </message>
    <message>
        <source>On Linux, run jobs with HSA_OVERRIDE_GFX_VERSION={value} so {gfx} uses the {target} kernels (community knowledge, not an AMD promise), or install a build whose kernels include it.</source>
        <translation>在 Linux 上，用 HSA_OVERRIDE_GFX_VERSION={value} 运行任务，使 {gfx} 使用 {target} 的内核（社区经验，并非 AMD 承诺），或安装内核包含它的版本。</translation>
    </message>
    <message>
        <source>Install a build whose kernels include {gfx} (see the plan). No known same-family HSA_OVERRIDE_GFX_VERSION substitute exists for this GPU.</source>
        <translation>请安装内核包含 {gfx} 的版本（见安装计划）。此 GPU 没有已知的同系列 HSA_OVERRIDE_GFX_VERSION 替代值。</translation>
    </message>
    <message>
        <source>Install a build whose kernels include it (see the plan). No known same-family HSA_OVERRIDE_GFX_VERSION substitute exists for this GPU.</source>
        <translation>请安装内核包含此 GPU 的版本（见安装计划）。此 GPU 没有已知的同系列 HSA_OVERRIDE_GFX_VERSION 替代值。</translation>
    </message>
    <message>
        <source>this GPU</source>
        <translation>此 GPU</translation>
    </message>
    <message>
        <source>The torch build has no compiled kernels (code object) for {gpu}.</source>
        <translation>该 torch 版本没有为 {gpu} 编译的内核（代码对象）。</translation>
    </message>
    <message>
        <source>A kernel was launched on a device it was not built for: often an integrated GPU enumerated next to the discrete one.</source>
        <translation>内核在一个并非为其编译的设备上启动：通常是与独立 GPU 一同被枚举的集成 GPU。</translation>
    </message>
    <message>
        <source>Hide the iGPU: set HIP_VISIBLE_DEVICES to the discrete GPU&apos;s index (e.g. HIP_VISIBLE_DEVICES=0) for jobs; if the GPU itself is unsupported, see the override advice. </source>
        <translation>隐藏集成 GPU：为任务将 HIP_VISIBLE_DEVICES 设为独立 GPU 的索引（例如 HIP_VISIBLE_DEVICES=0）；如果 GPU 本身不受支持，请参阅覆盖建议。</translation>
    </message>
    <message>
        <source>This user may not open /dev/kfd (and /dev/dri/renderD*).</source>
        <translation>此用户无权打开 /dev/kfd（以及 /dev/dri/renderD*）。</translation>
    </message>
    <message>
        <source>Add the user to the &apos;render&apos; group (and &apos;video&apos; on some distributions): sudo usermod -aG render,video $USER, then log out and back in.</source>
        <translation>将用户加入 &apos;render&apos; 组（某些发行版还需 &apos;video&apos; 组）：sudo usermod -aG render,video $USER，然后注销并重新登录。</translation>
    </message>
    <message>
        <source>A CPU-only torch is installed in this environment, so there is no GPU backend.</source>
        <translation>此环境中安装的是仅 CPU 的 torch，因此没有 GPU 后端。</translation>
    </message>
    <message>
        <source>Install the planned ROCm build of PyTorch into a managed environment and make it active.</source>
        <translation>将计划的 ROCm 版 PyTorch 安装到托管环境中，并将其设为当前环境。</translation>
    </message>
    <message>
        <source>This torch is not a ROCm build (torch.version.hip is None): it is a CPU or CUDA build, which cannot use an AMD GPU.</source>
        <translation>此 torch 不是 ROCm 版本（torch.version.hip 为 None）：它是 CPU 或 CUDA 版本，无法使用 AMD GPU。</translation>
    </message>
    <message>
        <source>The ROCm runtime found no GPU it can use: no supported GPU, a wrong HSA_OVERRIDE_GFX_VERSION, or WSL without GPU support.</source>
        <translation>ROCm 运行时找不到可用的 GPU：没有受支持的 GPU、HSA_OVERRIDE_GFX_VERSION 设置错误，或 WSL 不支持 GPU。</translation>
    </message>
    <message>
        <source>Check that the amdgpu driver is loaded and /dev/kfd exists; unset a wrong HSA_OVERRIDE_GFX_VERSION (unset it, never leave it empty). </source>
        <translation>检查 amdgpu 驱动是否已加载、/dev/kfd 是否存在；取消错误的 HSA_OVERRIDE_GFX_VERSION（取消设置，切勿留空）。</translation>
    </message>
    <message>
        <source>HSA_OVERRIDE_GFX_VERSION has a value the runtime rejects.</source>
        <translation>HSA_OVERRIDE_GFX_VERSION 的值被运行时拒绝。</translation>
    </message>
    <message>
        <source>Use the MAJOR.MINOR.STEP form (e.g. 10.3.0), or unset the variable.</source>
        <translation>请使用 MAJOR.MINOR.STEP 格式（例如 10.3.0），或取消设置该变量。</translation>
    </message>
    <message>
        <source>The GPU ran out of memory (other programs, including the desktop, hold VRAM).</source>
        <translation>GPU 显存不足（其他程序，包括桌面，占用了显存）。</translation>
    </message>
    <message>
        <source>Close other GPU programs or use smaller sizes; the Monitor tab shows VRAM users.</source>
        <translation>关闭其他 GPU 程序或使用更小的规模；“监控”标签页会显示哪些进程占用显存。</translation>
    </message>
    <message>
        <source>torch is not installed in this Python.</source>
        <translation>此 Python 中未安装 torch。</translation>
    </message>
    <message>
        <source>Install the planned ROCm build of PyTorch, or pick another interpreter.</source>
        <translation>请安装计划的 ROCm 版 PyTorch，或选择另一个解释器。</translation>
    </message>
    <message>
        <source>torch is a ROCm build but sees no GPU.</source>
        <translation>torch 是 ROCm 版本，但看不到任何 GPU。</translation>
    </message>
    <message>
        <source>Check /dev/kfd access (render group), that ROCR_VISIBLE_DEVICES/HIP_VISIBLE_DEVICES are not set empty or to a missing index, and that the amdgpu driver is loaded.</source>
        <translation>请检查 /dev/kfd 的访问权限（render 组）、ROCR_VISIBLE_DEVICES/HIP_VISIBLE_DEVICES 未被设为空或不存在的索引，以及 amdgpu 驱动已加载。</translation>
    </message>
    <message>
        <source>torch&apos;s device reports a different gfx target than the one detected: another GPU (e.g. an iGPU) is device 0, or an HSA_OVERRIDE_GFX_VERSION is in effect.</source>
        <translation>torch 的设备报告的 gfx 目标与检测到的不同：另一个 GPU（例如集成 GPU）是设备 0，或 HSA_OVERRIDE_GFX_VERSION 正在生效。</translation>
    </message>
    <message>
        <source>Set HIP_VISIBLE_DEVICES to the GPU you mean, and check HSA_OVERRIDE_GFX_VERSION.</source>
        <translation>将 HIP_VISIBLE_DEVICES 设为你要使用的 GPU，并检查 HSA_OVERRIDE_GFX_VERSION。</translation>
    </message>
    <message>
        <source>GPU results disagree with the CPU: kernels for {gpu} are missing or broken even though torch.cuda.is_available() is True.</source>
        <translation>GPU 结果与 CPU 不一致：尽管 torch.cuda.is_available() 为 True，{gpu} 的内核缺失或有缺陷。</translation>
    </message>
    <message>
        <source>torch reports a different VRAM size than the driver (sysfs): another device is selected, or memory is reserved (APU carve-out).</source>
        <translation>torch 报告的显存大小与驱动（sysfs）不同：选中了另一个设备，或有内存被预留（APU 划分）。</translation>
    </message>
    <message>
        <source>Check HIP_VISIBLE_DEVICES; on APUs the BIOS sets the VRAM carve-out.</source>
        <translation>检查 HIP_VISIBLE_DEVICES；在 APU 上，显存划分由 BIOS 设置。</translation>
    </message>
</context>
<context>
    <name>plan</name>
    <message>
        <source> Give the GPU&apos;s gfx target (e.g. gfx1100) to plan for it anyway.</source>
        <translation>请提供 GPU 的 gfx 目标（例如 gfx1100），仍可为其制定计划。</translation>
    </message>
    <message>
        <source>There are no ROCm PyTorch builds for {os}: only Linux and Windows (preview).</source>
        <translation>没有适用于 {os} 的 ROCm PyTorch 版本：仅支持 Linux 和 Windows（预览版）。</translation>
    </message>
    <message>
        <source>No build {build} in the manifest.</source>
        <translation>清单中没有版本 {build}。</translation>
    </message>
    <message>
        <source>Build {build} is for {build_os}, not {os}.</source>
        <translation>版本 {build} 适用于 {build_os}，而不是 {os}。</translation>
    </message>
    <message>
        <source>The manifest has no PyTorch builds for {os}.</source>
        <translation>清单中没有适用于 {os} 的 PyTorch 版本。</translation>
    </message>
    <message>
        <source>No AMD GPU was detected, so there is no GPU to pick a build for.</source>
        <translation>未检测到 AMD GPU，因此无法为 GPU 选择版本。</translation>
    </message>
    <message>
        <source>torch {torch} from this index has wheels for Python {pythons} only, not {python}: the environment must be created with one of those Python versions.</source>
        <translation>此索引中的 torch {torch} 仅提供 Python {pythons} 的 wheel，没有 {python} 的：必须使用这些 Python 版本之一创建环境。</translation>
    </message>
    <message>
        <source>Install Python {version} (python.org) and choose it as the base Python.</source>
        <translation>请安装 Python {version}（python.org）并将其选为基础 Python。</translation>
    </message>
    <message>
        <source>Python version unknown: wheels exist for {pythons}.</source>
        <translation>Python 版本未知：有 wheel 的版本为 {pythons}。</translation>
    </message>
    <message>
        <source>AMD&apos;s PyTorch on Windows is a preview: expect missing features and rough edges.</source>
        <translation>AMD 的 Windows 版 PyTorch 是预览版：可能缺少功能或不够完善。</translation>
    </message>
    <message>
        <source>The wheels bundle ROCm {rocm} user-space libraries; the installed ROCm is {installed}. Only the amdgpu kernel driver is used from the host: if it is too old for ROCm {rocm}, update the driver (see AMD&apos;s user/kernel-space compatibility matrix).</source>
        <translation>这些 wheel 自带 ROCm {rocm} 的用户空间库；已安装的 ROCm 为 {installed}。只会使用主机上的 amdgpu 内核驱动：如果它对 ROCm {rocm} 来说太旧，请更新驱动（参见 AMD 的用户空间/内核空间兼容性矩阵）。</translation>
    </message>
    <message>
        <source>This row of the manifest is unverified: check its URL before relying on it.</source>
        <translation>清单中的这一行未经验证：使用前请检查其 URL。</translation>
    </message>
    <message>
        <source>The index {url} is plain http: pip ignores it unless {host} is a trusted host. Use https, or add it as a trusted host (trusted-host = {host} in pip.conf, with the setting torch_use_pip_config on).</source>
        <translation>索引 {url} 使用普通 http：除非 {host} 是受信任主机，否则 pip 会忽略它。请使用 https，或将其添加为受信任主机（在 pip.conf 中写 trusted-host = {host}，并开启设置 torch_use_pip_config）。</translation>
    </message>
</context>
<context>
    <name>plan_inputs</name>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>No GPU with a known gfx target was found (GPUs seen: {names}).</source>
        <translation>未找到具有已知 gfx 目标的 GPU（看到的 GPU：{names}）。</translation>
    </message>
    <message>
        <source>GPU detection failed: {message}</source>
        <translation>GPU 检测失败：{message}</translation>
    </message>
</context>
<context>
    <name>validation_report</name>
    <message>
        <source>PASS</source>
        <translation>通过</translation>
    </message>
    <message>
        <source>WARN</source>
        <translation>警告</translation>
    </message>
    <message>
        <source>FAIL</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>skip</source>
        <translation>跳过</translation>
    </message>
    <message>
        <source>torch imports</source>
        <translation>torch 导入</translation>
    </message>
    <message>
        <source>ROCm build</source>
        <translation>ROCm 版本</translation>
    </message>
    <message>
        <source>GPU visible</source>
        <translation>GPU 可见</translation>
    </message>
    <message>
        <source>GPU target matches</source>
        <translation>GPU 目标匹配</translation>
    </message>
    <message>
        <source>GEMM float32 vs CPU</source>
        <translation>GEMM float32 与 CPU 对比</translation>
    </message>
    <message>
        <source>GEMM float16 vs CPU</source>
        <translation>GEMM float16 与 CPU 对比</translation>
    </message>
    <message>
        <source>GEMM bfloat16 vs CPU</source>
        <translation>GEMM bfloat16 与 CPU 对比</translation>
    </message>
    <message>
        <source>SDPA (fp16)</source>
        <translation>SDPA (fp16)</translation>
    </message>
    <message>
        <source>Large alloc/free</source>
        <translation>大块分配/释放</translation>
    </message>
    <message>
        <source>Host→device copy</source>
        <translation>主机→设备复制</translation>
    </message>
    <message>
        <source>Device→host copy</source>
        <translation>设备→主机复制</translation>
    </message>
    <message>
        <source>Device memory bandwidth</source>
        <translation>显存带宽</translation>
    </message>
    <message>
        <source>GEMM TFLOPS float16</source>
        <translation>GEMM TFLOPS float16</translation>
    </message>
    <message>
        <source>GEMM TFLOPS bfloat16</source>
        <translation>GEMM TFLOPS bfloat16</translation>
    </message>
    <message>
        <source>GEMM TFLOPS float32</source>
        <translation>GEMM TFLOPS float32</translation>
    </message>
    <message>
        <source>VRAM: torch vs sysfs</source>
        <translation>显存：torch 与 sysfs 对比</translation>
    </message>
    <message>
        <source>Suite finished</source>
        <translation>全部检查完成</translation>
    </message>
    <message>
        <source>completed</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>crashed</source>
        <translation>已崩溃</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>damaged</source>
        <translation>已损坏</translation>
    </message>
    <message>
        <source>, {n} warn</source>
        <translation>，{n} 警告</translation>
    </message>
    <message>
        <source>{passed} pass, {failed} fail{warn}, {skipped} skip</source>
        <translation>{passed} 通过，{failed} 失败{warn}，{skipped} 跳过</translation>
    </message>
    <message>
        <source>Validation run #{id} is damaged ({problem}), so it cannot be shown. Delete it in the PyTorch tab&apos;s run history.</source>
        <translation>验证记录 #{id} 已损坏（{problem}），无法显示。请在“PyTorch”标签页的运行历史中删除它。</translation>
    </message>
    <message>
        <source>#{id} damaged run: {problem}</source>
        <translation>#{id} 已损坏的运行记录：{problem}</translation>
    </message>
    <message>
        <source>{title} (preset {preset})</source>
        <translation>{title}（预设 {preset}）</translation>
    </message>
    <message>
        <source># PyTorch validation #{id}</source>
        <translation># PyTorch 验证 #{id}</translation>
    </message>
    <message>
        <source>n/a</source>
        <translation>n/a</translation>
    </message>
    <message>
        <source>- Python: `{python}`</source>
        <translation>- Python：`{python}`</translation>
    </message>
    <message>
        <source> (environment {name})</source>
        <translation>（环境 {name}）</translation>
    </message>
    <message>
        <source>- Result: {counts}</source>
        <translation>- 结果：{counts}</translation>
    </message>
    <message>
        <source> (ended early: {outcome})</source>
        <translation>（提前结束：{outcome}）</translation>
    </message>
    <message>
        <source># PyTorch validation {when}</source>
        <translation># PyTorch 验证 {when}</translation>
    </message>
    <message>
        <source>- torch: {torch} ({build} build)</source>
        <translation>- torch：{torch}（{build} 版本）</translation>
    </message>
    <message>
        <source>- GPU: {device}; detected gfx {gfx}; device reports {arch}</source>
        <translation>- GPU：{device}；检测到的 gfx 为 {gfx}；设备报告 {arch}</translation>
    </message>
    <message>
        <source>- Tuning preset: {preset}</source>
        <translation>- 调优预设：{preset}</translation>
    </message>
    <message>
        <source>| Check | Status | Figure |</source>
        <translation>| 检查项 | 状态 | 数值 |</translation>
    </message>
    <message>
        <source>## Failures</source>
        <translation>## 失败项</translation>
    </message>
    <message>
        <source>- Likely cause: {cause}</source>
        <translation>- 可能原因：{cause}</translation>
    </message>
    <message>
        <source>- Fix: {fix}</source>
        <translation>- 修复：{fix}</translation>
    </message>
    <message>
        <source>- Not a known error: see the text above.</source>
        <translation>- 不是已知错误：请查看上面的文本。</translation>
    </message>
    <message>
        <source>{title} (torch {torch}, {device}, preset: {preset})</source>
        <translation>{title}（torch {torch}，{device}，预设：{preset}）</translation>
    </message>
    <message>
        <source>no GPU</source>
        <translation>无 GPU</translation>
    </message>
    <message>
        <source># PyTorch validation: two runs</source>
        <translation># PyTorch 验证：两次运行</translation>
    </message>
    <message>
        <source>| Check | A | B | Change |</source>
        <translation>| 检查项 | A | B | 变化 |</translation>
    </message>
</context>
</TS>
