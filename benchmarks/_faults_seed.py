"""Fill ROCMPANEL_HOME's databases with plausible user data, through rocmpanel's own stores.

Run by benchmarks/faults.py in a child process whose ROCMPANEL_HOME is a template folder:
it writes data/validation.sqlite3 and data/chat.sqlite3 with many rows (so that cutting a
file short cuts through real tables), and data/rocmpanel.sqlite3 in the shared layout of
earlier versions (both stores' tables in one file). Prints one JSON line of what it made.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from contextlib import closing


def main() -> int:
    from rocmpanel.base import paths
    from rocmpanel.base.enums import CheckStatus
    from rocmpanel.chat.store import ChatStore
    from rocmpanel.pytorch.validation_run import CheckResult, ValidationRun
    from rocmpanel.pytorch.validation_store import ValidationStore

    made: dict[str, int] = {}
    runs = ValidationStore()
    statuses = list(CheckStatus)
    for n in range(40):
        checks = tuple(
            CheckResult(
                id=f"check_{i}",
                name=f"Check number {i} of run {n}",
                status=statuses[(n + i) % len(statuses)],
                figure=f"{i * 1.5:.1f} GB/s",
                value=i * 1.5,
                unit="GB/s",
                detail="measured " * 20,
            )
            for i in range(12)
        )
        runs.save(
            ValidationRun(
                created_at=time.time() - n * 3600,
                python="/usr/bin/python3",
                checks=checks,
                env_name=f"env-{n}",
                torch_version="2.5.1+rocm6.2",
                build="rocm",
                device_name="Radeon RX 7900 XTX",
                gfx="gfx1100",
                gcn_arch="gfx1100",
            )
        )
    made["validation_runs"] = 40
    chats = ChatStore()
    for n in range(40):
        conversation = chats.create(title=f"Conversation {n}", model="/models/tiny")
        for i in range(8):
            role = "user" if i % 2 == 0 else "assistant"
            chats.add_message(conversation, role, f"message {i} of chat {n}: " + "words " * 60)
    made["chat_conversations"] = 40
    legacy = paths.database_file()
    with closing(sqlite3.connect(legacy)) as db:
        for source in (paths.validation_database_file(), paths.chat_database_file()):
            db.execute("ATTACH DATABASE ? AS src", (str(source),))
            tables = [
                str(row[0])
                for row in db.execute(
                    "SELECT name FROM src.sqlite_master WHERE type = 'table' "
                    "AND name NOT LIKE 'sqlite_%'"
                )
            ]
            for table in tables:
                db.execute(f"CREATE TABLE main.{table} AS SELECT * FROM src.{table}")
            db.commit()
            db.execute("DETACH DATABASE src")
    made["legacy_tables"] = 1
    print(json.dumps(made))
    return 0


if __name__ == "__main__":
    sys.exit(main())
