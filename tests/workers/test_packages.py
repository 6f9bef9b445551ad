"""``workers/packages.py``: installed versions read from metadata only, as one result
(its panel side, ``rocmpanel.chat.installed``, is tested in tests/chat/test_installed.py)."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

from rocmpanel.workers import worker_script


def test_the_worker_reports_versions_and_nulls_as_one_result() -> None:
    done = subprocess.run(
        [sys.executable, str(worker_script("packages")), "pytest", "no-such-dist-h2"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    lines = done.stdout.splitlines()
    assert len(lines) == 1
    event = json.loads(lines[0])
    assert event == {
        "event": "result",
        "data": {
            "kind": "packages",
            "python": sys.executable,
            "python_version": ".".join(map(str, sys.version_info[:3])),
            "versions": {"pytest": importlib.metadata.version("pytest"), "no-such-dist-h2": None},
        },
    }


def test_the_worker_imports_nothing_it_reports(tmp_path: Path) -> None:
    # A distribution whose import would fail loudly: metadata is read, the module never is.
    site = tmp_path / "site"
    (site / "boom").mkdir(parents=True)
    (site / "boom" / "__init__.py").write_text("raise SystemExit('imported!')\n")
    info = site / "boom-1.2.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: boom\nVersion: 1.2.3\n")
    done = subprocess.run(
        [sys.executable, "-S", str(worker_script("packages")), "boom"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={"PYTHONPATH": str(site)},
    )
    assert json.loads(done.stdout)["data"]["versions"] == {"boom": "1.2.3"}
