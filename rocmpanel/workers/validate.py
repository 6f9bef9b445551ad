"""The PyTorch validation suite, run inside the workload Python.

Usage: ``validate.py [--gfx GFX] [--sysfs-vram-bytes N] [--quick]``

Each check ends pass, fail or skip with a measured figure; a failure carries the error text
and, where the worker recognises the situation, a ``fix_id`` the panel turns into a cause
and a fix. Every finished check is also sent at once as a ``check`` event (``_wire.check``),
so the panel keeps the checks done so far if a driver fault kills this process. On a machine
without a GPU (or with a CPU build) the suite still runs and says so.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

import _preset
import _wire

GiB = 1024**3


def _check(cid: str, name: str, status: str, figure: str = "", **extra: Any) -> dict[str, Any]:
    # The panel's CheckStatus, as plain strings (this process cannot import rocmpanel).
    if status not in _wire.CHECK_STATUSES:
        raise ValueError(f"unknown check status {status!r}")
    data: dict[str, Any] = {
        "id": cid,
        "name": name,
        "status": status,
        "figure": figure,
        "value": None,
        "unit": None,
        "detail": "",
        "fix_id": None,
        "error": None,
    }
    data.update(extra)
    return data


class Suite:
    """Runs the checks in order; later checks see what earlier ones found."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.checks: list[dict[str, Any]] = []
        self.torch: Any = None
        self.info: dict[str, Any] = {
            "python": sys.executable,
            "python_version": platform.python_version(),
            "platform": platform.platform(),
            "system": platform.system().lower(),
            "expected_gfx": args.gfx,
            "env": {
                k: os.environ[k]
                for k in (
                    "HSA_OVERRIDE_GFX_VERSION",
                    "HIP_VISIBLE_DEVICES",
                    "ROCR_VISIBLE_DEVICES",
                    "CUDA_VISIBLE_DEVICES",
                )
                if k in os.environ
            },
        }
        self.device_ok = False
        self.sizes = (
            {"gemm_check": 512, "gemm_perf": 2048, "copy_mib": 64, "dev_mib": 256}
            if (args.quick)
            else {"gemm_check": 1024, "gemm_perf": 4096, "copy_mib": 256, "dev_mib": 1024}
        )

    def add(self, check: dict[str, Any]) -> None:
        self.checks.append(check)
        _wire.check(check)

    def run(
        self, cid: str, name: str, fn: Callable[[], dict[str, Any]], needs_gpu: bool = True
    ) -> None:
        if self.torch is None and cid != "import":
            self.add(_check(cid, name, "skip", "torch did not import"))
            return
        if needs_gpu and not self.device_ok:
            self.add(_check(cid, name, "skip", "no GPU visible to torch"))
            return
        try:
            self.add(fn())
        except Exception as exc:  # each check fails on its own
            text = f"{type(exc).__name__}: {exc}"
            fix = "out_of_memory" if "OutOfMemory" in type(exc).__name__ else None
            self.add(_check(cid, name, "fail", text.splitlines()[0][:200], error=text, fix_id=fix))

    def sync(self) -> None:
        self.torch.cuda.synchronize()

    def timed(self, fn: Callable[[], Any], iters: int) -> float:
        fn()
        self.sync()
        start = time.perf_counter()
        for _ in range(iters):
            fn()
        self.sync()
        return (time.perf_counter() - start) / iters

    # -- the checks --------------------------------------------------------------------
    def check_import(self) -> dict[str, Any]:
        _preset.before_torch()
        started = time.perf_counter()
        try:
            import torch
        except Exception as exc:
            text = f"{type(exc).__name__}: {exc}"
            return _check(
                "import", "torch imports", "fail", text[:200], error=text, fix_id="torch_missing"
            )
        seconds = time.perf_counter() - started
        _preset.log_applied(_preset.after_torch(torch))
        self.torch = torch
        version = getattr(torch, "version", None)
        self.info.update(
            torch_version=torch.__version__,
            hip=getattr(version, "hip", None),
            cuda=getattr(version, "cuda", None),
        )
        return _check(
            "import",
            "torch imports",
            "pass",
            f"torch {torch.__version__} in {seconds:.1f} s",
            value=seconds,
            unit="s",
        )

    def check_build(self) -> dict[str, Any]:
        hip, cuda = self.info.get("hip"), self.info.get("cuda")
        if hip:
            self.info["build"] = "rocm"
            return _check("build", "ROCm build", "pass", f"ROCm/HIP {hip}")
        self.info["build"] = "cuda" if cuda else "cpu"
        kind = f"CUDA {cuda} build" if cuda else "CPU-only build"
        return _check(
            "build",
            "ROCm build",
            "fail",
            f"{kind}: not a ROCm build",
            detail="torch.version.hip is None",
            fix_id="not_rocm_build",
        )

    def check_visible(self) -> dict[str, Any]:
        cuda = self.torch.cuda
        available = bool(cuda.is_available())
        count = int(cuda.device_count()) if available else 0
        if available and count > 0:
            self.device_ok = True
            names = [cuda.get_device_name(i) for i in range(count)]
            self.info["device_name"] = names[0]
            self.info["devices"] = names
            return _check(
                "gpu_visible",
                "GPU visible",
                "pass",
                f"{count} device(s): " + ", ".join(names),
                value=count,
            )
        if self.info.get("build") != "rocm":
            return _check("gpu_visible", "GPU visible", "skip", "needs a ROCm build of torch")
        fix = "no_gpu"
        if os.path.exists("/dev/kfd") and not os.access("/dev/kfd", os.R_OK | os.W_OK):
            fix = "kfd_permission"
        return _check(
            "gpu_visible", "GPU visible", "fail", "torch.cuda.is_available() is False", fix_id=fix
        )

    def check_arch(self) -> dict[str, Any]:
        if not self.args.gfx:
            return _check("arch", "GPU target matches", "skip", "no detected gfx given")
        props = self.torch.cuda.get_device_properties(0)
        arch = getattr(props, "gcnArchName", "") or ""
        self.info["gcn_arch"] = arch or None
        if not arch:
            return _check("arch", "GPU target matches", "skip", "the device reports no gfx")
        got = arch.split(":")[0]
        if got == self.args.gfx:
            return _check("arch", "GPU target matches", "pass", f"{arch}")
        return _check(
            "arch",
            "GPU target matches",
            "fail",
            f"device 0 is {got}, detected {self.args.gfx}",
            fix_id="arch_mismatch",
        )

    def check_gemm(self, dtype_name: str, tolerance: float) -> dict[str, Any]:
        torch = self.torch
        dtype = getattr(torch, dtype_name)
        n = self.sizes["gemm_check"]
        gen = torch.Generator().manual_seed(0)
        a = torch.randn(n, n, generator=gen)
        b = torch.randn(n, n, generator=gen)
        # The reference uses the same rounded inputs the GPU gets, in float64 on the CPU.
        a_q, b_q = a.to(dtype), b.to(dtype)
        ref = a_q.double() @ b_q.double()
        out = (a_q.to("cuda") @ b_q.to("cuda")).double().cpu()
        if not bool(torch.isfinite(out).all()):
            return _check(
                f"gemm_{dtype_name}",
                f"GEMM {dtype_name} vs CPU",
                "fail",
                "non-finite results",
                fix_id="wrong_results",
            )
        err = float((out - ref).norm() / ref.norm())
        status = "pass" if err <= tolerance else "fail"
        return _check(
            f"gemm_{dtype_name}",
            f"GEMM {dtype_name} vs CPU",
            status,
            f"relative error {err:.2e} (limit {tolerance:.0e}, n={n})",
            value=err,
            unit="rel",
            fix_id=None if status == "pass" else "wrong_results",
        )

    def check_sdpa(self) -> dict[str, Any]:
        torch = self.torch
        gen = torch.Generator().manual_seed(1)
        q, k, v = (torch.randn(2, 8, 256, 64, generator=gen) for _ in range(3))
        ref = torch.softmax(q @ k.transpose(-2, -1) / 8.0, dim=-1) @ v
        dev = [t.to("cuda", torch.float16) for t in (q, k, v)]
        out = torch.nn.functional.scaled_dot_product_attention(*dev).float().cpu()
        err = float((out - ref).norm() / ref.norm())
        status = "pass" if err <= 2e-2 else "fail"
        return _check(
            "sdpa",
            "SDPA (fp16)",
            status,
            f"relative error {err:.2e}",
            value=err,
            unit="rel",
            fix_id=None if status == "pass" else "wrong_results",
        )

    def check_alloc(self) -> dict[str, Any]:
        torch = self.torch
        torch.cuda.empty_cache()  # what earlier checks left in torch's cache counts as free
        free, total = torch.cuda.mem_get_info()
        size = int(free * 0.8)
        block = torch.empty(size, dtype=torch.uint8, device="cuda")
        block.fill_(1)
        self.sync()
        del block
        torch.cuda.empty_cache()
        free_after, _ = torch.cuda.mem_get_info()
        back = free_after / free if free else 0.0
        status = "pass" if back > 0.95 else "fail"
        return _check(
            "alloc",
            "Large alloc/free",
            status,
            f"{size / GiB:.1f} GiB of {free / GiB:.1f} GiB free ({total / GiB:.1f} "
            f"GiB total); {back:.0%} free again after release",
            value=size / GiB,
            unit="GiB",
        )

    def check_copy(self, direction: str) -> dict[str, Any]:
        torch = self.torch
        nbytes = self.sizes["copy_mib"] * 1024**2
        host = torch.empty(nbytes, dtype=torch.uint8).pin_memory()
        dev = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
        if direction == "h2d":
            seconds = self.timed(lambda: dev.copy_(host, non_blocking=True), 5)
        else:
            seconds = self.timed(lambda: host.copy_(dev, non_blocking=True), 5)
        gbs = nbytes / seconds / 1e9
        label = "Host→device copy" if direction == "h2d" else "Device→host copy"
        return _check(direction, label, "pass", f"{gbs:.1f} GB/s", value=gbs, unit="GB/s")

    def check_device_bandwidth(self) -> dict[str, Any]:
        torch = self.torch
        nbytes = self.sizes["dev_mib"] * 1024**2
        src = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        seconds = self.timed(lambda: dst.copy_(src), 10)
        gbs = 2 * nbytes / seconds / 1e9  # each copy reads and writes every byte
        return _check(
            "dev_bw", "Device memory bandwidth", "pass", f"{gbs:.0f} GB/s", value=gbs, unit="GB/s"
        )

    def check_tflops(self, dtype_name: str) -> dict[str, Any]:
        torch = self.torch
        n = self.sizes["gemm_perf"]
        dtype = getattr(torch, dtype_name)
        a = torch.randn(n, n, device="cuda", dtype=dtype)
        b = torch.randn(n, n, device="cuda", dtype=dtype)
        seconds = self.timed(lambda: a @ b, 10)
        tflops = 2 * n**3 / seconds / 1e12
        return _check(
            f"tflops_{dtype_name}",
            f"GEMM TFLOPS {dtype_name}",
            "pass",
            f"{tflops:.1f} TFLOPS (n={n})",
            value=tflops,
            unit="TFLOPS",
        )

    def check_vram(self) -> dict[str, Any]:
        sysfs = self.args.sysfs_vram_bytes
        if not sysfs:
            return _check("vram", "VRAM: torch vs sysfs", "skip", "no sysfs VRAM figure given")
        total = int(self.torch.cuda.get_device_properties(0).total_memory)
        diff = abs(total - sysfs) / sysfs
        status = "pass" if diff <= 0.05 else "fail"
        return _check(
            "vram",
            "VRAM: torch vs sysfs",
            status,
            f"torch {total / GiB:.2f} GiB, sysfs {sysfs / GiB:.2f} GiB ({diff:.1%} apart)",
            value=diff,
            unit="rel",
            fix_id=None if status == "pass" else "vram_mismatch",
        )

    def plan(self) -> list[tuple[str, str, Callable[[], dict[str, Any]], bool]]:
        return [
            ("import", "torch imports", self.check_import, False),
            ("build", "ROCm build", self.check_build, False),
            ("gpu_visible", "GPU visible", self.check_visible, False),
            ("arch", "GPU target matches", self.check_arch, True),
            ("gemm_float32", "GEMM float32 vs CPU", lambda: self.check_gemm("float32", 2e-3), True),
            ("gemm_float16", "GEMM float16 vs CPU", lambda: self.check_gemm("float16", 1e-2), True),
            (
                "gemm_bfloat16",
                "GEMM bfloat16 vs CPU",
                lambda: self.check_gemm("bfloat16", 3e-2),
                True,
            ),
            ("sdpa", "SDPA (fp16)", self.check_sdpa, True),
            ("alloc", "Large alloc/free", self.check_alloc, True),
            ("h2d", "Host→device copy", lambda: self.check_copy("h2d"), True),
            ("d2h", "Device→host copy", lambda: self.check_copy("d2h"), True),
            ("dev_bw", "Device memory bandwidth", self.check_device_bandwidth, True),
            ("tflops_float16", "GEMM TFLOPS float16", lambda: self.check_tflops("float16"), True),
            (
                "tflops_bfloat16",
                "GEMM TFLOPS bfloat16",
                lambda: self.check_tflops("bfloat16"),
                True,
            ),
            ("tflops_float32", "GEMM TFLOPS float32", lambda: self.check_tflops("float32"), True),
            ("vram", "VRAM: torch vs sysfs", self.check_vram, True),
        ]


def main() -> None:
    parser = argparse.ArgumentParser(description="PyTorch validation suite")
    parser.add_argument("--gfx", default=None, help="the gfx target detection found")
    parser.add_argument("--sysfs-vram-bytes", type=int, default=None)
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    args = parser.parse_args()
    args.gfx = args.gfx.split(":")[0].lower() if args.gfx else None
    suite = Suite(args)
    steps = suite.plan()
    started = time.time()
    for index, (cid, name, fn, needs_gpu) in enumerate(steps):
        _wire.progress(index / len(steps), name)
        suite.run(cid, name, fn, needs_gpu)
    _wire.progress(1.0, "Done")
    _wire.result(
        {
            **suite.info,
            "started_at": started,
            "seconds": round(time.time() - started, 2),
            "checks": suite.checks,
            **_preset.report(),
        }
    )


if __name__ == "__main__":
    _wire.run_main(main)
