<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
    <context>
        <name>AgoAxis</name>
        <message>
            <source>now</source>
            <translation>现在</translation>
        </message>
    </context>
    <context>
        <name>AlertMonitor</name>
        <message>
            <source>{gpu}: {sensor} temperature {temp} °C, crit limit {crit} °C</source>
            <translation>{gpu}：{sensor}温度 {temp} °C，临界值 {crit} °C</translation>
        </message>
        <message>
            <source>{gpu}: VRAM {percent} % full for {seconds} s ({used} of {total})</source>
            <translation>{gpu}：显存已用 {percent} % 持续 {seconds} 秒（{used} / {total}）</translation>
        </message>
        <message>
            <source>{gpu}: power at its cap ({power} of {cap} W) for {seconds} s</source>
            <translation>{gpu}：功耗达到上限（{power} / {cap} W）持续 {seconds} 秒</translation>
        </message>
    </context>
    <context>
        <name>AlertPanel</name>
        <message>
            <source>Alerts</source>
            <translation>警报</translation>
        </message>
        <message>
            <source>Alerts raised since the panel started (newest first)</source>
            <translation>面板启动以来触发的警报（最新的在前）</translation>
        </message>
        <message>
            <source>Alerts: none so far</source>
            <translation>警报：暂无</translation>
        </message>
        <message>
            <source>Alerts: {count}</source>
            <translation>警报：{count}</translation>
        </message>
        <message>
            <source>rocmpanel telemetry alerts</source>
            <translation>rocmpanel 遥测警报</translation>
        </message>
    </context>
    <context>
        <name>Capabilities</name>
        <message>
            <source>amdsmi</source>
            <translation>amdsmi</translation>
        </message>
        <message>
            <source>Windows PDH counters</source>
            <translation>Windows PDH 计数器</translation>
        </message>
        <message>
            <source>none</source>
            <translation>无</translation>
        </message>
        <message>
            <source>amdgpu sysfs</source>
            <translation>amdgpu sysfs</translation>
        </message>
    </context>
    <context>
        <name>GpuHeader</name>
        <message>
            <source>perf level {level}</source>
            <translation>性能级别 {level}</translation>
        </message>
        <message>
            <source>no data</source>
            <translation>无数据</translation>
        </message>
        <message>
            <source>asleep (not woken)</source>
            <translation>休眠（未唤醒）</translation>
        </message>
        <message>
            <source>active</source>
            <translation>活动</translation>
        </message>
        <message>
            <source>Busy {value}</source>
            <translation>繁忙 {value}</translation>
        </message>
        <message>
            <source>Mem bandwidth {value}</source>
            <translation>显存带宽 {value}</translation>
        </message>
        <message>
            <source>Power {value} / {cap}</source>
            <translation>功耗 {value} / {cap}</translation>
        </message>
        <message>
            <source>Fan {value}</source>
            <translation>风扇 {value}</translation>
        </message>
    </context>
    <context>
        <name>GpuPanel</name>
        <message>
            <source>Utilisation</source>
            <translation>利用率</translation>
        </message>
        <message>
            <source>GPU busy</source>
            <translation>GPU 繁忙</translation>
        </message>
        <message>
            <source>memory bandwidth</source>
            <translation>显存带宽</translation>
        </message>
        <message>
            <source>Memory</source>
            <translation>GPU 内存</translation>
        </message>
        <message>
            <source>Temperature</source>
            <translation>温度</translation>
        </message>
        <message>
            <source>edge</source>
            <translation>边缘</translation>
        </message>
        <message>
            <source>junction</source>
            <translation>热点</translation>
        </message>
        <message>
            <source>mem</source>
            <translation>显存</translation>
        </message>
        <message>
            <source>Power</source>
            <translation>功耗</translation>
        </message>
        <message>
            <source>power</source>
            <translation>功耗</translation>
        </message>
        <message>
            <source>Clocks</source>
            <translation>频率</translation>
        </message>
        <message>
            <source>Fan</source>
            <translation>风扇</translation>
        </message>
        <message>
            <source>fan</source>
            <translation>风扇</translation>
        </message>
        <message>
            <source>Wheel: scroll the GPU list. Ctrl+wheel, or click then wheel: zoom in time. Double click: the whole window.</source>
            <translation>滚轮：滚动 GPU 列表。Ctrl+滚轮，或先单击再滚动：缩放时间轴。双击：显示整个时间窗口。</translation>
        </message>
        <message>
            <source>Move the mouse over a plot to read values.</source>
            <translation>将鼠标移到图上即可读取数值。</translation>
        </message>
        <message>
            <source>not reported by this GPU</source>
            <translation>此 GPU 不报告该项</translation>
        </message>
        <message>
            <source>No data yet.</source>
            <translation>尚无数据。</translation>
        </message>
    </context>
    <context>
        <name>GpuRoster</name>
        <message>
            <source>Looking for GPUs…</source>
            <translation>正在查找 GPU…</translation>
        </message>
        <message>
            <source>No AMD GPU found.</source>
            <translation>未找到 AMD GPU。</translation>
        </message>
        <message>
            <source>{reason} Host telemetry is still shown above.</source>
            <translation>{reason} 上方仍显示主机遥测。</translation>
        </message>
    </context>
    <context>
        <name>HostStrip</name>
        <message>
            <source>Host: waiting for the first sample…</source>
            <translation>主机：正在等待第一个采样…</translation>
        </message>
        <message>
            <source>CPU % (red) and RAM % (blue) over the selected time window</source>
            <translation>所选时间窗口内的 CPU %（红）和内存 %（蓝）</translation>
        </message>
        <message>
            <source>&lt;b&gt;Host&lt;/b&gt;  CPU {cpu}  &lt;span style='color:gray'&gt;(cores: {cores})&lt;/span&gt;   RAM {ram_used} / {ram_total}   swap {swap_used} / {swap_total}   load {load}</source>
            <translation>&lt;b&gt;主机&lt;/b&gt;  CPU {cpu}  &lt;span style='color:gray'&gt;（各核：{cores}）&lt;/span&gt;   内存 {ram_used} / {ram_total}   交换 {swap_used} / {swap_total}   负载 {load}</translation>
        </message>
    </context>
    <context>
        <name>LazyHistory</name>
        <message>
            <source>Loading the telemetry history</source>
            <translation>加载遥测历史</translation>
        </message>
    </context>
    <context>
        <name>MonitorTab</name>
        <message>
            <source>The Monitor reads AMD GPUs through Windows' GPU performance counters. None is listed when the machine has no AMD GPU, the AMD graphics driver is not installed, or the counters cannot be read (the reason above says which).</source>
            <translation>监控通过 Windows 的 GPU 性能计数器读取 AMD GPU。如果本机没有 AMD GPU、未安装 AMD 显卡驱动，或无法读取计数器（上面的原因会说明是哪一种），则不会列出任何 GPU。</translation>
        </message>
        <message>
            <source>The Monitor looks for GPUs driven by the amdgpu kernel driver under {folder}. None is there when the machine has no AMD GPU, the amdgpu driver is not loaded, or this is a virtual machine or container without the GPU passed through.</source>
            <translation>监控在 {folder} 下查找由 amdgpu 内核驱动驱动的 GPU。如果本机没有 AMD GPU、未加载 amdgpu 驱动，或这是未直通 GPU 的虚拟机或容器，则那里不会有 GPU。</translation>
        </message>
        <message>
            <source>Still working: host CPU and memory telemetry above, and the Setup tab's checklist.</source>
            <translation>仍可使用：上方的主机 CPU 和内存遥测，以及“环境检测”标签页的检查清单。</translation>
        </message>
        <message>
            <source>Show a &amp;demo</source>
            <translation>显示演示(&amp;D)</translation>
        </message>
        <message>
            <source>Open a second window that runs rocmpanel on recorded GPUs with a replayed workload; this machine's settings stay as they are</source>
            <translation>打开第二个窗口，在录制的 GPU 上以回放的工作负载运行 rocmpanel；本机的设置保持不变</translation>
        </message>
        <message>
            <source>Processes using a GPU (yours only)</source>
            <translation>使用 GPU 的进程（仅限你的）</translation>
        </message>
        <message>
            <source>Monitor pages</source>
            <translation>监控页面</translation>
        </message>
        <message>
            <source>This &amp;machine</source>
            <translation>本机(&amp;M)</translation>
        </message>
        <message>
            <source>&amp;Nodes</source>
            <translation>节点(&amp;N)</translation>
        </message>
        <message>
            <source>live</source>
            <translation>实时</translation>
        </message>
        <message>
            <source>{count} GPU(s) · {source} · {where}</source>
            <translation>{count} 个 GPU · {source} · {where}</translation>
        </message>
        <message>
            <source>Replaying the demo's past minutes</source>
            <translation>回放演示的过去几分钟</translation>
        </message>
        <message>
            <source>Processes using a GPU (all users): {count}</source>
            <translation>使用 GPU 的进程（所有用户）：{count}</translation>
        </message>
        <message>
            <source>Processes using a GPU (all users): none right now</source>
            <translation>使用 GPU 的进程（所有用户）：当前没有</translation>
        </message>
        <message>
            <source>Processes using a GPU (yours only): {count}</source>
            <translation>使用 GPU 的进程（仅限你的）：{count}</translation>
        </message>
        <message>
            <source>Processes using a GPU (yours only): none right now</source>
            <translation>使用 GPU 的进程（仅限你的）：当前没有</translation>
        </message>
        <message>
            <source>Reading telemetry</source>
            <translation>读取遥测</translation>
        </message>
        <message>
            <source>Saving the sampling interval</source>
            <translation>保存采样间隔</translation>
        </message>
        <message>
            <source>Exporting telemetry</source>
            <translation>导出遥测</translation>
        </message>
        <message>
            <source>Exported {rows} rows of telemetry to {path}</source>
            <translation>已将 {rows} 行遥测导出到 {path}</translation>
        </message>
    </context>
    <context>
        <name>MonitorToolbar</name>
        <message>
            <source>1 min</source>
            <translation>1 分钟</translation>
        </message>
        <message>
            <source>10 min</source>
            <translation>10 分钟</translation>
        </message>
        <message>
            <source>1 h</source>
            <translation>1 小时</translation>
        </message>
        <message>
            <source>24 h</source>
            <translation>24 小时</translation>
        </message>
        <message>
            <source>&amp;Window:</source>
            <translation>时间窗口(&amp;W)：</translation>
        </message>
        <message>
            <source>How much history the plots show</source>
            <translation>图表显示多长时间的历史</translation>
        </message>
        <message>
            <source>&amp;Pause</source>
            <translation>暂停(&amp;P)</translation>
        </message>
        <message>
            <source>Freeze the plots; sampling and alerts go on</source>
            <translation>冻结图表；采样和警报继续进行</translation>
        </message>
        <message>
            <source>&amp;Export CSV…</source>
            <translation>导出 CSV(&amp;E)…</translation>
        </message>
        <message>
            <source>Last {window}</source>
            <translation>最近 {window}</translation>
        </message>
        <message>
            <source>&amp;Interval:</source>
            <translation>间隔(&amp;I)：</translation>
        </message>
        <message>
            <source>How often the Monitor reads the GPUs (slower while the window is hidden)</source>
            <translation>监控读取 GPU 的频率（窗口隐藏时会放慢）</translation>
        </message>
        <message>
            <source>&amp;Resume</source>
            <translation>继续(&amp;R)</translation>
        </message>
        <message>
            <source>Export telemetry as CSV</source>
            <translation>将遥测导出为 CSV</translation>
        </message>
        <message>
            <source>CSV files</source>
            <translation>CSV 文件</translation>
        </message>
    </context>
    <context>
        <name>NodeStatus</name>
        <message>
            <source>waiting for the first answer</source>
            <translation>正在等待首次应答</translation>
        </message>
        <message>
            <source>up ({source})</source>
            <translation>在线（{source}）</translation>
        </message>
        <message>
            <source>up</source>
            <translation>在线</translation>
        </message>
        <message>
            <source>down since {time}: {error}</source>
            <translation>自 {time} 起离线：{error}</translation>
        </message>
    </context>
    <context>
        <name>NodesView</name>
        <message>
            <source>Node</source>
            <translation>节点</translation>
        </message>
        <message>
            <source>GPU</source>
            <translation>GPU</translation>
        </message>
        <message>
            <source>State</source>
            <translation>状态</translation>
        </message>
        <message>
            <source>Utilisation</source>
            <translation>利用率</translation>
        </message>
        <message>
            <source>VRAM used / total</source>
            <translation>显存已用 / 总计</translation>
        </message>
        <message>
            <source>Temperature</source>
            <translation>温度</translation>
        </message>
        <message>
            <source>Power</source>
            <translation>功耗</translation>
        </message>
        <message>
            <source>ECC corr. / uncorr.</source>
            <translation>ECC 已纠正 / 未纠正</translation>
        </message>
        <message>
            <source>up</source>
            <translation>在线</translation>
        </message>
        <message>
            <source>up, UNHEALTHY (exporter's health check)</source>
            <translation>在线，不健康（导出器的健康检查）</translation>
        </message>
        <message>
            <source>Other machines' GPUs, read every {seconds} s from their Prometheus pages: AMD's GPU metrics exporter (http://HOST:5000/metrics) or 'rocmpanel telemetry --prometheus HOST:9400' (no AMD GPU needed here).</source>
            <translation>其他机器的 GPU，每 {seconds} 秒从其 Prometheus 页面读取一次：AMD 的 GPU 指标导出器（http://HOST:5000/metrics）或 'rocmpanel telemetry --prometheus HOST:9400'（本机无需 AMD GPU）。</translation>
        </message>
        <message>
            <source>Node URL</source>
            <translation>节点 URL</translation>
        </message>
        <message>
            <source>name (optional)</source>
            <translation>名称（可选）</translation>
        </message>
        <message>
            <source>Node name</source>
            <translation>节点名称</translation>
        </message>
        <message>
            <source>API key (optional)</source>
            <translation>API 密钥（可选）</translation>
        </message>
        <message>
            <source>Node API key</source>
            <translation>节点 API 密钥</translation>
        </message>
        <message>
            <source>&amp;Add node</source>
            <translation>添加节点(&amp;A)</translation>
        </message>
        <message>
            <source>&amp;Remove node</source>
            <translation>移除节点(&amp;R)</translation>
        </message>
        <message>
            <source>Remove the node of the selected row from the list</source>
            <translation>从列表中移除所选行的节点</translation>
        </message>
        <message>
            <source>Read no&amp;w</source>
            <translation>立即读取(&amp;W)</translation>
        </message>
        <message>
            <source>&amp;URL:</source>
            <translation>URL(&amp;U)：</translation>
        </message>
        <message>
            <source>Keys are saved with the list in {path}, readable only by you (mode 0600); they are sent only to their own node.</source>
            <translation>密钥随列表保存在 {path} 中，仅你可读（权限 0600）；密钥只会发送给各自的节点。</translation>
        </message>
        <message>
            <source>Nodes status</source>
            <translation>节点状态</translation>
        </message>
        <message>
            <source>ECC errors: corrected / uncorrected</source>
            <translation>ECC 错误：已纠正 / 未纠正</translation>
        </message>
        <message>
            <source>Nodes and their GPUs</source>
            <translation>节点及其 GPU</translation>
        </message>
        <message>
            <source>Select a GPU in the table to see its history.</source>
            <translation>在表格中选择一个 GPU 以查看其历史。</translation>
        </message>
        <message>
            <source>Reading the node list</source>
            <translation>读取节点列表</translation>
        </message>
        <message>
            <source>A node named {name} is already in the list: give another name.</source>
            <translation>列表中已有名为 {name} 的节点：请换一个名称。</translation>
        </message>
        <message>
            <source>The key holds characters that cannot go in an HTTP header.</source>
            <translation>密钥包含不能放入 HTTP 头的字符。</translation>
        </message>
        <message>
            <source>Added {name}; reading it…</source>
            <translation>已添加 {name}；正在读取…</translation>
        </message>
        <message>
            <source>Select a row of the node to remove first.</source>
            <translation>请先选择要移除的节点所在的行。</translation>
        </message>
        <message>
            <source>Removed {name}.</source>
            <translation>已移除 {name}。</translation>
        </message>
        <message>
            <source>Saving the node list</source>
            <translation>保存节点列表</translation>
        </message>
        <message>
            <source>Reading the other nodes</source>
            <translation>读取其他节点</translation>
        </message>
        <message>
            <source>Added {name}: 1 GPU read.</source>
            <translation>已添加 {name}：读取到 1 个 GPU。</translation>
        </message>
        <message>
            <source>Added {name}: {count} GPUs read.</source>
            <translation>已添加 {name}：读取到 {count} 个 GPU。</translation>
        </message>
        <message>
            <source>Added {name}, but it does not answer: {error}</source>
            <translation>已添加 {name}，但它没有应答：{error}</translation>
        </message>
        <message>
            <source>No node yet: add one above.</source>
            <translation>还没有节点：请在上方添加。</translation>
        </message>
    </context>
    <context>
        <name>NullGpuSource</name>
        <message>
            <source>No AMD GPU found.</source>
            <translation>未找到 AMD GPU。</translation>
        </message>
    </context>
    <context>
        <name>PdhGpuSource</name>
        <message>
            <source>no data: {error}</source>
            <translation>无数据：{error}</translation>
        </message>
    </context>
    <context>
        <name>PdhQuery</name>
        <message>
            <source>Windows GPU counters stopped answering: {error}.</source>
            <translation>Windows GPU 计数器停止响应：{error}。</translation>
        </message>
    </context>
    <context>
        <name>ProcessModel</name>
        <message>
            <source>PID</source>
            <translation>PID</translation>
        </message>
        <message>
            <source>Process</source>
            <translation>进程</translation>
        </message>
        <message>
            <source>GPU</source>
            <translation>GPU</translation>
        </message>
        <message>
            <source>VRAM</source>
            <translation>显存</translation>
        </message>
        <message>
            <source>GTT</source>
            <translation>GTT</translation>
        </message>
        <message>
            <source>Engine %</source>
            <translation>引擎 %</translation>
        </message>
        <message>
            <source>Source</source>
            <translation>来源</translation>
        </message>
        <message>
            <source>no engine counters</source>
            <translation>无引擎计数器</translation>
        </message>
        <message>
            <source>{name} (pid {pid}): {engines}</source>
            <translation>{name}（pid {pid}）：{engines}</translation>
        </message>
        <message>
            <source>{name}  [rocmpanel job: {job}]</source>
            <translation>{name}  [rocmpanel 任务：{job}]</translation>
        </message>
    </context>
    <context>
        <name>ProcessTable</name>
        <message>
            <source>GPU processes</source>
            <translation>GPU 进程</translation>
        </message>
    </context>
    <context>
        <name>RemoteNode</name>
        <message>
            <source>no answer</source>
            <translation>无应答</translation>
        </message>
    </context>
    <context>
        <name>SamplerThread</name>
        <message>
            <source>Telemetry could not start: {error}</source>
            <translation>遥测无法启动：{error}</translation>
        </message>
        <message>
            <source>Telemetry is not running.</source>
            <translation>遥测未运行。</translation>
        </message>
        <message>
            <source>The GPUs could not be opened: {error}</source>
            <translation>无法打开 GPU：{error}</translation>
        </message>
    </context>
    <context>
        <name>alerts</name>
        <message>
            <source>edge</source>
            <translation>边缘</translation>
        </message>
        <message>
            <source>junction</source>
            <translation>热点</translation>
        </message>
        <message>
            <source>mem</source>
            <translation>显存</translation>
        </message>
    </context>
    <context>
        <name>nodes</name>
        <message>
            <source>The node list was not saved</source>
            <translation>节点列表未保存</translation>
        </message>
        <message>
            <source>{url} is not a URL: {error}.</source>
            <translation>{url} 不是 URL：{error}。</translation>
        </message>
        <message>
            <source>{url} is not an http:// or https:// URL.</source>
            <translation>{url} 不是 http:// 或 https:// URL。</translation>
        </message>
        <message>
            <source>{url} names no host; give one, as in http://node1:5000/metrics.</source>
            <translation>{url} 没有指定主机；请给出主机，例如 http://node1:5000/metrics。</translation>
        </message>
        <message>
            <source>Put the key in the key field, not in the URL.</source>
            <translation>请把密钥填在密钥栏中，而不是 URL 里。</translation>
        </message>
        <message>
            <source>{url}: port 0 cannot be reached.</source>
            <translation>{url}：无法连接端口 0。</translation>
        </message>
        <message>
            <source>The node redirects to another address ({address}); give that address instead.</source>
            <translation>节点重定向到另一个地址（{address}）；请改用该地址。</translation>
        </message>
        <message>
            <source>The node sends its page too slowly (timed out).</source>
            <translation>节点发送页面太慢（超时）。</translation>
        </message>
        <message>
            <source>The page is larger than {size} MiB; a GPU metrics page is far smaller, so this is not one.</source>
            <translation>页面大于 {size} MiB；GPU 指标页面要小得多，所以这不是指标页面。</translation>
        </message>
        <message>
            <source>The node refused the key (HTTP {code}).</source>
            <translation>节点拒绝了该密钥（HTTP {code}）。</translation>
        </message>
        <message>
            <source>The node needs its API key (HTTP {code}).</source>
            <translation>节点需要 API 密钥（HTTP {code}）。</translation>
        </message>
        <message>
            <source>Nothing at that path (HTTP 404): the metrics are usually at /metrics.</source>
            <translation>该路径下没有内容（HTTP 404）：指标通常位于 /metrics。</translation>
        </message>
        <message>
            <source>The node answered HTTP {code}.</source>
            <translation>节点返回 HTTP {code}。</translation>
        </message>
        <message>
            <source>{host} refused the connection (nothing listens on that port).</source>
            <translation>{host} 拒绝了连接（该端口上没有程序在监听）。</translation>
        </message>
        <message>
            <source>{host} did not answer within {seconds} s.</source>
            <translation>{host} 在 {seconds} 秒内没有应答。</translation>
        </message>
        <message>
            <source>The host name in {host} is not known.</source>
            <translation>{host} 中的主机名无法解析。</translation>
        </message>
        <message>
            <source>The TLS connection to {host} failed ({error}).</source>
            <translation>与 {host} 的 TLS 连接失败（{error}）。</translation>
        </message>
        <message>
            <source>{host} cannot be reached ({error}).</source>
            <translation>无法连接 {host}（{error}）。</translation>
        </message>
        <message>
            <source>{host} cannot be read ({error}).</source>
            <translation>无法读取 {host}（{error}）。</translation>
        </message>
        <message>
            <source>Reading the node failed: {error}</source>
            <translation>读取节点失败：{error}</translation>
        </message>
        <message>
            <source>The node list {path} cannot be read ({why}) nor moved aside ({error}).</source>
            <translation>节点列表 {path} 无法读取（{why}），也无法移到一旁（{error}）。</translation>
        </message>
        <message>
            <source>The node list {path} could not be read ({why}); it was kept as {name}.</source>
            <translation>无法读取节点列表 {path}（{why}）；已将其另存为 {name}。</translation>
        </message>
    </context>
    <context>
        <name>pdh_source</name>
        <message>
            <source>Not shown: {adapters} (integrated; a discrete AMD GPU is present).</source>
            <translation>未显示：{adapters}（集成 GPU；本机有独立 AMD GPU）。</translation>
        </message>
    </context>
    <context>
        <name>prometheus_read</name>
        <message>
            <source>The page is not Prometheus metrics (it looks like an HTML page).</source>
            <translation>该页面不是 Prometheus 指标（看起来是 HTML 页面）。</translation>
        </message>
        <message>
            <source>The page is not Prometheus metrics (it looks like JSON).</source>
            <translation>该页面不是 Prometheus 指标（看起来是 JSON）。</translation>
        </message>
        <message>
            <source>The page is not Prometheus metrics (it looks like text).</source>
            <translation>该页面不是 Prometheus 指标（看起来是普通文本）。</translation>
        </message>
        <message>
            <source>The page is larger than {size} MiB; a metrics page of a few GPUs is a few hundred KiB, so this is not one.</source>
            <translation>页面大于 {size} MiB；几个 GPU 的指标页面只有几百 KiB，所以这不是指标页面。</translation>
        </message>
        <message>
            <source>The page is not UTF-8 text.</source>
            <translation>该页面不是 UTF-8 文本。</translation>
        </message>
        <message>
            <source>The page could not be read ({error}).</source>
            <translation>无法读取该页面（{error}）。</translation>
        </message>
        <message>
            <source>The node runs rocmpanel but has no AMD GPU to report (its Monitor says why).</source>
            <translation>该节点运行着 rocmpanel，但没有可报告的 AMD GPU（其“监控”标签页会说明原因）。</translation>
        </message>
        <message>
            <source>The page is Prometheus metrics but has no GPU metrics of AMD's GPU metrics exporter or of rocmpanel on it (is it the right port?).</source>
            <translation>该页面是 Prometheus 指标，但其中没有 AMD GPU 指标导出器或 rocmpanel 的 GPU 指标（端口是否正确？）。</translation>
        </message>
    </context>
    <context>
        <name>source_factory</name>
        <message>
            <source>Windows GPU counters need the pywin32 package, which is missing: run `{python} -m pip install pywin32` (or reinstall rocmpanel), then restart the panel.</source>
            <translation>Windows GPU 计数器需要 pywin32 包，但它缺失：请运行 `{python} -m pip install pywin32`（或重新安装 rocmpanel），然后重启面板。</translation>
        </message>
        <message>
            <source>Windows GPU counters need the pywin32 package, which could not be loaded ({error}): run `{python} -m pip install --force-reinstall pywin32`, then restart the panel.</source>
            <translation>Windows GPU 计数器需要 pywin32 包，但它无法加载（{error}）：请运行 `{python} -m pip install --force-reinstall pywin32`，然后重启面板。</translation>
        </message>
        <message>
            <source>Windows GPU counters (PDH) could not be opened: {error}. They need Windows 10 version 1709 or later and a WDDM 2.0 display driver: update Windows and the AMD graphics driver. If both are current, Windows' counter registry may be damaged: `lodctr /R` in an administrator terminal rebuilds it.</source>
            <translation>无法打开 Windows GPU 计数器（PDH）：{error}。它们需要 Windows 10 1709 或更高版本以及 WDDM 2.0 显示驱动：请更新 Windows 和 AMD 显卡驱动。如果两者都是最新的，Windows 的计数器注册表可能已损坏：在管理员终端中运行 `lodctr /R` 可重建它。</translation>
        </message>
        <message>
            <source>GPU names and VRAM totals are not available (DXGI: {error}): every display adapter Windows lists is shown, named by its adapter id (LUID).</source>
            <translation>无法获取 GPU 名称和显存总量（DXGI：{error}）：将显示 Windows 列出的所有显示适配器，并以适配器 ID（LUID）命名。</translation>
        </message>
        <message>
            <source>none</source>
            <translation>无</translation>
        </message>
        <message>
            <source>No AMD GPU found: Windows lists these display adapters: {adapters}.</source>
            <translation>未找到 AMD GPU：Windows 列出的显示适配器为：{adapters}。</translation>
        </message>
        <message>
            <source>No amdgpu device in sysfs for {gpus} (is the amdgpu driver bound?).</source>
            <translation>sysfs 中没有 {gpus} 的 amdgpu 设备（amdgpu 驱动是否已绑定？）。</translation>
        </message>
        <message>
            <source>No AMD GPU found: the machine detection lists none.</source>
            <translation>未找到 AMD GPU：机器检测没有列出任何 GPU。</translation>
        </message>
        <message>
            <source>No AMD GPU found: no amdgpu device under {folder}.</source>
            <translation>未找到 AMD GPU：{folder} 下没有 amdgpu 设备。</translation>
        </message>
    </context>
</TS>
