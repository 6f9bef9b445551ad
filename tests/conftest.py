"""Test-wide set-up: offscreen Qt, and a private ROCMPANEL_HOME for every test."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

SHARED = Path(__file__).resolve().parents[2] / "shared"
FIXTURES = SHARED / "fixtures"


@pytest.fixture(autouse=True)
def _private_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """No test reads or writes the real user's settings, data or env files."""
    home = tmp_path_factory.mktemp("rocmpanel-home")
    monkeypatch.setenv("ROCMPANEL_HOME", str(home))
    user_home = home / "user"
    user_home.mkdir()
    monkeypatch.setenv("HOME", str(user_home))  # ~/.profile, ~/.config/environment.d
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return home


@pytest.fixture(autouse=True)
def _no_real_gpus_for_the_choice(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The GPU choice of jobs reads a test's recorded tree ($ROCMPANEL_SYSFS_ROOT) or none:
    on a machine with AMD GPUs, no test's job environment changes with that machine's."""
    from rocmpanel.jobs import gpu_choice

    empty = tmp_path_factory.getbasetemp() / "no-gpus-sys"
    empty.mkdir(exist_ok=True)
    real = gpu_choice.runtime_gpus

    def recorded_only(sysfs_root: Path | str | None = None) -> tuple[Any, ...]:
        return real(sysfs_root or os.environ.get(gpu_choice.SYSFS_ROOT_VARIABLE) or empty)

    monkeypatch.setattr(gpu_choice, "runtime_gpus", recorded_only)


@pytest.fixture(autouse=True)
def _no_remembered_registry_changes():
    """The Windows store remembers, per process, the names the panel changed (its jobs get
    their new values): no test sees another's."""
    from rocmpanel.envvars.stores import windows

    windows.forget_changes()
    yield
    windows.forget_changes()


@pytest.fixture
def shared_fixtures() -> Path:
    """../shared/fixtures, or skip when this checkout has no ../shared next to it."""
    if not FIXTURES.is_dir():
        pytest.skip("../shared/fixtures is not present")
    return FIXTURES


def _test_module(filename: str) -> ModuleType:
    """A helper module of tests/, loaded by path once (tests/ is not a package)."""
    name = "rocmpanel_tests_" + filename.removesuffix(".py")
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(filename))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture(scope="session")
def tiny_wheel() -> Any:
    """tests/wheels.py's ``tiny_wheel(folder, name, version, requires=())``."""
    return _test_module("wheels.py").tiny_wheel


@pytest.fixture(scope="session")
def tiny_llama() -> ModuleType:
    """tests/tiny_llama.py."""
    return _test_module("tiny_llama.py")


@pytest.fixture(scope="session")
def windows_fakes() -> ModuleType:
    """tests/windows_fakes.py: the test doubles of the Windows seams."""
    return _test_module("windows_fakes.py")


@pytest.fixture(scope="session")
def kfd() -> ModuleType:
    """tests/kfd_tree.py: small KFD topology trees in the kernel's format."""
    return _test_module("kfd_tree.py")


@pytest.fixture(scope="session")
def topo_trees() -> ModuleType:
    """tests/topo_trees.py: /sys-like trees with KFD io_links, PCI folders and NUMA nodes."""
    return _test_module("topo_trees.py")


@pytest.fixture
def fake_registry(windows_fakes: ModuleType) -> Any:
    """An empty in-memory registry with winreg's interface (``windows_fakes.FakeRegistry``)."""
    return windows_fakes.FakeRegistry()


@pytest.fixture(scope="session")
def tiny_model(tiny_llama: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random LLaMA folder (safetensors and a chat-template tokenizer), built once."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    return tiny_llama.cached_tiny_llama(tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="session")
def python_without_torch(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A fresh venv (no pip, no site packages): a real interpreter without torch or
    transformers, as a newcomer's first workload Python often is."""
    folder = tmp_path_factory.mktemp("venv-without-torch")
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(folder)],
        check=True,
        timeout=120,
        capture_output=True,
    )
    bin_dir = folder / ("Scripts" if sys.platform == "win32" else "bin")
    python = bin_dir / ("python.exe" if sys.platform == "win32" else "python")
    assert Path(python).exists()
    return str(python)
