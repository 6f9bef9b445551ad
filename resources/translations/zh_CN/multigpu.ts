<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
    <context>
        <name>BandwidthChart</name>
        <message>
            <source>Bandwidth per size chart</source>
            <translation>各大小带宽图</translation>
        </message>
        <message>
            <source>bandwidth</source>
            <translation>带宽</translation>
        </message>
        <message>
            <source>size</source>
            <translation>大小</translation>
        </message>
    </context>
    <context>
        <name>Cause</name>
        <message>
            <source>The all-reduce returned wrong data: the sum arrived damaged between the GPUs.</source>
            <translation>all-reduce 返回了错误数据：求和结果在 GPU 之间传输时损坏。</translation>
        </message>
        <message>
            <source>This is a hardware or driver fault, not a setting: run it again; if it repeats, test the GPUs in pairs to find the one (or the link) at fault, and check dmesg for PCIe errors.</source>
            <translation>这是硬件或驱动故障，不是设置问题：请再运行一次；如果再次出现，请两两测试 GPU 以找出有问题的 GPU（或链路），并在 dmesg 中检查 PCIe 错误。</translation>
        </message>
        <message>
            <source>The GPUs cannot reach each other's memory directly (no peer access).</source>
            <translation>GPU 之间无法直接访问彼此的显存（没有对等访问）。</translation>
        </message>
        <message>
            <source>Enable Above 4G decoding and Resizable BAR (large BAR) in the firmware setup; set the IOMMU to passthrough (kernel parameter iommu=pt) or turn it off; on ROCm before 5.7 set HSA_FORCE_FINE_GRAIN_PCIE=1 for the job. NCCL_P2P_DISABLE=1 runs without peer access, slower.</source>
            <translation>在固件设置中启用 Above 4G decoding 和 Resizable BAR（大 BAR）；将 IOMMU 设为直通（内核参数 iommu=pt）或将其关闭；ROCm 5.7 之前的版本请为任务设置 HSA_FORCE_FINE_GRAIN_PCIE=1。NCCL_P2P_DISABLE=1 可在没有对等访问的情况下运行，但较慢。</translation>
        </message>
        <message>
            <source>The network interface named for the collective does not exist on this machine.</source>
            <translation>为集合通信指定的网络接口在本机上不存在。</translation>
        </message>
        <message>
            <source>Unset GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME in the panel's job variables, or name an interface `ip link` lists (on one machine: lo).</source>
            <translation>在面板的任务变量中取消设置 GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME，或指定 `ip link` 列出的接口（单机时：lo）。</translation>
        </message>
        <message>
            <source>Another process holds the rendezvous port.</source>
            <translation>另一个进程占用了 rendezvous 端口。</translation>
        </message>
        <message>
            <source>Close the other distributed job (an earlier torchrun still running?) or let torchrun pick a free port (--standalone, as rocmpanel does); check MASTER_PORT.</source>
            <translation>关闭另一个分布式任务（之前的 torchrun 仍在运行？），或让 torchrun 自行选择空闲端口（--standalone，rocmpanel 就是这样做的）；检查 MASTER_PORT。</translation>
        </message>
        <message>
            <source>The processes could not reach the rendezvous port.</source>
            <translation>进程无法连接到 rendezvous 端口。</translation>
        </message>
        <message>
            <source>A firewall blocks it, or MASTER_ADDR names another machine: allow local TCP connections (loopback) and unset MASTER_ADDR / MASTER_PORT for the panel's jobs.</source>
            <translation>防火墙阻止了它，或 MASTER_ADDR 指向另一台机器：请允许本地 TCP 连接（回环），并为面板的任务取消设置 MASTER_ADDR / MASTER_PORT。</translation>
        </message>
        <message>
            <source>Not every process joined the collective in time.</source>
            <translation>并非所有进程都及时加入了集合通信。</translation>
        </message>
        <message>
            <source>One failed to start or is stuck (see the job's log): check that every chosen GPU works on its own (PyTorch tab, Validate) and that no other job holds it.</source>
            <translation>某个进程启动失败或卡住了（见任务日志）：请检查每个所选 GPU 单独都能工作（“PyTorch”标签页中的验证），并且没有其他任务占用它。</translation>
        </message>
        <message>
            <source>Out of memory during the all-reduce.</source>
            <translation>all-reduce 期间内存不足。</translation>
        </message>
        <message>
            <source>Lower the largest size (--max-size), or close other programs that use the GPU or the RAM.</source>
            <translation>减小最大大小（--max-size），或关闭其他占用 GPU 或内存的程序。</translation>
        </message>
        <message>
            <source>Only one process ran: an all-reduce needs at least 2.</source>
            <translation>只运行了一个进程：all-reduce 至少需要 2 个。</translation>
        </message>
        <message>
            <source>Choose two or more GPUs, or run it on the CPU with 2 or more processes.</source>
            <translation>请选择两个或更多 GPU，或在 CPU 上以 2 个或更多进程运行。</translation>
        </message>
        <message>
            <source>This PyTorch has no RCCL backend.</source>
            <translation>此 PyTorch 没有 RCCL 后端。</translation>
        </message>
        <message>
            <source>Install a ROCm build of PyTorch in the PyTorch tab, or test on the CPU (gloo).</source>
            <translation>请在“PyTorch”标签页安装 ROCm 版 PyTorch，或在 CPU 上测试（gloo）。</translation>
        </message>
        <message>
            <source>torch in the workload Python does not see the chosen GPUs.</source>
            <translation>工作负载 Python 中的 torch 看不到所选的 GPU。</translation>
        </message>
        <message>
            <source>Validate the workload Python in the PyTorch tab (a ROCm build, /dev/kfd access), or test on the CPU.</source>
            <translation>请在“PyTorch”标签页验证工作负载 Python（ROCm 版本、/dev/kfd 访问权限），或在 CPU 上测试。</translation>
        </message>
        <message>
            <source>This PyTorch was built without torch.distributed.</source>
            <translation>此 PyTorch 构建时未包含 torch.distributed。</translation>
        </message>
        <message>
            <source>Install an official PyTorch build (the PyTorch tab does) in the workload Python.</source>
            <translation>请在工作负载 Python 中安装官方 PyTorch 版本（“PyTorch”标签页可以完成）。</translation>
        </message>
        <message>
            <source>PyTorch is not installed in the workload Python.</source>
            <translation>工作负载 Python 中未安装 PyTorch。</translation>
        </message>
        <message>
            <source>Install it in the PyTorch tab, or pick another workload Python (--python).</source>
            <translation>请在“PyTorch”标签页安装它，或选择另一个工作负载 Python（--python）。</translation>
        </message>
    </context>
    <context>
        <name>CollectivePanel</name>
        <message>
            <source>Size</source>
            <translation>大小</translation>
        </message>
        <message>
            <source>Count</source>
            <translation>元素数</translation>
        </message>
        <message>
            <source>Time (µs)</source>
            <translation>时间（µs）</translation>
        </message>
        <message>
            <source>algbw (GB/s)</source>
            <translation>algbw（GB/s）</translation>
        </message>
        <message>
            <source>busbw (GB/s)</source>
            <translation>busbw（GB/s）</translation>
        </message>
        <message>
            <source>Looking for GPUs…</source>
            <translation>正在查找 GPU…</translation>
        </message>
        <message>
            <source>Where the test runs</source>
            <translation>测试运行位置</translation>
        </message>
        <message>
            <source>Smallest size</source>
            <translation>最小大小</translation>
        </message>
        <message>
            <source>Largest size</source>
            <translation>最大大小</translation>
        </message>
        <message>
            <source>Processes on the CPU</source>
            <translation>CPU 上的进程数</translation>
        </message>
        <message>
            <source>How many processes run the all-reduce on the CPU.</source>
            <translation>在 CPU 上运行 all-reduce 的进程数。</translation>
        </message>
        <message>
            <source>Run on the &amp;CPU (gloo)</source>
            <translation>在 CPU 上运行（gloo）(&amp;C)</translation>
        </message>
        <message>
            <source>Run on the CPU with gloo</source>
            <translation>使用 gloo 在 CPU 上运行</translation>
        </message>
        <message>
            <source>Test the all-reduce between CPU processes (gloo) instead of the chosen GPUs: checks torch.distributed itself when the GPUs fail.</source>
            <translation>在 CPU 进程之间（gloo）而不是所选 GPU 上测试 all-reduce：在 GPU 测试失败时检查 torch.distributed 本身。</translation>
        </message>
        <message>
            <source>&amp;Run</source>
            <translation>运行(&amp;R)</translation>
        </message>
        <message>
            <source>Run the collective test</source>
            <translation>运行集合通信测试</translation>
        </message>
        <message>
            <source>Cancel</source>
            <translation>取消</translation>
        </message>
        <message>
            <source>Cancel the collective test</source>
            <translation>取消集合通信测试</translation>
        </message>
        <message>
            <source>Sizes done</source>
            <translation>已完成的大小</translation>
        </message>
        <message>
            <source>%v of %m sizes</source>
            <translation>%v / %m 个大小</translation>
        </message>
        <message>
            <source>Why the test failed</source>
            <translation>测试失败的原因</translation>
        </message>
        <message>
            <source>Bandwidth per size</source>
            <translation>各大小的带宽</translation>
        </message>
        <message>
            <source>Saved collective runs</source>
            <translation>已保存的集合通信测试</translation>
        </message>
        <message>
            <source>Fro&amp;m:</source>
            <translation>从(&amp;M)：</translation>
        </message>
        <message>
            <source>T&amp;o:</source>
            <translation>到(&amp;O)：</translation>
        </message>
        <message>
            <source>&amp;Processes:</source>
            <translation>进程数(&amp;P)：</translation>
        </message>
        <message>
            <source>&amp;Saved runs:</source>
            <translation>已保存的运行(&amp;S)：</translation>
        </message>
        <message>
            <source>Reading the GPU choice</source>
            <translation>读取 GPU 选择</translation>
        </message>
        <message>
            <source>No AMD GPU: the test runs on the CPU with gloo and {procs} processes (figures are the CPU's, not a GPU's).</source>
            <translation>没有 AMD GPU：测试将使用 gloo 在 CPU 上以 {procs} 个进程运行（数据反映的是 CPU，而不是 GPU）。</translation>
        </message>
        <message>
            <source>The test runs on the CPU with gloo and {procs} processes, as chosen (figures are the CPU's, not those of {gpus}).</source>
            <translation>按所选，测试将使用 gloo 在 CPU 上以 {procs} 个进程运行（数据反映的是 CPU，而不是 {gpus}）。</translation>
        </message>
        <message>
            <source>Only one GPU is chosen ({gpus}): an all-reduce needs two or more. Choose more GPUs for the jobs, or run it on the CPU.</source>
            <translation>只选择了一个 GPU（{gpus}）：all-reduce 需要两个或更多。请为任务选择更多 GPU，或在 CPU 上运行。</translation>
        </message>
        <message>
            <source>Runs on {gpus}: RCCL, one process per GPU.</source>
            <translation>在 {gpus} 上运行：RCCL，每个 GPU 一个进程。</translation>
        </message>
        <message>
            <source>Listing the collective runs</source>
            <translation>列出集合通信测试</translation>
        </message>
        <message>
            <source>Starting the collective test</source>
            <translation>启动集合通信测试</translation>
        </message>
        <message>
            <source>Starting the processes…</source>
            <translation>正在启动进程…</translation>
        </message>
        <message>
            <source>Saving the collective run</source>
            <translation>保存集合通信测试</translation>
        </message>
        <message>
            <source>The test failed.</source>
            <translation>测试失败。</translation>
        </message>
    </context>
    <context>
        <name>CollectivePlan</name>
        <message>
            <source>No AMD GPU: running on the CPU with gloo and {procs} processes (figures are the CPU's, not a GPU's)</source>
            <extracomment>How long a whole run may take before the CLI gives up on it.</extracomment>
            <translation>没有 AMD GPU：使用 gloo 在 CPU 上以 {procs} 个进程运行（数据反映的是 CPU，而不是 GPU）</translation>
        </message>
        <message>
            <source>On the CPU with gloo and {procs} processes, as asked (figures are the CPU's, not a GPU's)</source>
            <translation>按要求使用 gloo 在 CPU 上以 {procs} 个进程运行（数据反映的是 CPU，而不是 GPU）</translation>
        </message>
        <message>
            <source>{count} GPUs</source>
            <translation>{count} 个 GPU</translation>
        </message>
        <message>
            <source>{gpus}, RCCL, {count} processes</source>
            <translation>{gpus}，RCCL，{count} 个进程</translation>
        </message>
    </context>
    <context>
        <name>LaunchPanel</name>
        <message>
            <source>No AMD GPU is visible: the scripts are still generated (one process per node); run them where the GPUs are, or on CPU with the gloo backend.</source>
            <translation>看不到 AMD GPU：仍会生成脚本（每个节点一个进程）；请在有 GPU 的机器上运行，或使用 gloo 后端在 CPU 上运行。</translation>
        </message>
        <message>
            <source>Run starts the single-node kind only; the others run on your cluster.</source>
            <translation>“运行”只启动单节点类型；其他类型请在你的集群上运行。</translation>
        </message>
        <message>
            <source>Training script</source>
            <translation>训练脚本</translation>
        </message>
        <message>
            <source>&amp;Browse…</source>
            <translation>浏览(&amp;B)…</translation>
        </message>
        <message>
            <source>Choose the training script</source>
            <translation>选择训练脚本</translation>
        </message>
        <message>
            <source>Script arguments</source>
            <translation>脚本参数</translation>
        </message>
        <message>
            <source>Launch kind</source>
            <translation>启动类型</translation>
        </message>
        <message>
            <source>Nodes</source>
            <translation>节点数</translation>
        </message>
        <message>
            <source>Processes per node</source>
            <translation>每节点进程数</translation>
        </message>
        <message>
            <source>One process per GPU; the default is the chosen GPUs' count.</source>
            <translation>每个 GPU 一个进程；默认值为所选 GPU 的数量。</translation>
        </message>
        <message>
            <source>Rendezvous endpoint</source>
            <translation>Rendezvous 端点</translation>
        </message>
        <message>
            <source>HOST:PORT of the c10d rendezvous, reachable from every node (Slurm uses the allocation's first node instead).</source>
            <translation>c10d rendezvous 的 HOST:PORT，必须能从每个节点访问（Slurm 改用分配中的第一个节点）。</translation>
        </message>
        <message>
            <source>Reading the environment jobs get…</source>
            <translation>正在读取任务获得的环境…</translation>
        </message>
        <message>
            <source>Launch script preview</source>
            <translation>启动脚本预览</translation>
        </message>
        <message>
            <source>&amp;Copy</source>
            <translation>复制(&amp;C)</translation>
        </message>
        <message>
            <source>&amp;Save as…</source>
            <translation>另存为(&amp;S)…</translation>
        </message>
        <message>
            <source>&amp;Run</source>
            <translation>运行(&amp;R)</translation>
        </message>
        <message>
            <source>Run the single-node command here as a job.</source>
            <translation>在本机以任务形式运行单节点命令。</translation>
        </message>
        <message>
            <source>Cancel run</source>
            <translation>取消运行</translation>
        </message>
        <message>
            <source>Run log</source>
            <translation>运行日志</translation>
        </message>
        <message>
            <source>Tra&amp;ining script:</source>
            <translation>训练脚本(&amp;I)：</translation>
        </message>
        <message>
            <source>Ar&amp;guments:</source>
            <translation>参数(&amp;G)：</translation>
        </message>
        <message>
            <source>&amp;Kind:</source>
            <translation>类型(&amp;K)：</translation>
        </message>
        <message>
            <source>&amp;Nodes:</source>
            <translation>节点数(&amp;N)：</translation>
        </message>
        <message>
            <source>&amp;Processes per node:</source>
            <translation>每节点进程数(&amp;P)：</translation>
        </message>
        <message>
            <source>Rendezvous &amp;endpoint:</source>
            <translation>Rendezvous 端点(&amp;E)：</translation>
        </message>
        <message>
            <source>The arguments cannot be read: {error} (a quote is not closed?)</source>
            <translation>无法解析参数：{error}（引号未闭合？）</translation>
        </message>
        <message>
            <source>Reading the environment for launch scripts</source>
            <translation>读取启动脚本的环境</translation>
        </message>
        <message>
            <source>GPUs: {gpus}.</source>
            <translation>GPU：{gpus}。</translation>
        </message>
        <message>
            <source>Preset: {name}.</source>
            <translation>预设：{name}。</translation>
        </message>
        <message>
            <source>Left out: {names}.</source>
            <translation>已略去：{names}。</translation>
        </message>
        <message>
            <source>Launch script copied.</source>
            <translation>启动脚本已复制。</translation>
        </message>
        <message>
            <source>Save the launch script</source>
            <translation>保存启动脚本</translation>
        </message>
        <message>
            <source>Saving the launch script</source>
            <translation>保存启动脚本</translation>
        </message>
        <message>
            <source>Saved as {path}.</source>
            <translation>已保存为 {path}。</translation>
        </message>
        <message>
            <source>Launch script saved as {path}.</source>
            <translation>启动脚本已保存为 {path}。</translation>
        </message>
        <message>
            <source>Starting the run</source>
            <translation>启动运行</translation>
        </message>
        <message>
            <source>Running: {command}</source>
            <translation>正在运行：{command}</translation>
        </message>
    </context>
    <context>
        <name>MultiGpuTab</name>
        <message>
            <source>No AMD GPU is visible to ROCm here. The all-reduce test runs on the CPU (gloo, two processes) and launch scripts can be written for other machines.</source>
            <translation>这里的 ROCm 看不到 AMD GPU。all-reduce 测试将在 CPU 上运行（gloo，两个进程），启动脚本可以为其他机器生成。</translation>
        </message>
        <message>
            <source>One GPU is chosen for jobs. The topology shows how it is attached; the all-reduce test needs two (choose them with the GPU button in the status bar).</source>
            <translation>任务只选择了一个 GPU。“拓扑”页显示它的连接方式；all-reduce 测试需要两个（用状态栏中的 GPU 按钮选择）。</translation>
        </message>
        <message>
            <source>&amp;Topology</source>
            <translation>拓扑(&amp;T)</translation>
        </message>
        <message>
            <source>&amp;All-reduce test</source>
            <translation>all-reduce 测试(&amp;A)</translation>
        </message>
        <message>
            <source>&amp;Launch scripts</source>
            <translation>启动脚本(&amp;L)</translation>
        </message>
        <message>
            <source>Reading which GPUs jobs run on…</source>
            <translation>正在读取任务运行在哪些 GPU 上…</translation>
        </message>
        <message>
            <source>Jobs run on: &lt;b&gt;{gpus}&lt;/b&gt;.</source>
            <translation>任务运行于：&lt;b&gt;{gpus}&lt;/b&gt;。</translation>
        </message>
        <message>
            <source>Choose the GPUs with the GPU button in the status bar.</source>
            <translation>用状态栏中的 GPU 按钮选择 GPU。</translation>
        </message>
    </context>
    <context>
        <name>PairLink</name>
        <message>
            <source>same GPU</source>
            <translation>同一 GPU</translation>
        </message>
        <message>
            <source>none</source>
            <translation>无</translation>
        </message>
        <message>
            <source>GPU {a}: the same GPU</source>
            <translation>GPU {a}：同一个 GPU</translation>
        </message>
        <message>
            <source>GPU {a} to GPU {b}: KFD lists no path</source>
            <translation>GPU {a} 到 GPU {b}：KFD 未列出路径</translation>
        </message>
        <message>
            <source>GPU {a} to GPU {b}: {kind}</source>
            <translation>GPU {a} 到 GPU {b}：{kind}</translation>
        </message>
        <message>
            <source>hops n/a</source>
            <translation>跳数 n/a</translation>
        </message>
        <message>
            <source>1 hop</source>
            <translation>1 跳</translation>
        </message>
        <message>
            <source>{hops} hops</source>
            <translation>{hops} 跳</translation>
        </message>
        <message>
            <source>weight n/a</source>
            <translation>权重 n/a</translation>
        </message>
        <message>
            <source>weight {weight}</source>
            <translation>权重 {weight}</translation>
        </message>
        <message>
            <source>up to {bandwidth} MB/s</source>
            <translation>最高 {bandwidth} MB/s</translation>
        </message>
    </context>
    <context>
        <name>TopologyPanel</name>
        <message>
            <source>No AMD GPU topology on this machine: the ROCm kernel driver (KFD) lists no GPU, so there are no links, NUMA nodes or PCIe figures to show.</source>
            <translation>本机没有 AMD GPU 拓扑：ROCm 内核驱动（KFD）没有列出 GPU，因此没有链路、NUMA 节点或 PCIe 数据可显示。</translation>
        </message>
        <message>
            <source>GPU</source>
            <translation>GPU</translation>
        </message>
        <message>
            <source>Name</source>
            <translation>名称</translation>
        </message>
        <message>
            <source>PCI address</source>
            <translation>PCI 地址</translation>
        </message>
        <message>
            <source>NUMA node</source>
            <translation>NUMA 节点</translation>
        </message>
        <message>
            <source>PCIe now</source>
            <translation>当前 PCIe</translation>
        </message>
        <message>
            <source>PCIe max</source>
            <translation>最大 PCIe</translation>
        </message>
        <message>
            <source>Read at</source>
            <translation>读取自</translation>
        </message>
        <message>
            <source>full</source>
            <translation>全速</translation>
        </message>
        <message>
            <source>unknown</source>
            <translation>未知</translation>
        </message>
        <message>
            <source>idle</source>
            <translation>空闲降速</translation>
        </message>
        <message>
            <source>below-max</source>
            <translation>低于最大值</translation>
        </message>
        <message>
            <source>slot-limited</source>
            <translation>受插槽限制</translation>
        </message>
        <message>
            <source>driver-capped</source>
            <translation>受驱动限制</translation>
        </message>
        <message>
            <source>degraded</source>
            <translation>降级</translation>
        </message>
        <message>
            <source>1 GPU</source>
            <translation>1 个 GPU</translation>
        </message>
        <message>
            <source>{count} GPUs</source>
            <translation>{count} 个 GPU</translation>
        </message>
        <message>
            <source>{gpus} (read from {path})</source>
            <translation>{gpus}（读取自 {path}）</translation>
        </message>
        <message>
            <source>1 warning.</source>
            <translation>1 个警告。</translation>
        </message>
        <message>
            <source>{count} warnings.</source>
            <translation>{count} 个警告。</translation>
        </message>
        <message>
            <source>notes only, nothing urgent.</source>
            <translation>只有提示，没有紧急问题。</translation>
        </message>
        <message>
            <source>nothing to act on.</source>
            <translation>无需处理。</translation>
        </message>
        <message>
            <source>{gpus}; {verdict}</source>
            <translation>{gpus}；{verdict}</translation>
        </message>
        <message>
            <source>Not read yet.</source>
            <translation>尚未读取。</translation>
        </message>
        <message>
            <source>Topology status</source>
            <translation>拓扑状态</translation>
        </message>
        <message>
            <source>&amp;Refresh</source>
            <translation>刷新(&amp;R)</translation>
        </message>
        <message>
            <source>Read the GPU topology again</source>
            <translation>重新读取 GPU 拓扑</translation>
        </message>
        <message>
            <source>Refresh the GPU topology</source>
            <translation>刷新 GPU 拓扑</translation>
        </message>
        <message>
            <source>GPU link matrix</source>
            <translation>GPU 链路矩阵</translation>
        </message>
        <message>
            <source>How each pair of GPUs is connected; hover a cell for hops and weight</source>
            <translation>每对 GPU 之间的连接方式；将鼠标悬停在单元格上可查看跳数和权重</translation>
        </message>
        <message>
            <source>GPU NUMA nodes and PCIe links</source>
            <translation>GPU 的 NUMA 节点和 PCIe 链路</translation>
        </message>
        <message>
            <source>Topology warnings</source>
            <translation>拓扑警告</translation>
        </message>
        <message>
            <source>Lin&amp;ks between GPUs</source>
            <translation>GPU 之间的链路(&amp;K)</translation>
        </message>
        <message>
            <source>&amp;GPUs: NUMA node and PCIe link</source>
            <translation>GPU：NUMA 节点和 PCIe 链路(&amp;G)</translation>
        </message>
        <message>
            <source>&amp;Warnings and what to do</source>
            <translation>警告及处理方法(&amp;W)</translation>
        </message>
        <message>
            <source>Reading the GPU topology…</source>
            <translation>正在读取 GPU 拓扑…</translation>
        </message>
        <message>
            <source>Reading the GPU topology</source>
            <translation>读取 GPU 拓扑</translation>
        </message>
        <message>
            <source>Demo: the recorded GPUs, not this machine's.</source>
            <translation>演示：显示的是录制的 GPU，而不是本机的。</translation>
        </message>
        <message>
            <source>Lin&amp;ks between GPUs (one GPU: nothing to compare)</source>
            <translation>GPU 之间的链路（只有一个 GPU：无可比较）(&amp;K)</translation>
        </message>
        <message>
            <source>{kind} · 1 hop</source>
            <translation>{kind} · 1 跳</translation>
        </message>
        <message>
            <source>{kind} · {hops} hops</source>
            <translation>{kind} · {hops} 跳</translation>
        </message>
        <message>
            <source>{name} (integrated)</source>
            <translation>{name}（集成）</translation>
        </message>
        <message>
            <source>NUMA node of the PCI device</source>
            <translation>PCI 设备所在的 NUMA 节点</translation>
        </message>
        <message>
            <source>KFD node {node}</source>
            <translation>KFD 节点 {node}</translation>
        </message>
        <message>
            <source>Nothing to act on.</source>
            <translation>无需处理。</translation>
        </message>
        <message>
            <source>What to do: {action}</source>
            <translation>处理方法：{action}</translation>
        </message>
        <message>
            <source>warning</source>
            <translation>警告</translation>
        </message>
        <message>
            <source>note</source>
            <translation>提示</translation>
        </message>
    </context>
    <context>
        <name>collective</name>
        <message>
            <source>The smallest size ({smallest}) is above the largest ({largest}).</source>
            <translation>最小大小（{smallest}）大于最大大小（{largest}）。</translation>
        </message>
        <message>
            <source>The number of processes is for the CPU: on GPUs it is one per GPU.</source>
            <translation>进程数只适用于 CPU：在 GPU 上是每个 GPU 一个进程。</translation>
        </message>
        <message>
            <source>An all-reduce on the CPU needs 2 to {most} processes.</source>
            <translation>CPU 上的 all-reduce 需要 2 到 {most} 个进程。</translation>
        </message>
        <message>
            <source>Only one GPU is chosen ({gpu}): an all-reduce needs at least 2.</source>
            <translation>只选择了一个 GPU（{gpu}）：all-reduce 至少需要 2 个。</translation>
        </message>
    </context>
    <context>
        <name>launch</name>
        <message>
            <source>Single node (torchrun)</source>
            <translation>单节点（torchrun）</translation>
        </message>
        <message>
            <source>Several nodes (torchrun, c10d rendezvous)</source>
            <translation>多节点（torchrun，c10d rendezvous）</translation>
        </message>
        <message>
            <source>Slurm batch script (srun + torchrun)</source>
            <translation>Slurm 批处理脚本（srun + torchrun）</translation>
        </message>
        <message>
            <source>DeepSpeed ZeRO-3 config (JSON)</source>
            <translation>DeepSpeed ZeRO-3 配置（JSON）</translation>
        </message>
        <message>
            <source>Multi-GPU launch scripts need RCCL, ROCm's communication library, which is Linux only: the Windows HIP SDK ships none, so torch's nccl backend cannot run there. Generate the script on (or for) a Linux machine.</source>
            <translation>多 GPU 启动脚本需要 RCCL（ROCm 的通信库），它只支持 Linux：Windows HIP SDK 不包含它，因此 torch 的 nccl 后端无法在 Windows 上运行。请在 Linux 机器上（或为 Linux 机器）生成脚本。</translation>
        </message>
        <message>
            <source>The rendezvous endpoint {endpoint} is not HOST:PORT (e.g. node1:29500).</source>
            <translation>rendezvous 端点 {endpoint} 不是 HOST:PORT 格式（例如 node1:29500）。</translation>
        </message>
        <message>
            <source>The rendezvous port {port} is not a number.</source>
            <translation>rendezvous 端口 {port} 不是数字。</translation>
        </message>
        <message>
            <source>The rendezvous host {host} is not a host name or address (letters, digits, dots and dashes; an IPv6 address in brackets).</source>
            <translation>rendezvous 主机 {host} 不是主机名或地址（字母、数字、点和连字符；IPv6 地址需放在方括号中）。</translation>
        </message>
        <message>
            <source>The rendezvous port {port} is outside 1-65535.</source>
            <translation>rendezvous 端口 {port} 不在 1-65535 范围内。</translation>
        </message>
        <message>
            <source>Unknown launch kind {kind}; use one of {kinds}.</source>
            <translation>未知的启动类型 {kind}；请使用以下之一：{kinds}。</translation>
        </message>
        <message>
            <source>Choose the training script to launch.</source>
            <translation>请选择要启动的训练脚本。</translation>
        </message>
        <message>
            <source>The script path {path} starts with '-': give it as ./{script}.</source>
            <translation>脚本路径 {path} 以 '-' 开头：请写成 ./{script}。</translation>
        </message>
        <message>
            <source>The script path or an argument holds a NUL character.</source>
            <translation>脚本路径或某个参数包含 NUL 字符。</translation>
        </message>
        <message>
            <source>The training script {script} does not exist (or is not a file).</source>
            <translation>训练脚本 {script} 不存在（或不是文件）。</translation>
        </message>
        <message>
            <source>The training script {script} is not a .py file.</source>
            <translation>训练脚本 {script} 不是 .py 文件。</translation>
        </message>
        <message>
            <source>The job id {job_id} must be 1-64 letters, digits, '.', '_' or '-'.</source>
            <translation>任务 ID {job_id} 必须由 1-64 个字母、数字、'.'、'_' 或 '-' 组成。</translation>
        </message>
        <message>
            <source>The number of restarts cannot be negative.</source>
            <translation>重启次数不能为负数。</translation>
        </message>
        <message>
            <source>The Slurm GPU request {gres} is not like gpu:2.</source>
            <translation>Slurm GPU 请求 {gres} 的格式不像 gpu:2。</translation>
        </message>
        <message>
            <source>The Slurm time limit {limit} is not like 02:00:00.</source>
            <translation>Slurm 时间限制 {limit} 的格式不像 02:00:00。</translation>
        </message>
        <message>
            <source>The number of nodes must be at least 1.</source>
            <translation>节点数至少为 1。</translation>
        </message>
        <message>
            <source>The processes per node must be from 1 to {most}.</source>
            <translation>每节点进程数必须在 1 到 {most} 之间。</translation>
        </message>
        <message>
            <source>The largest number of nodes cannot be below the smallest.</source>
            <translation>最大节点数不能小于最小节点数。</translation>
        </message>
        <message>
            <source>{path} is a folder; give a file name.</source>
            <translation>{path} 是文件夹；请给出文件名。</translation>
        </message>
        <message>
            <source>The run did not finish.</source>
            <translation>运行未完成。</translation>
        </message>
        <message>
            <source>Cancelled.</source>
            <translation>已取消。</translation>
        </message>
        <message>
            <source>Finished (exit code 0) in {seconds} s.</source>
            <translation>已完成（退出码 0），用时 {seconds} 秒。</translation>
        </message>
        <message>
            <source>Last lines of its error output:</source>
            <translation>错误输出的最后几行：</translation>
        </message>
    </context>
    <context>
        <name>launch_env</name>
        <message>
            <source>{name}: looks like a secret or is no shell name</source>
            <translation>{name}：看起来是机密信息，或不是有效的 shell 变量名</translation>
        </message>
    </context>
    <context>
        <name>saved_title</name>
        <message>
            <source>done</source>
            <translation>完成</translation>
        </message>
        <message>
            <source>failed</source>
            <translation>失败</translation>
        </message>
        <message>
            <source>cancelled</source>
            <translation>已取消</translation>
        </message>
    </context>
    <context>
        <name>summary_text</name>
        <message>
            <source>Done</source>
            <translation>完成</translation>
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
            <source>{state}: {count} processes, {backend}</source>
            <translation>{state}：{count} 个进程，{backend}</translation>
        </message>
        <message>
            <source>; peak bus bandwidth {figure} GB/s at {size}</source>
            <translation>；峰值总线带宽 {figure} GB/s（{size}）</translation>
        </message>
        <message>
            <source>; {count} sizes skipped: {reason}</source>
            <translation>；跳过 {count} 个大小：{reason}</translation>
        </message>
    </context>
    <context>
        <name>topology_warnings</name>
        <message>
            <source>At idle the link may train down; check under load.</source>
            <extracomment>gfx targets whose products can join GPUs with XGMI (Infinity Fabric) links. Sources: ROCm docs reference/gpu-arch/mi100.md (MI100 hives of four GPUs over Infinity Fabric links), mi250.md (MI200: Infinity Fabric links between GPUs), MLCommons inference v4.1 system 8xMI300X_2xEPYC-9374F ("accelerator_interconnect": "XGMI"); gfx950 (MI350 series) follows AMD's OAM platforms. Several PCIe cards (MI210, MI100) have XGMI only with a bridge fitted, so the warning says "can". The Radeon Pro Vega II Duo and W6800X Duo share gfx906/gfx1030 with cards that have no XGMI; they would need PCI ids.</extracomment>
            <translation>空闲时链路可能降速；请在负载下检查。</translation>
        </message>
        <message>
            <source>Read again (Refresh, or run rocmpanel topo) while a job keeps this GPU busy.</source>
            <translation>在有任务让此 GPU 保持繁忙时重新读取（点“刷新”，或运行 rocmpanel topo）。</translation>
        </message>
        <message>
            <source>GPU {index}</source>
            <translation>GPU {index}</translation>
        </message>
        <message>
            <source>GPUs {indices}</source>
            <translation>GPU {indices}</translation>
        </message>
        <message>
            <source>{gpu} runs at {now}; card and slot support {possible}{where}.</source>
            <translation>{gpu} 运行在 {now}；显卡和插槽支持 {possible}{where}。</translation>
        </message>
        <message>
            <source>Reseat the card, check any riser cable, check in the board manual that the slot has all its lanes (some share them with M.2 slots), and set the slot to Auto in the BIOS.</source>
            <translation>重新插拔显卡，检查延长线，在主板手册中确认该插槽拥有全部通道（有些插槽与 M.2 插槽共享通道），并在 BIOS 中将该插槽设为 Auto。</translation>
        </message>
        <message>
            <source>{gpu} runs at {now}, all its slot supports; the card supports {card}{where}.</source>
            <translation>{gpu} 运行在 {now}，这是插槽支持的上限；显卡支持 {card}{where}。</translation>
        </message>
        <message>
            <source>Move the card to a slot wired for {card} (usually the first x16 slot, on the CPU) if host-GPU transfers matter; inference with the model in VRAM barely notices.</source>
            <translation>如果主机与 GPU 之间的传输很重要，请把显卡移到支持 {card} 的插槽（通常是连接 CPU 的第一个 x16 插槽）；模型在显存中的推理几乎不受影响。</translation>
        </message>
        <message>
            <source>{gpu}: the amdgpu driver allows at most {possible}, below what card ({card}) and slot support{where}.</source>
            <translation>{gpu}：amdgpu 驱动最多允许 {possible}，低于显卡（{card}）和插槽支持的速率{where}。</translation>
        </message>
        <message>
            <source>Look for amdgpu.pcie_gen_cap or amdgpu.pcie_lane_cap in /proc/cmdline and for a PCIe speed limit in the BIOS, and remove it.</source>
            <translation>在 /proc/cmdline 中查找 amdgpu.pcie_gen_cap 或 amdgpu.pcie_lane_cap，并在 BIOS 中查找 PCIe 速率限制，然后将其移除。</translation>
        </message>
        <message>
            <source>{gpu} is at {now} now; its driver allows up to {driver}.</source>
            <translation>{gpu} 当前为 {now}；其驱动最高允许 {driver}。</translation>
        </message>
        <message>
            <source>{gpu} is at {now}, below its maximum {card}{where}.</source>
            <translation>{gpu} 当前为 {now}，低于其最大值 {card}{where}。</translation>
        </message>
        <message>
            <source>{gpu} is attached to NUMA node {node}, but this process may run only on CPUs of node {nodes}.</source>
            <translation>{gpu} 连接在 NUMA 节点 {node} 上，但本进程只能在节点 {nodes} 的 CPU 上运行。</translation>
        </message>
        <message>
            <source>Run work for {gpu} on node {node}'s CPUs, e.g. numactl --cpunodebind={node} --membind={node} &lt;command&gt;.</source>
            <translation>请在节点 {node} 的 CPU 上运行 {gpu} 的工作，例如 numactl --cpunodebind={node} --membind={node} &lt;command&gt;。</translation>
        </message>
        <message>
            <source>unknown</source>
            <translation>未知</translation>
        </message>
        <message>
            <source>{gpus} on NUMA node {node}</source>
            <translation>{gpus} 位于 NUMA 节点 {node}</translation>
        </message>
        <message>
            <source>Some GPUs sit on different CPU sockets ({where}): data between them crosses the link between the sockets.</source>
            <translation>部分 GPU 位于不同的 CPU 插槽上（{where}）：它们之间的数据要经过插槽间的互连。</translation>
        </message>
        <message>
            <source>For a multi-GPU job choose GPUs on one NUMA node, or expect lower all-reduce bandwidth between the groups.</source>
            <translation>多 GPU 任务请选择同一 NUMA 节点上的 GPU，否则组间的 all-reduce 带宽会较低。</translation>
        </message>
        <message>
            <source>{gpus} ({family}, {gfx}) reach each other only over PCIe, though {family} GPUs can be joined by Infinity Fabric (XGMI) links.</source>
            <translation>{gpus}（{family}，{gfx}）之间只能通过 PCIe 通信，而 {family} GPU 本可以通过 Infinity Fabric（XGMI）链路互连。</translation>
        </message>
        <message>
            <source>On PCIe cards fit the Infinity Fabric Link bridge; on an OAM server look in `sudo dmesg | grep -i xgmi` for the hive the driver failed to set up.</source>
            <translation>PCIe 卡请安装 Infinity Fabric Link 桥接器；OAM 服务器请在 `sudo dmesg | grep -i xgmi` 中查找驱动未能建立的 hive。</translation>
        </message>
        <message>
            <source>One GPU: there is no pair of GPUs to compare.</source>
            <translation>只有一个 GPU：没有可比较的 GPU 对。</translation>
        </message>
        <message>
            <source>Nothing to do; the link matrix fills in with a second GPU.</source>
            <translation>无需处理；有第二个 GPU 时链路矩阵才会填充。</translation>
        </message>
        <message>
            <source>{gpu} ({name}) is integrated: it shares system memory and is much slower than a discrete GPU.</source>
            <translation>{gpu}（{name}）是集成 GPU：它共享系统内存，比独立 GPU 慢得多。</translation>
        </message>
        <message>
            <source>Leave it out of multi-GPU jobs (the default GPU choice does).</source>
            <translation>请不要把它用于多 GPU 任务（默认的 GPU 选择已排除它）。</translation>
        </message>
        <message>
            <source>The KFD topology lists no links between these GPUs (a captured tree may leave io_links out), so the matrix has no types.</source>
            <translation>KFD 拓扑没有列出这些 GPU 之间的链路（捕获的目录树可能缺少 io_links），因此矩阵中没有链路类型。</translation>
        </message>
        <message>
            <source>Read the live /sys of the machine, or capture its class/kfd/kfd/topology/nodes/*/io_links too.</source>
            <translation>请读取该机器的实时 /sys，或同时捕获其 class/kfd/kfd/topology/nodes/*/io_links。</translation>
        </message>
    </context>
</TS>
