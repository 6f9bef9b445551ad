<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
    <context>
        <name>ABRun</name>
        <message>
            <source>A/B benchmark ({workload}): {side} {name} {number}/{reps}</source>
            <translation>A/B 基准测试（{workload}）：{side} {name} {number}/{reps}</translation>
        </message>
        <message>
            <source>no preset</source>
            <translation>无预设</translation>
        </message>
        <message>
            <source>{where} did not run under its preset: the worker reported {reported}, not {expected}; its figures were not used.</source>
            <translation>{where}未在其预设下运行：工作进程报告的是 {reported}，而不是 {expected}；其数据未被采用。</translation>
        </message>
        <message>
            <source>{where} ran on {device} with torch {version}, the earlier runs on {earlier_device} with torch {earlier_version}; its figures were not used.</source>
            <translation>{where}运行于 {device}（torch {version}），而之前的运行在 {earlier_device} 上（torch {earlier_version}）；其数据未被采用。</translation>
        </message>
        <message>
            <source>{where} did not run under the same settings as run {first} of {side}: {changed} changed in between (the preset or the panel's job variables were edited during the benchmark); its figures were not used. Run the benchmark again to compare.</source>
            <translation>{where}与 {side} 的第 {first} 次运行设置不同：{changed} 在此期间发生了变化（基准测试期间编辑了预设或面板的任务变量）；其数据未被采用。请重新运行基准测试进行比较。</translation>
        </message>
        <message>
            <source>the torch setting {key}</source>
            <translation>torch 设置 {key}</translation>
        </message>
        <message>
            <source>its preset header</source>
            <translation>其预设头信息</translation>
        </message>
        <message>
            <source>{count} more variables</source>
            <translation>另外 {count} 个变量</translation>
        </message>
        <message>
            <source>{where} sent a case the panel cannot read: {case}.</source>
            <translation>{where}发送了面板无法读取的用例：{case}。</translation>
        </message>
        <message>
            <source>{where}: {case}: {value} is not a figure above zero; left out.</source>
            <translation>{where}：{case}：{value} 不是大于零的数值；已略去。</translation>
        </message>
        <message>
            <source>{where}: {case}: the unit changed between runs; left out.</source>
            <translation>{where}：{case}：各次运行之间单位发生了变化；已略去。</translation>
        </message>
        <message>
            <source>Run {number} of {side} ({name})</source>
            <translation>{side}（{name}）的第 {number} 次运行</translation>
        </message>
        <message>
            <source>{where} failed: {message}</source>
            <translation>{where}失败：{message}</translation>
        </message>
        <message>
            <source>Cancelled after {done} of {total} runs; the figures are from the runs that finished.</source>
            <translation>在 {total} 次运行中完成 {done} 次后已取消；数据来自已完成的运行。</translation>
        </message>
        <message>
            <source>{case}: measured under {side} only; not compared.</source>
            <translation>{case}：只在 {side} 下测得；未作比较。</translation>
        </message>
    </context>
    <context>
        <name>BenchPanel</name>
        <message>
            <source>Auto (the GPU if torch sees one)</source>
            <translation>自动（torch 能看到 GPU 时使用 GPU）</translation>
        </message>
        <message>
            <source>No preset</source>
            <translation>无预设</translation>
        </message>
        <message>
            <source>This is a demo: benchmarks run on a real machine's workload Python.</source>
            <translation>这是演示：基准测试需在真实机器的工作负载 Python 上运行。</translation>
        </message>
        <message>
            <source>Chat decode needs a chat model: choose one in the Chat tab first.</source>
            <translation>对话解码需要对话模型：请先在“对话”标签页中选择一个。</translation>
        </message>
        <message>
            <source>No AMD GPU was found: the benchmark runs on the CPU and its figures say CPU.</source>
            <translation>未找到 AMD GPU：基准测试将在 CPU 上运行，其数据会注明 CPU。</translation>
        </message>
        <message>
            <source>Runs of each side; the spread needs at least two.</source>
            <translation>每一方的运行次数；计算离散范围至少需要两次。</translation>
        </message>
        <message>
            <source>&amp;Quick</source>
            <translation>快速(&amp;Q)</translation>
        </message>
        <message>
            <source>Small sizes: a fast check that it works, not a measurement (on by default when no AMD GPU is found: the CPU is slow at full sizes).</source>
            <translation>小规模：快速检查能否运行，而不是测量（未找到 AMD GPU 时默认开启：CPU 跑完整规模很慢）。</translation>
        </message>
        <message>
            <source>&amp;Run A/B</source>
            <translation>运行 A/B(&amp;R)</translation>
        </message>
        <message>
            <source>Cancel</source>
            <translation>取消</translation>
        </message>
        <message>
            <source>%v of %m</source>
            <translation>%v / %m</translation>
        </message>
        <message>
            <source>&amp;Workload:</source>
            <translation>工作负载(&amp;W)：</translation>
        </message>
        <message>
            <source>Repe&amp;titions:</source>
            <translation>重复次数(&amp;T)：</translation>
        </message>
        <message>
            <source>&amp;Device:</source>
            <translation>设备(&amp;D)：</translation>
        </message>
        <message>
            <source>Listing the presets</source>
            <translation>列出预设</translation>
        </message>
        <message>
            <source>Decode tok/s of {model}</source>
            <translation>{model} 的解码 tok/s</translation>
        </message>
        <message>
            <source>Run A, B, A, B, … each in a fresh worker process</source>
            <translation>依次运行 A、B、A、B……，每次都在新的工作进程中</translation>
        </message>
        <message>
            <source>Starting the benchmark</source>
            <translation>启动基准测试</translation>
        </message>
        <message>
            <source>Running A: {a} vs B: {b}…</source>
            <translation>正在运行 A：{a} 对比 B：{b}…</translation>
        </message>
        <message>
            <source>run {number} of {planned} ({side})</source>
            <translation>第 {number} / {planned} 次运行（{side}）</translation>
        </message>
        <message>
            <source>Starting a benchmark run</source>
            <translation>启动一次基准测试运行</translation>
        </message>
        <message>
            <source>it sent a result the panel cannot read ({problem}).</source>
            <translation>它发送了面板无法读取的结果（{problem}）。</translation>
        </message>
        <message>
            <source>A/B benchmark cancelled; the runs measured so far are kept.</source>
            <translation>A/B 基准测试已取消；已测得的运行结果会保留。</translation>
        </message>
    </context>
    <context>
        <name>BenchTable</name>
        <message>
            <source>Case</source>
            <translation>用例</translation>
        </message>
        <message>
            <source>A median</source>
            <translation>A 中位数</translation>
        </message>
        <message>
            <source>B median</source>
            <translation>B 中位数</translation>
        </message>
        <message>
            <source>B vs A</source>
            <translation>B 对比 A</translation>
        </message>
        <message>
            <source>Spread</source>
            <translation>离散范围</translation>
        </message>
        <message>
            <source>Verdict</source>
            <translation>结论</translation>
        </message>
        <message>
            <source>B's median against A's, oriented so that above 1× means B is better (for times: A's time / B's time).</source>
            <translation>B 的中位数与 A 的比值，方向统一为大于 1× 表示 B 更好（时间类：A 的时间 / B 的时间）。</translation>
        </message>
        <message>
            <source>The range the ratio takes over the runs of both sides.</source>
            <translation>该比值在双方各次运行中的取值范围。</translation>
        </message>
    </context>
    <context>
        <name>ItemsPanel</name>
        <message>
            <source>Search the guide's snippets and the ROCm settings (e.g. flash, 碎片, tf32)</source>
            <translation>搜索指南中的代码片段和 ROCm 设置（例如 flash、碎片、tf32）</translation>
        </message>
        <message>
            <source>&amp;Search:</source>
            <translation>搜索(&amp;S)：</translation>
        </message>
        <message>
            <source>Tuning items</source>
            <translation>调优条目</translation>
        </message>
        <message>
            <source>A&amp;dd to preset…</source>
            <translation>添加到预设(&amp;D)…</translation>
        </message>
        <message>
            <source>Reading the tuning items</source>
            <translation>读取调优条目</translation>
        </message>
        <message>
            <source>{title} — not useful on ROCm</source>
            <translation>{title} — 在 ROCm 上无用</translation>
        </message>
        <message>
            <source>{shown} of {total}</source>
            <translation>{shown} / {total}</translation>
        </message>
        <message>
            <source>No item matches “{text}”.</source>
            <translation>没有与“{text}”匹配的条目。</translation>
        </message>
        <message>
            <source>No tuning items are available.</source>
            <translation>没有可用的调优条目。</translation>
        </message>
        <message>
            <source>No preset setting does this.</source>
            <translation>没有预设设置能做到这一点。</translation>
        </message>
    </context>
    <context>
        <name>PersistDialog</name>
        <message>
            <source>The preset's torch settings ({keys}) are applied by rocmpanel's workers when they start torch, so they cannot be set for other programs this way. For the allocator and TunableOp, the Items page names the variables that do the same in any program.</source>
            <translation>该预设的 torch 设置（{keys}）由 rocmpanel 的工作进程在启动 torch 时应用，因此无法用这种方式为其他程序设置。对于分配器和 TunableOp，“条目”页列出了在任何程序中起同样作用的变量。</translation>
        </message>
        <message>
            <source>This is a demo: it shows recorded GPUs, not this machine, so nothing is written here.</source>
            <translation>这是演示：显示的是录制的 GPU，而不是本机，因此这里不会写入任何内容。</translation>
        </message>
        <message>
            <source>Set “{name}” for programs outside rocmpanel</source>
            <translation>为 rocmpanel 之外的程序设置“{name}”</translation>
        </message>
        <message>
            <source>The preset's variables are staged below ({count}). Review them with Preview changes, then Apply: the files are backed up first and Undo puts them back. Programs started afterwards get them; rocmpanel's own jobs get them from the active preset anyway.</source>
            <translation>该预设的变量已暂存在下方（{count} 个）。请用“预览更改”检查，然后点击“应用”：文件会先备份，撤销可将其恢复。之后启动的程序会得到这些变量；rocmpanel 自己的任务本来就会从当前预设中得到它们。</translation>
        </message>
        <message>
            <source>Not for {platform}, so not staged: {names}.</source>
            <translation>不适用于 {platform}，因此未暂存：{names}。</translation>
        </message>
    </context>
    <context>
        <name>PresetDetails</name>
        <message>
            <source>No description.</source>
            <extracomment>An effect that could not be checked here: not greyed (it may apply), but marked.</extracomment>
            <translation>无描述。</translation>
        </message>
        <message>
            <source>This preset sets nothing: jobs run as they would without one.</source>
            <extracomment>An address ends at a space, a bracket or quote, or a character outside ASCII (a translated sentence may follow it with no space: "…{source}。").</extracomment>
            <translation>此预设不设置任何内容：任务的运行与不使用预设时相同。</translation>
        </message>
        <message>
            <source>Setting</source>
            <translation>设置</translation>
        </message>
        <message>
            <source>Value</source>
            <translation>值</translation>
        </message>
        <message>
            <source>On this machine</source>
            <translation>在本机上</translation>
        </message>
        <message>
            <source>What it does</source>
            <translation>作用</translation>
        </message>
        <message>
            <source>No preset selected.</source>
            <translation>未选择预设。</translation>
        </message>
        <message>
            <source>{name} — built in</source>
            <translation>{name} — 内置</translation>
        </message>
        <message>
            <source>{name} — your preset ({path})</source>
            <translation>{name} — 你的预设（{path}）</translation>
        </message>
        <message>
            <source>Suits: {archs}</source>
            <translation>适用：{archs}</translation>
        </message>
        <message>
            <source>the effects could not be checked</source>
            <translation>无法检查其效果</translation>
        </message>
    </context>
    <context>
        <name>PresetEditor</name>
        <message>
            <source>Not in rocmpanel's catalogue, so not checked (a typo, or a variable rocmpanel does not know): {names}.</source>
            <translation>不在 rocmpanel 的目录中，因此未检查（可能是拼写错误，或 rocmpanel 不认识的变量）：{names}。</translation>
        </message>
        <message>
            <source>Saving…</source>
            <translation>正在保存…</translation>
        </message>
        <message>
            <source>new preset</source>
            <translation>新预设</translation>
        </message>
        <message>
            <source>Edit preset: {name}</source>
            <translation>编辑预设：{name}</translation>
        </message>
        <message>
            <source>New preset</source>
            <translation>新预设</translation>
        </message>
        <message>
            <source>&amp;Form</source>
            <translation>表单(&amp;F)</translation>
        </message>
        <message>
            <source>Preset as YAML</source>
            <translation>预设的 YAML 文本</translation>
        </message>
        <message>
            <source>&amp;Raw YAML</source>
            <translation>原始 YAML(&amp;R)</translation>
        </message>
        <message>
            <source>Save the preset (Ctrl+S)</source>
            <translation>保存预设（Ctrl+S）</translation>
        </message>
        <message>
            <source>Line {line}, column {column}</source>
            <translation>第 {line} 行，第 {column} 列</translation>
        </message>
        <message>
            <source>&amp;Name:</source>
            <translation>名称(&amp;N)：</translation>
        </message>
        <message>
            <source>&amp;Description:</source>
            <translation>描述(&amp;D)：</translation>
        </message>
        <message>
            <source>any</source>
            <translation>任意</translation>
        </message>
        <message>
            <source>Suits:</source>
            <translation>适用：</translation>
        </message>
        <message>
            <source>Environment variables</source>
            <translation>环境变量</translation>
        </message>
        <message>
            <source>Variable</source>
            <translation>变量</translation>
        </message>
        <message>
            <source>Value</source>
            <translation>值</translation>
        </message>
        <message>
            <source>Check</source>
            <translation>检查</translation>
        </message>
        <message>
            <source>&amp;Add variable</source>
            <translation>添加变量(&amp;A)</translation>
        </message>
        <message>
            <source>Re&amp;move variable</source>
            <translation>移除变量(&amp;M)</translation>
        </message>
        <message>
            <source>What the tuning items say about the selected variable</source>
            <translation>调优条目对所选变量的说明</translation>
        </message>
        <message>
            <source>The tuning items say nothing about {key}.</source>
            <translation>调优条目中没有关于 {key} 的说明。</translation>
        </message>
        <message>
            <source>ok</source>
            <translation>正常</translation>
        </message>
        <message>
            <source>{problem} — fix it here before switching to the form.</source>
            <translation>{problem} — 请先在此修正，再切换到表单。</translation>
        </message>
    </context>
    <context>
        <name>PresetsPanel</name>
        <message>
            <source>“{name}” is built in and cannot be edited: Duplicate it to change a copy.</source>
            <extracomment>What Enter (edit) or Delete on a built-in says: one whole sentence each, so that each language words it as a whole.</extracomment>
            <translation>“{name}”是内置预设，无法编辑：请复制一份后修改副本。</translation>
        </message>
        <message>
            <source>“{name}” is built in and cannot be deleted: Duplicate it to change a copy.</source>
            <translation>“{name}”是内置预设，无法删除：请复制一份后修改副本。</translation>
        </message>
        <message>
            <source>built in: Duplicate it to change a copy</source>
            <translation>内置：请复制一份后修改副本</translation>
        </message>
        <message>
            <source>✓ suits your GPU ({gfx})</source>
            <translation>✓ 适合你的 GPU（{gfx}）</translation>
        </message>
        <message>
            <source>{name} is meant for {archs} GPUs; this machine's GPU is {gfx}. Use it anyway?</source>
            <translation>{name} 适用于 {archs} GPU；本机的 GPU 是 {gfx}。仍要使用吗？</translation>
        </message>
        <message>
            <source>Presets</source>
            <translation>预设</translation>
        </message>
        <message>
            <source>&amp;Use for jobs</source>
            <translation>用于任务(&amp;U)</translation>
        </message>
        <message>
            <source>S&amp;top using</source>
            <translation>停止使用(&amp;T)</translation>
        </message>
        <message>
            <source>&amp;New…</source>
            <translation>新建(&amp;N)…</translation>
        </message>
        <message>
            <source>Dupli&amp;cate</source>
            <translation>创建副本(&amp;C)</translation>
        </message>
        <message>
            <source>&amp;Edit…</source>
            <translation>编辑(&amp;E)…</translation>
        </message>
        <message>
            <source>De&amp;lete</source>
            <translation>删除(&amp;L)</translation>
        </message>
        <message>
            <source>I&amp;mport…</source>
            <translation>导入(&amp;M)…</translation>
        </message>
        <message>
            <source>E&amp;xport…</source>
            <translation>导出(&amp;X)…</translation>
        </message>
        <message>
            <source>Also set these variables for programs &amp;outside rocmpanel…</source>
            <translation>也为 rocmpanel 之外的程序设置这些变量(&amp;O)…</translation>
        </message>
        <message>
            <source>Reading the presets</source>
            <translation>读取预设</translation>
        </message>
        <message>
            <source>The presets could not be read.</source>
            <translation>无法读取预设。</translation>
        </message>
        <message>
            <source>These preset files could not be read and are left as they are:
{files}</source>
            <translation>以下预设文件无法读取，已保持原样：
{files}</translation>
        </message>
        <message>
            <source>{name}  (built in)</source>
            <translation>{name}（内置）</translation>
        </message>
        <message>
            <source>No description.</source>
            <translation>无描述。</translation>
        </message>
        <message>
            <source>Suits your GPU ({gfx}).</source>
            <translation>适合你的 GPU（{gfx}）。</translation>
        </message>
        <message>
            <source>Checking the preset's effects</source>
            <translation>检查预设的效果</translation>
        </message>
        <message>
            <source>Jobs run under the preset “{name}”.</source>
            <translation>任务在预设“{name}”下运行。</translation>
        </message>
        <message>
            <source>Jobs run without a preset (their environment as it is).</source>
            <translation>任务不使用预设运行（环境保持原样）。</translation>
        </message>
        <message>
            <source>Saving the active preset</source>
            <translation>保存当前预设</translation>
        </message>
        <message>
            <source>Preset for other GPUs</source>
            <translation>适用于其他 GPU 的预设</translation>
        </message>
        <message>
            <source>Jobs started from now on run under “{name}”.</source>
            <translation>从现在起启动的任务将在“{name}”下运行。</translation>
        </message>
        <message>
            <source>Jobs started from now on run without a preset.</source>
            <translation>从现在起启动的任务将不使用预设运行。</translation>
        </message>
        <message>
            <source>Saving the preset</source>
            <translation>保存预设</translation>
        </message>
        <message>
            <source>Saved “{name}” ({path}).</source>
            <translation>已保存“{name}”（{path}）。</translation>
        </message>
        <message>
            <source>The presets are busy: save again in a moment.</source>
            <translation>预设正忙：请稍后再保存。</translation>
        </message>
        <message>
            <source>Duplicating the preset</source>
            <translation>复制预设</translation>
        </message>
        <message>
            <source>Added “{name}” ({path}).</source>
            <translation>已添加“{name}”（{path}）。</translation>
        </message>
        <message>
            <source>Delete the preset “{name}”? A backup of its file is kept.</source>
            <translation>删除预设“{name}”吗？其文件会保留一份备份。</translation>
        </message>
        <message>
            <source>Delete preset</source>
            <translation>删除预设</translation>
        </message>
        <message>
            <source>Deleting the preset</source>
            <translation>删除预设</translation>
        </message>
        <message>
            <source>Deleted “{name}”.</source>
            <translation>已删除“{name}”。</translation>
        </message>
        <message>
            <source>It was the preset jobs ran under: they now run without a preset.</source>
            <translation>它是任务当前使用的预设：现在任务将不使用预设运行。</translation>
        </message>
        <message>
            <source>Importing the preset</source>
            <translation>导入预设</translation>
        </message>
        <message>
            <source>Exporting the preset</source>
            <translation>导出预设</translation>
        </message>
        <message>
            <source>Exported “{name}” to {path}.</source>
            <translation>已将“{name}”导出到 {path}。</translation>
        </message>
    </context>
    <context>
        <name>ResultView</name>
        <message>
            <source>Pick two presets and a workload, then Run A/B.</source>
            <translation>选择两个预设和一个工作负载，然后点击“运行 A/B”。</translation>
        </message>
        <message>
            <source>The chart appears here after a run.</source>
            <translation>运行后图表会显示在这里。</translation>
        </message>
    </context>
    <context>
        <name>SavedResults</name>
        <message>
            <source>&amp;Export…</source>
            <translation>导出(&amp;E)…</translation>
        </message>
        <message>
            <source>Save the result shown as .json or .csv</source>
            <translation>将显示的结果保存为 .json 或 .csv</translation>
        </message>
        <message>
            <source>Saved results</source>
            <translation>已保存的结果</translation>
        </message>
        <message>
            <source>Saving the benchmark result</source>
            <translation>保存基准测试结果</translation>
        </message>
        <message>
            <source>Listing the saved benchmark results</source>
            <translation>列出已保存的基准测试结果</translation>
        </message>
        <message>
            <source>Export the benchmark result</source>
            <translation>导出基准测试结果</translation>
        </message>
        <message>
            <source>Exporting the benchmark result</source>
            <translation>导出基准测试结果</translation>
        </message>
        <message>
            <source>Benchmark result exported to {path}.</source>
            <translation>基准测试结果已导出到 {path}。</translation>
        </message>
    </context>
    <context>
        <name>TorchForm</name>
        <message>
            <source>(not set)</source>
            <translation>（未设置）</translation>
        </message>
        <message>
            <source>on</source>
            <extracomment>What a number shows when its box is ticked: a sensible start, not the range's bottom. torch's own values (torch.set_float32_matmul_precision, the SDPA backends): shown as written, in every language. On/off combos: index 1 is on, 2 off (0 is "not set"); the value never reads the text.</extracomment>
            <translation>开</translation>
        </message>
        <message>
            <source>off</source>
            <translation>关</translation>
        </message>
        <message>
            <source>enabled, tuning new shapes</source>
            <extracomment>TunableOp's choices as the combo lists them after "not set" (label, the preset's value).</extracomment>
            <translation>启用，调优新形状</translation>
        </message>
        <message>
            <source>enabled, known shapes only</source>
            <translation>启用，仅用已知形状</translation>
        </message>
        <message>
            <source>disabled</source>
            <translation>禁用</translation>
        </message>
        <message>
            <source>Torch settings (applied by rocmpanel's workers)</source>
            <translation>Torch 设置（由 rocmpanel 的工作进程应用）</translation>
        </message>
        <message>
            <source>float32 matmul &amp;precision:</source>
            <translation>float32 矩阵乘法精度(&amp;P)：</translation>
        </message>
        <message>
            <source>only these:</source>
            <translation>仅限这些：</translation>
        </message>
        <message>
            <source>SDPA &amp;backends:</source>
            <translation>SDPA 后端(&amp;B)：</translation>
        </message>
        <message>
            <source>Memory frac&amp;tion:</source>
            <translation>显存比例(&amp;T)：</translation>
        </message>
        <message>
            <source>cudnn/MIOpen benc&amp;hmark:</source>
            <translation>cudnn/MIOpen 基准测试(&amp;H)：</translation>
        </message>
        <message>
            <source>CP&amp;U threads:</source>
            <translation>CPU 线程数(&amp;U)：</translation>
        </message>
        <message>
            <source>GC threshold</source>
            <translation>GC 阈值</translation>
        </message>
        <message>
            <source>max split MB</source>
            <translation>最大分割 MB</translation>
        </message>
        <message>
            <source>expandable segments</source>
            <translation>可扩展段</translation>
        </message>
        <message>
            <source>A&amp;llocator:</source>
            <translation>分配器(&amp;L)：</translation>
        </message>
        <message>
            <source>What the tuning items say about {key}</source>
            <translation>调优条目对 {key} 的说明</translation>
        </message>
        <message>
            <source>set</source>
            <translation>设置</translation>
        </message>
    </context>
    <context>
        <name>TuningTab</name>
        <message>
            <source>“{name}” is built in and cannot be changed. Make a copy of it and add {key} to the copy?</source>
            <translation>“{name}”是内置预设，无法修改。要复制一份并把 {key} 添加到副本中吗？</translation>
        </message>
        <message>
            <source>The presets are busy: ask to add the setting again in a moment.</source>
            <translation>预设正忙：请稍后再添加该设置。</translation>
        </message>
        <message>
            <source>&amp;Presets</source>
            <translation>预设(&amp;P)</translation>
        </message>
        <message>
            <source>&amp;Items: what each setting really does</source>
            <translation>条目：各项设置的真实作用(&amp;I)</translation>
        </message>
        <message>
            <source>A/B benchmar&amp;k</source>
            <translation>A/B 基准测试(&amp;K)</translation>
        </message>
        <message>
            <source>Built-in preset</source>
            <translation>内置预设</translation>
        </message>
    </context>
    <context>
        <name>bench</name>
        <message>
            <source>The chat workload needs a model folder: choose a model in the Chat tab, or pass --model DIR to `rocmpanel bench`.</source>
            <extracomment>Where a run may go: the GPU when torch sees one, the CPU, or the GPU ("cuda" is torch's device type for it on ROCm too: docs.pytorch.org notes/hip.html, "HIP Interfaces Reuse the CUDA Interfaces"). The CLI also takes "gpu" for "cuda", as ``chat --device`` does. The one text for a chat benchmark without a model (the CLI and the tab show it; the worker's copy in workers/bench.py says the same, tested).</extracomment>
            <translation>对话工作负载需要模型文件夹：请在“对话”标签页中选择模型，或向 `rocmpanel bench` 传入 --model DIR。</translation>
        </message>
        <message>
            <source>Unknown benchmark workload {workload}; choose one of {known}.</source>
            <translation>未知的基准测试工作负载 {workload}；请从 {known} 中选择。</translation>
        </message>
        <message>
            <source>{reps} repetitions cannot be run: choose {low} to {high} (the spread needs at least 2 runs of each side).</source>
            <translation>无法运行 {reps} 次重复：请选择 {low} 到 {high}（计算离散范围需要每一方至少运行 2 次）。</translation>
        </message>
        <message>
            <source>Both sides of an A/B benchmark need a preset (or "none").</source>
            <translation>A/B 基准测试的双方都需要一个预设（或 "none"）。</translation>
        </message>
        <message>
            <source>Unknown device {device}; choose auto, cpu or cuda.</source>
            <translation>未知设备 {device}；请选择 auto、cpu 或 cuda。</translation>
        </message>
    </context>
    <context>
        <name>bench_chart</name>
        <message>
            <source>device unknown</source>
            <extracomment>The colours of side A and side B (the monitor's first two, so the panel looks one).</extracomment>
            <translation>设备未知</translation>
        </message>
        <message>
            <source>{unit}, higher is better — {device}</source>
            <translation>{unit}，越高越好 — {device}</translation>
        </message>
        <message>
            <source>{unit}, lower is better — {device}</source>
            <translation>{unit}，越低越好 — {device}</translation>
        </message>
    </context>
    <context>
        <name>bench_store</name>
        <message>
            <source>The benchmark result was not saved: no case was measured on both sides, so there is nothing to compare. The run's errors say what stopped it.</source>
            <extracomment>"B faster by 12 %" | "B 3.2× as fast" (above 2×) | "A faster by …" | "no measurable difference" | "too few runs to name a winner (N per side; 5 needed)" (bench_stats.verdict) One record per finished worker run: side ("A"/"B"), run number, the preset the worker reported (``{"id", "name"}`` or None), its preset settings and extras.</extracomment>
            <translation>基准测试结果未保存：没有任何用例在双方都测得，因此无从比较。运行的错误信息说明了中止原因。</translation>
        </message>
        <message>
            <source>The benchmark result was not saved</source>
            <translation>基准测试结果未保存</translation>
        </message>
        <message>
            <source>{name} cannot be written: a benchmark exports as .json or .csv.</source>
            <extracomment>A saved result is a few KiB (50 runs a side with their preset records stay far below 1 MiB); a bigger file is not one the panel wrote.</extracomment>
            <translation>无法写入 {name}：基准测试只能导出为 .json 或 .csv。</translation>
        </message>
        <message>
            <source>{path} cannot be written: the folder {folder} does not exist. Create it first, or choose a file in a folder that exists.</source>
            <translation>无法写入 {path}：文件夹 {folder} 不存在。请先创建它，或选择已存在的文件夹中的文件。</translation>
        </message>
        <message>
            <source>{path} cannot be written: it is a folder. Give a file name.</source>
            <translation>无法写入 {path}：它是一个文件夹。请给出文件名。</translation>
        </message>
    </context>
    <context>
        <name>bench_table</name>
        <message>
            <source>No measurable difference</source>
            <translation>无可测量的差异</translation>
        </message>
        <message>
            <source>Too few runs to name a winner ({runs} per side; {needed} needed)</source>
            <translation>运行次数太少，无法判定优胜方（每方 {runs} 次；需要 {needed} 次）</translation>
        </message>
        <message>
            <source>Too few runs to name a winner ({a} of A, {b} of B; {needed} needed)</source>
            <translation>运行次数太少，无法判定优胜方（A {a} 次，B {b} 次；需要 {needed} 次）</translation>
        </message>
        <message>
            <source>{side} {times}× as fast</source>
            <translation>{side} 速度为对方的 {times} 倍</translation>
        </message>
        <message>
            <source>{side} {times}× better</source>
            <translation>{side} 为对方的 {times} 倍（更优）</translation>
        </message>
        <message>
            <source>{side} faster by {percent} %</source>
            <translation>{side} 快 {percent} %</translation>
        </message>
        <message>
            <source>{side} better by {percent} %</source>
            <translation>{side} 优 {percent} %</translation>
        </message>
        <message>
            <source>SDPA attention</source>
            <translation>SDPA 注意力</translation>
        </message>
        <message>
            <source>Allocation churn</source>
            <translation>频繁分配释放</translation>
        </message>
        <message>
            <source>Chat decode</source>
            <translation>对话解码</translation>
        </message>
        <message>
            <source>{a} run of A, {b} of B</source>
            <translation>A 运行 {a} 次，B 运行 {b} 次</translation>
        </message>
        <message>
            <source>{a} runs of A, {b} of B</source>
            <translation>A 运行 {a} 次，B 运行 {b} 次</translation>
        </message>
        <message>
            <source>an unknown device</source>
            <translation>未知设备</translation>
        </message>
        <message>
            <source>A: {a} vs B: {b} — {workload} on {device}, {runs}.</source>
            <translation>A：{a} 对比 B：{b} — {workload}，运行于 {device}，{runs}。</translation>
        </message>
        <message>
            <source>Nothing was measured on both sides.</source>
            <translation>没有任何内容在双方都测得。</translation>
        </message>
        <message>
            <source>No measurable difference in any case: the runs of A and B overlap.</source>
            <translation>所有用例均无可测量的差异：A 与 B 的运行结果范围重叠。</translation>
        </message>
        <message>
            <source>{when} {a} vs {b}, {workload}</source>
            <translation>{when} {a} 对比 {b}，{workload}</translation>
        </message>
        <message>
            <source>{when}: A {a} vs B {b}
{workload} on {device}</source>
            <translation>{when}：A {a} 对比 B {b}
{workload}，运行于 {device}</translation>
        </message>
    </context>
    <context>
        <name>items</name>
        <message>
            <source>The list of tuning items is missing.</source>
            <extracomment>A source written as a bare word is a key of the env catalogue's ``sources``.</extracomment>
            <translation>缺少调优条目列表。</translation>
        </message>
    </context>
    <context>
        <name>items_panel</name>
        <message>
            <source>A preset setting does what you want: {setting}</source>
            <extracomment>What a verdict says. "use" names the preset setting, never the snippet: an item titled "X is not what you think" must not read "Useful" (the snippet is not what is useful).</extracomment>
            <translation>有预设设置能实现你想要的效果：{setting}</translation>
        </message>
        <message>
            <source>Not useful on ROCm</source>
            <translation>在 ROCm 上无用</translation>
        </message>
        <message>
            <source>Use with care</source>
            <translation>谨慎使用</translation>
        </message>
        <message>
            <source>see below</source>
            <translation>见下文</translation>
        </message>
        <message>
            <source>The guide says</source>
            <translation>指南的说法</translation>
        </message>
        <message>
            <source>What it really does</source>
            <translation>实际作用</translation>
        </message>
        <message>
            <source>What to use instead</source>
            <translation>应改用</translation>
        </message>
        <message>
            <source>Verdict: {verdict}</source>
            <translation>结论：{verdict}</translation>
        </message>
        <message>
            <source>Snippet: {snippet}</source>
            <translation>代码片段：{snippet}</translation>
        </message>
        <message>
            <source>Sources: {sources}</source>
            <translation>来源：{sources}</translation>
        </message>
        <message>
            <source>Verdict</source>
            <translation>结论</translation>
        </message>
        <message>
            <source>Preset setting</source>
            <translation>预设设置</translation>
        </message>
        <message>
            <source>no AMD GPU</source>
            <translation>无 AMD GPU</translation>
        </message>
        <message>
            <source>Has an effect on</source>
            <translation>作用于</translation>
        </message>
        <message>
            <source>Torch</source>
            <translation>Torch</translation>
        </message>
        <message>
            <source>Sources</source>
            <translation>来源</translation>
        </message>
    </context>
    <context>
        <name>preset_details</name>
        <message>
            <source>{what}
Source: {source}</source>
            <translation>{what}
来源：{source}</translation>
        </message>
        <message>
            <source>torch: {key}</source>
            <translation>torch: {key}</translation>
        </message>
        <message>
            <source>{setting} = {value}: {what}
On this machine: {here}</source>
            <translation>{setting} = {value}：{what}
在本机上：{here}</translation>
        </message>
    </context>
    <context>
        <name>preset_editor</name>
        <message>
            <source>Reading the tuning items</source>
            <translation>读取调优条目</translation>
        </message>
    </context>
    <context>
        <name>presets_panel</name>
        <message>
            <source>{first} or {last}</source>
            <translation>{first} 或 {last}</translation>
        </message>
        <message>
            <source>Import a preset</source>
            <translation>导入预设</translation>
        </message>
        <message>
            <source>Preset files (*.yaml *.yml)</source>
            <translation>预设文件 (*.yaml *.yml)</translation>
        </message>
        <message>
            <source>Export a preset</source>
            <translation>导出预设</translation>
        </message>
        <message>
            <source>Preset files (*.yaml)</source>
            <translation>预设文件 (*.yaml)</translation>
        </message>
    </context>
</TS>
