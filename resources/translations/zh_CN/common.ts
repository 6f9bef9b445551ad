<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
    <context>
        <name>DatasetInfo</name>
        <message>
            <source>installed update, newest ROCm release known: {date}</source>
            <translation>已安装的更新数据，已知最新的 ROCm 版本发布于：{date}</translation>
        </message>
        <message>
            <source>built-in data, newest ROCm release known: {date}</source>
            <translation>内置数据，已知最新的 ROCm 版本发布于：{date}</translation>
        </message>
    </context>
    <context>
        <name>GpuChoice</name>
        <message>
            <source>no AMD GPU</source>
            <extracomment>A recorded /sys tree to read instead of this machine's (as the inventory does). One sentence each on what the variables mean, for the picker and the launch scripts.</extracomment>
            <translation>无 AMD GPU</translation>
        </message>
        <message>
            <source>all {count} GPUs</source>
            <translation>全部 {count} 个 GPU</translation>
        </message>
    </context>
    <context>
        <name>JobOutcome</name>
        <message>
            <source>Last lines of its error output:</source>
            <translation>其错误输出的最后几行：</translation>
        </message>
        <message>
            <source>Cancelled.</source>
            <translation>已取消。</translation>
        </message>
        <message>
            <source>The worker was killed by {signal}.</source>
            <translation>工作进程被 {signal} 终止。</translation>
        </message>
        <message>
            <source>The worker crashed (exit code {code}).</source>
            <translation>工作进程崩溃（退出码 {code}）。</translation>
        </message>
        <message>
            <source>The worker exited without reporting a result.</source>
            <translation>工作进程退出时未报告结果。</translation>
        </message>
        <message>
            <source>Done.</source>
            <translation>完成。</translation>
        </message>
    </context>
    <context>
        <name>JobProcess</name>
        <message>
            <source>Could not start {program}: {reason}.</source>
            <translation>无法启动 {program}：{reason}。</translation>
        </message>
        <message>
            <source>Could not start {program}: Windows did not let it run.</source>
            <translation>无法启动 {program}：Windows 不允许其运行。</translation>
        </message>
        <message>
            <source>The {job} job takes no commands.</source>
            <translation>{job} 任务不接受命令。</translation>
        </message>
        <message>
            <source>The worker is not running.</source>
            <translation>工作进程未在运行。</translation>
        </message>
    </context>
    <context>
        <name>Precision</name>
        <message>
            <source>4-bit NF4 (bitsandbytes)</source>
            <translation>4 位 NF4（bitsandbytes）</translation>
        </message>
        <message>
            <source>8-bit (bitsandbytes)</source>
            <translation>8 位（bitsandbytes）</translation>
        </message>
    </context>
    <context>
        <name>PresetText</name>
        <message>
            <source>what it depends on is not known here</source>
            <extracomment>How an effect note says it was not checked (rules write it; the text is matched here).</extracomment>
            <translation>此处无法得知它依赖的条件</translation>
        </message>
        <message>
            <source>not checked: {why}</source>
            <translation>未检查：{why}</translation>
        </message>
        <message>
            <source>it does not apply on this machine</source>
            <translation>在这台机器上不适用</translation>
        </message>
        <message>
            <source>no effect here: {why}</source>
            <translation>此处无效：{why}</translation>
        </message>
        <message>
            <source>applies ({note})</source>
            <translation>生效（{note}）</translation>
        </message>
        <message>
            <source>applies</source>
            <translation>生效</translation>
        </message>
        <message>
            <source>on</source>
            <translation>开</translation>
        </message>
        <message>
            <source>off</source>
            <translation>关</translation>
        </message>
        <message>
            <source>on, tuning new shapes</source>
            <translation>开，调优新形状</translation>
        </message>
        <message>
            <source>on, saved results only</source>
            <translation>开，仅用已保存的结果</translation>
        </message>
        <message>
            <source>any GPU</source>
            <translation>任意 GPU</translation>
        </message>
    </context>
    <context>
        <name>Settings</name>
        <message>
            <source>Python for GPU jobs</source>
            <translation>GPU 任务使用的 Python</translation>
        </message>
        <message>
            <source>The interpreter that runs GPU jobs (PyTorch checks, chat). Empty: the panel's own Python. Making an environment active in the PyTorch tab sets it.</source>
            <translation>运行 GPU 任务（PyTorch 检查、对话）的解释器。留空：使用面板自带的 Python。在“PyTorch”标签页中将某个环境设为当前环境时会设置此项。</translation>
        </message>
        <message>
            <source>the panel's own Python</source>
            <translation>面板自带的 Python</translation>
        </message>
        <message>
            <source>Tuning preset for jobs</source>
            <translation>任务使用的调优预设</translation>
        </message>
        <message>
            <source>The id of the tuning preset every job runs under (chosen in the Tuning tab). Empty: no preset.</source>
            <translation>所有任务运行时使用的调优预设的 id（在“调优”标签页中选择）。留空：不使用预设。</translation>
        </message>
        <message>
            <source>GPUs for jobs</source>
            <translation>任务使用的 GPU</translation>
        </message>
        <message>
            <source>The GPUs every job runs on, by PCI address, separated by commas (chosen with the GPUs button in the status bar). Empty: the discrete GPUs; all: every GPU.</source>
            <translation>所有任务运行所用的 GPU，按 PCI 地址列出，以逗号分隔（用状态栏中的 GPU 按钮选择）。留空：独立 GPU；all：所有 GPU。</translation>
        </message>
        <message>
            <source>Language</source>
            <translation>语言</translation>
        </message>
        <message>
            <source>The window's language: system (the system's when a translation exists, else English), en or zh_CN. Takes effect when the panel starts again.</source>
            <translation>窗口语言：system（有对应翻译时跟随系统，否则为英文）、en 或 zh_CN。面板重新启动后生效。</translation>
        </message>
        <message>
            <source>Colours</source>
            <translation>配色</translation>
        </message>
        <message>
            <source>system (follows the system's light or dark scheme), light or dark.</source>
            <translation>system（跟随系统的浅色或深色方案）、light 或 dark。</translation>
        </message>
        <message>
            <source>First-run guide dismissed</source>
            <translation>已关闭首次运行指南</translation>
        </message>
        <message>
            <source>Time a cancelled job gets to finish</source>
            <translation>已取消任务的收尾时间</translation>
        </message>
        <message>
            <source>How long a cancelled job may clean up before it is stopped by force.</source>
            <translation>已取消的任务在被强制停止前可用于清理的时间。</translation>
        </message>
        <message>
            <source>Window geometry</source>
            <translation>窗口位置和大小</translation>
        </message>
        <message>
            <source>Window state</source>
            <translation>窗口状态</translation>
        </message>
        <message>
            <source>Last tab</source>
            <translation>上次的标签页</translation>
        </message>
        <message>
            <source>Log open</source>
            <translation>日志面板已打开</translation>
        </message>
        <message>
            <source>Read the GPUs every</source>
            <translation>读取 GPU 的间隔</translation>
        </message>
        <message>
            <source>How often the Monitor reads the GPUs.</source>
            <translation>监控读取 GPU 的频率。</translation>
        </message>
        <message>
            <source>Alerts on heat, VRAM and power</source>
            <translation>温度、显存和功耗警报</translation>
        </message>
        <message>
            <source>Warn when a GPU runs hot, fills its VRAM or stays at its power cap.</source>
            <translation>当 GPU 过热、显存占满或持续处于功耗上限时发出警告。</translation>
        </message>
        <message>
            <source>Alert when this close to the critical temperature</source>
            <translation>距临界温度不足此值时警报</translation>
        </message>
        <message>
            <source>Warn when a GPU temperature comes this close to the critical limit its driver reports.</source>
            <translation>当 GPU 温度与驱动报告的临界温度相差不超过此值时发出警告。</translation>
        </message>
        <message>
            <source>Alert when VRAM use stays above</source>
            <translation>显存占用持续高于此值时警报</translation>
        </message>
        <message>
            <source>Warn when VRAM use stays above this share of the total for the time below.</source>
            <translation>当显存占用在下方设定的时长内持续高于总量的此比例时发出警告。</translation>
        </message>
        <message>
            <source>… for at least</source>
            <translation>… 持续至少</translation>
        </message>
        <message>
            <source>How long VRAM use must stay above the share above before the alert.</source>
            <translation>显存占用需持续高于上述比例多久才发出警报。</translation>
        </message>
        <message>
            <source>Alert when power stays at its cap for</source>
            <translation>功耗持续处于上限多久时警报</translation>
        </message>
        <message>
            <source>Warn when a GPU's power stays at its cap this long.</source>
            <translation>当 GPU 功耗持续处于上限达到此时长时发出警告。</translation>
        </message>
        <message>
            <source>Repeat the same alert after at least</source>
            <translation>同一警报的最短重复间隔</translation>
        </message>
        <message>
            <source>After an alert, the same alert on the same GPU stays quiet this long.</source>
            <translation>发出警报后，同一 GPU 上的相同警报在此时长内保持静默。</translation>
        </message>
        <message>
            <source>Show alerts as desktop notifications</source>
            <translation>以桌面通知显示警报</translation>
        </message>
        <message>
            <source>Also show alerts as desktop notifications (where a system tray exists).</source>
            <translation>同时以桌面通知显示警报（在有系统托盘时）。</translation>
        </message>
        <message>
            <source>Last chat model</source>
            <translation>上次的对话模型</translation>
        </message>
        <message>
            <source>Chat precision</source>
            <translation>对话精度</translation>
        </message>
        <message>
            <source>nf4, int8, fp16, bf16 or fp32; empty: NF4 on a GPU, bf16 on the CPU.</source>
            <translation>nf4、int8、fp16、bf16 或 fp32；留空：GPU 上用 NF4，CPU 上用 bf16。</translation>
        </message>
        <message>
            <source>Chat device</source>
            <translation>对话设备</translation>
        </message>
        <message>
            <source>auto, gpu or cpu.</source>
            <translation>auto、gpu 或 cpu。</translation>
        </message>
        <message>
            <source>Chat context length</source>
            <translation>对话上下文长度</translation>
        </message>
        <message>
            <source>Tokens of conversation kept for the model (the KV cache grows with it).</source>
            <translation>为模型保留的对话 token 数（KV 缓存随之增长）。</translation>
        </message>
        <message>
            <source>Temperature</source>
            <translation>温度</translation>
        </message>
        <message>
            <source>Top-p</source>
            <translation>Top-p</translation>
        </message>
        <message>
            <source>Top-k</source>
            <translation>Top-k</translation>
        </message>
        <message>
            <source>Repetition penalty</source>
            <translation>重复惩罚</translation>
        </message>
        <message>
            <source>Max new tokens</source>
            <translation>最大新 token 数</translation>
        </message>
        <message>
            <source>Seed</source>
            <translation>随机种子</translation>
        </message>
        <message>
            <source>-1: random.</source>
            <translation>-1：随机。</translation>
        </message>
        <message>
            <source>System prompt</source>
            <translation>系统提示词</translation>
        </message>
        <message>
            <source>Serve port</source>
            <translation>服务端口</translation>
        </message>
        <message>
            <source>The port the Chat tab's OpenAI-compatible server listens on (127.0.0.1); 0: any free port.</source>
            <translation>“对话”标签页的 OpenAI 兼容服务器监听的端口（127.0.0.1）；0：任意空闲端口。</translation>
        </message>
        <message>
            <source>PyTorch wheel index</source>
            <translation>PyTorch wheel 索引</translation>
        </message>
        <message>
            <source>Replaces https://download.pytorch.org/whl in install plans (e.g. a local mirror). Empty: the public index.</source>
            <translation>在安装计划中替换 https://download.pytorch.org/whl（例如本地镜像）。留空：使用公共索引。</translation>
        </message>
        <message>
            <source>AMD wheel server</source>
            <translation>AMD wheel 服务器</translation>
        </message>
        <message>
            <source>Replaces https://repo.radeon.com in install plans. Empty: AMD's server.</source>
            <translation>在安装计划中替换 https://repo.radeon.com。留空：使用 AMD 的服务器。</translation>
        </message>
        <message>
            <source>PyPI index</source>
            <translation>PyPI 索引</translation>
        </message>
        <message>
            <source>Index for dependencies of AMD-hosted wheels. Empty: https://pypi.org/simple.</source>
            <translation>AMD 托管 wheel 的依赖所用的索引。留空：https://pypi.org/simple。</translation>
        </message>
        <message>
            <source>Python for new environments</source>
            <translation>新环境的基础 Python</translation>
        </message>
        <message>
            <source>The interpreter new PyTorch environments are created from (AMD's Windows wheels need Python 3.12). Empty: the panel's own Python.</source>
            <translation>用于创建新 PyTorch 环境的解释器（AMD 的 Windows wheel 需要 Python 3.12）。留空：使用面板自带的 Python。</translation>
        </message>
        <message>
            <source>Let pip read my pip.conf and PIP_* variables</source>
            <translation>允许 pip 读取我的 pip.conf 和 PIP_* 变量</translation>
        </message>
        <message>
            <source>Off: installs use only the planned index, so no other torch build can slip in.</source>
            <translation>关闭：安装只使用计划的索引，因此不会混入其他 torch 版本。</translation>
        </message>
        <message>
            <source>Backups kept of each environment file</source>
            <translation>每个环境文件保留的备份数</translation>
        </message>
        <message>
            <source>How many backups of each environment file the variable editor keeps.</source>
            <translation>变量编辑器为每个环境文件保留的备份数量。</translation>
        </message>
    </context>
    <context>
        <name>gpu_choice</name>
        <message>
            <source>AMD GPU</source>
            <translation>AMD GPU</translation>
        </message>
        <message>
            <source>GPU {index} {name}{where}</source>
            <translation>GPU {index} {name}{where}</translation>
        </message>
        <message>
            <source>The saved GPU choice has entries that are not PCI addresses ({shown}): ignored.</source>
            <translation>已保存的 GPU 选择中有不是 PCI 地址的条目（{shown}）：已忽略。</translation>
        </message>
        <message>
            <source>Chosen GPU {gpus} is not on this machine now.</source>
            <translation>所选的 GPU {gpus} 当前不在本机上。</translation>
        </message>
        <message>
            <source>None of the chosen GPUs is here: jobs use the default.</source>
            <translation>所选的 GPU 都不在：任务使用默认 GPU。</translation>
        </message>
        <message>
            <source>Left out by default (integrated): {names}.</source>
            <translation>默认排除（集成 GPU）：{names}。</translation>
        </message>
    </context>
    <context>
        <name>install_profiles</name>
        <message>
            <source>There is no install profile {profile}.</source>
            <translation>没有安装配置 {profile}。</translation>
        </message>
        <message>
            <source>{requirement}: {why}</source>
            <translation>{requirement}：{why}</translation>
        </message>
        <message>
            <source>{file} is not valid YAML.</source>
            <translation>{file} 不是有效的 YAML。</translation>
        </message>
        <message>
            <source>{file} is malformed.</source>
            <translation>{file} 格式错误。</translation>
        </message>
        <message>
            <source>Could not read {file}.</source>
            <translation>无法读取 {file}。</translation>
        </message>
        <message>
            <source>4-bit on the GPU: not available with a torch built without ROCm (a CPU or CUDA build), so bitsandbytes is not installed. Chat still works on the CPU.</source>
            <translation>GPU 上的 4 位量化：对不含 ROCm 的 torch（CPU 或 CUDA 版本）不可用，因此不安装 bitsandbytes。对话仍可在 CPU 上运行。</translation>
        </message>
        <message>
            <source>an unknown GPU</source>
            <translation>未知 GPU</translation>
        </message>
        <message>
            <source>its PyPI wheels for {system} have no ROCm {series} kernels for {gfx}</source>
            <translation>它在 PyPI 上的 {system} wheel 没有适用于 {gfx} 的 ROCm {series} 内核</translation>
        </message>
        <message>
            <source>4-bit on the GPU: not available for {gfx} with torch built for ROCm {series} on {system}, so bitsandbytes is not installed: {reason}. Chat still works in bf16/fp16 on the GPU if the model fits its memory, or on the CPU.</source>
            <translation>GPU 上的 4 位量化：在 {system} 上使用为 ROCm {series} 构建的 torch 时，{gfx} 不可用，因此不安装 bitsandbytes：{reason}。如果模型能放入显存，对话仍可在 GPU 上以 bf16/fp16 运行，否则在 CPU 上运行。</translation>
        </message>
        <message>
            <source>{why}; its {system} wheels include ROCm {series} kernels for {gfx}</source>
            <translation>{why}；其 {system} wheel 包含适用于 {gfx} 的 ROCm {series} 内核</translation>
        </message>
        <message>
            <source>4-bit on the GPU: available ({gfx}, torch built for ROCm {series}).</source>
            <translation>GPU 上的 4 位量化：可用（{gfx}，torch 为 ROCm {series} 构建）。</translation>
        </message>
    </context>
    <context>
        <name>installed</name>
        <message>
            <source>The workload Python {python} did not answer within {seconds} s. Check that it starts, or pick another interpreter in Settings.</source>
            <translation>工作负载 Python {python} 在 {seconds} 秒内没有响应。请检查它能否启动，或在设置中选择另一个解释器。</translation>
        </message>
        <message>
            <source>The workload Python {python} could not start ({reason}). Pick another interpreter in Settings.</source>
            <translation>工作负载 Python {python} 无法启动（{reason}）。请在设置中选择另一个解释器。</translation>
        </message>
        <message>
            <source>Listing the packages failed: {message}</source>
            <translation>列出包失败：{message}</translation>
        </message>
        <message>
            <source>The workload Python {python} did not list its packages (exit code {code}: {last}).</source>
            <translation>工作负载 Python {python} 未列出其包（退出码 {code}：{last}）。</translation>
        </message>
    </context>
    <context>
        <name>job_env</name>
        <message>
            <source>Could not read the tuning preset {preset}: {reason}</source>
            <extracomment>The panel's data folder, for workers (workers/_preset.py keeps TunableOp's results in it, one file per GPU and torch version); set only for a preset with TunableOp.</extracomment>
            <translation>无法读取调优预设 {preset}：{reason}</translation>
        </message>
    </context>
    <context>
        <name>spec</name>
        <message>
            <source>The workload Python {python} does not exist.</source>
            <extracomment>The GPUs a job runs on, in words (set by :mod:`rocmpanel.jobs.job_env` from the GPU choice): the jobs strip and the commands show it. What the user should know about that choice (a chosen GPU that is gone), or unset. The tuning preset the job runs under: None = the active one (Settings ``general.active_preset``), ``NO_PRESET`` ("none") = no preset, else a preset id. Arguments between the interpreter and the script, e.g. ``("-m", "torch.distributed.run", "--nproc-per-node=2")`` to start one worker per GPU. The GPUs the job runs on, by PCI address: None = the saved choice (:mod:`rocmpanel.jobs.gpu_choice`), () = every GPU the runtime sees.</extracomment>
            <translation>工作负载 Python {python} 不存在。</translation>
        </message>
        <message>
            <source>The workload Python {python} is not an executable file.</source>
            <translation>工作负载 Python {python} 不是可执行文件。</translation>
        </message>
        <message>
            <source>The worker script {script} is missing; reinstall rocmpanel.</source>
            <translation>工作脚本 {script} 缺失；请重新安装 rocmpanel。</translation>
        </message>
    </context>
    <context>
        <name>workload</name>
        <message>
            <source>The list of registered interpreters {path} is not a regular file, so it is ignored. Move it away to register interpreters again.</source>
            <translation>已登记解释器列表 {path} 不是普通文件，因此被忽略。请将其移走后再重新登记解释器。</translation>
        </message>
        <message>
            <source>The list of registered interpreters {path} is damaged ({problem}), so it is ignored. Fix it by hand, or register an interpreter: the damaged file is then kept as {kept}-&lt;time&gt; and a new list started.</source>
            <translation>已登记解释器列表 {path} 已损坏（{problem}），因此被忽略。请手动修复，或登记一个解释器：损坏的文件随后会保留为 {kept}-&lt;time&gt;，并新建列表。</translation>
        </message>
        <message>
            <source>Nothing registered: the damaged {path} could not be kept aside as {target} ({reason}), so it was left as it is. Move it away or fix it, then try again.</source>
            <translation>未登记任何内容：无法将已损坏的 {path} 另存为 {target}（{reason}），因此保持原样。请将其移走或修复后重试。</translation>
        </message>
        <message>
            <source>{python} is not an executable file.</source>
            <translation>{python} 不是可执行文件。</translation>
        </message>
        <message>
            <source>Nothing registered: {file} is not a regular file. Move it away, then try again.</source>
            <translation>未登记任何内容：{file} 不是普通文件。请将其移走后重试。</translation>
        </message>
    </context>
</TS>
