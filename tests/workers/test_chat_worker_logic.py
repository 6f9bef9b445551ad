"""The chat worker's pure parts, imported by path (no torch needed)."""

from __future__ import annotations

import ast
import importlib.util
import io
import os
import queue
import sys
import threading
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

WORKERS = Path(__file__).resolve().parents[2] / "rocmpanel" / "workers"


@pytest.fixture
def chat_worker(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    # The worker sets HF_HUB_OFFLINE at import; monkeypatch restores the environment.
    for key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "TOKENIZERS_PARALLELISM"):
        monkeypatch.setenv(key, os.environ.get(key, ""))
    monkeypatch.syspath_prepend(str(WORKERS))
    spec = importlib.util.spec_from_file_location("rocmpanel_chat_worker", WORKERS / "chat.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert os.environ["HF_HUB_OFFLINE"] == "1"  # set before transformers could be imported
    return module


SIBLINGS = ("errors", "memory", "requests", "load", "generate", "stream", "engine", "loop")


@pytest.fixture
def chat_parts(chat_worker: ModuleType) -> SimpleNamespace:
    """The worker's private siblings (``_chat_stream`` as ``.stream``...), as chat.py has them."""
    return SimpleNamespace(**{n: importlib.import_module(f"_chat_{n}") for n in SIBLINGS})


@pytest.fixture
def wire_lines(chat_worker: ModuleType, monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """What the worker writes to the panel, captured."""
    wire = importlib.import_module("_wire")
    out = io.StringIO()
    monkeypatch.setattr(wire, "_real_stdout", out)
    return out


def events(out: io.StringIO) -> list[Any]:
    """The captured lines as the panel parses them."""
    from rocmpanel.jobs.protocol import parse_line

    return [parse_line(line) for line in out.getvalue().splitlines()]


class ByteTokenizer:
    """Token i is byte i: decoding a cut multi-byte character gives U+FFFD, like BPE."""

    def decode(self, ids: list[int], **_kwargs: Any) -> str:
        return bytes(ids).decode("utf-8", errors="replace")


class FakeIds:
    def __init__(self, ids: list[int]) -> None:
        self.ids = ids
        self.shape = (1, len(ids))

    def __getitem__(self, index: int) -> FakeIds:
        return self

    def tolist(self) -> list[int]:
        return self.ids


def test_streamer_sends_every_token_and_holds_cut_characters(chat_parts: SimpleNamespace) -> None:
    streamer = SimpleNamespace(
        tokenizer=ByteTokenizer(),
        decode_kwargs={},
        skip_prompt=True,
        next_tokens_are_prompt=True,
    )
    got: list[tuple[str, int]] = []
    ended: list[bool] = []

    def on_text(text: str, stream_end: bool = False, tokens: int = 1) -> None:
        if text:
            got.append((text, tokens))
        if stream_end:
            ended.append(True)

    chat_parts.stream.flush_each_token(streamer, on_text)
    streamer.put(FakeIds(list(b"prompt")))  # the prompt is skipped
    for byte in "hé!".encode():
        streamer.put(FakeIds([byte]))
    streamer.end()
    # "é" is two bytes: nothing is sent for the first, both go out together.
    assert got == [("h", 1), ("é", 2), ("!", 1)]
    assert ended == [True]


def test_fast_tokenizers_stream_through_decode_stream(chat_parts: SimpleNamespace) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    if not hasattr(tokenizers.decoders, "DecodeStream"):
        pytest.skip("tokenizers before 0.21 has no DecodeStream")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=["</s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(["hello world"] * 3, trainer=trainer)
    streamer = SimpleNamespace(
        tokenizer=SimpleNamespace(backend_tokenizer=backend),
        decode_kwargs={"skip_special_tokens": True},
        skip_prompt=True,
        next_tokens_are_prompt=True,
    )
    got: list[tuple[str, int]] = []
    chat_parts.stream.flush_each_token(
        streamer, lambda text, stream_end=False, tokens=1: text and got.append((text, tokens))
    )
    ids = backend.encode("hello wé!").ids
    streamer.put(FakeIds([1, 2, 3]))  # the prompt
    for token in [*ids, backend.token_to_id("</s>")]:
        streamer.put(FakeIds([token]))
    streamer.end()
    assert "".join(text for text, _ in got) == "hello wé!"
    # The two bytes of "é" arrive as one piece, counted as two tokens.
    assert ("é", 2) in got


def test_out_of_memory_is_recognised(chat_parts: SimpleNamespace) -> None:
    class OutOfMemoryError(RuntimeError):
        pass

    is_oom = chat_parts.errors.is_oom
    assert is_oom(MemoryError())
    assert is_oom(OutOfMemoryError("CUDA"))
    assert is_oom(RuntimeError("HIP out of memory. Tried to allocate 2 GiB"))
    assert not is_oom(ValueError("bad shape"))


def test_stop_reaches_queued_and_running_generations(chat_parts: SimpleNamespace) -> None:
    stops = chat_parts.loop.StopEvents()
    running, queued = stops.new(), stops.new()
    stops.stop_all()
    assert running.is_set() and queued.is_set()
    stops.done(running)
    stops.done(queued)
    later = stops.new()
    assert not later.is_set()
    assert isinstance(later, type(threading.Event()))


def test_memory_reading_on_this_platform(chat_parts: SimpleNamespace) -> None:
    current, peak = chat_parts.memory.rss_bytes()
    if sys.platform.startswith("linux"):
        assert current is not None and peak is not None and peak >= current > 0


def test_transformers_versions_are_compared_numerically(chat_parts: SimpleNamespace) -> None:
    assert chat_parts.load.version("5.24.0") == (5, 24)
    assert chat_parts.load.version("4.45.2") < (4, 56) <= chat_parts.load.version("4.56.0.dev0")
    assert chat_parts.load.version("4") == (4, 0)


def test_the_pci_slot_of_torchs_gpu(chat_parts: SimpleNamespace) -> None:
    def fake_torch(**props: Any) -> SimpleNamespace:
        return SimpleNamespace(
            cuda=SimpleNamespace(get_device_properties=lambda i: SimpleNamespace(**props))
        )

    slot = chat_parts.load.pci_slot
    assert slot(fake_torch(pci_domain_id=0, pci_bus_id=3, pci_device_id=0)) == "0000:03:00.0"
    assert slot(fake_torch(pci_domain_id=1, pci_bus_id=0xC5, pci_device_id=0x1F)) == (
        "0001:c5:1f.0"
    )
    assert slot(fake_torch(pci_bus_id=3)) is None  # an older torch without all three

    def broken(index: int) -> Any:
        raise RuntimeError("no device")

    assert slot(SimpleNamespace(cuda=SimpleNamespace(get_device_properties=broken))) is None


def test_load_commands_are_checked_where_they_arrive(chat_parts: SimpleNamespace) -> None:
    parse = chat_parts.requests.LoadCommand.parse
    failure = chat_parts.errors.WorkerFailure
    load = parse({"path": "~/m", "precision": "nf4", "device": "CUDA", "context_length": 2048})
    assert load.device == "gpu" and load.precision == "nf4" and load.context_length == 2048
    assert load.path == Path("~/m").expanduser() and load.trust_remote_code is False
    assert parse({"path": "/m", "precision": "bf16", "device": "cpu"}).context_length is None
    for bad in ({"precision": "q3"}, {}, {"precision": "fp16", "device": "tpu"}):
        with pytest.raises(failure) as raised:
            parse(bad)
        assert raised.value.kind == "bad_command"
    wire = importlib.import_module("_wire")
    assert {parse({"precision": p}).precision for p in wire.PRECISIONS} == set(wire.PRECISIONS)
    assert {parse({"precision": "fp32", "device": d}).device for d in wire.DEVICES} == set(
        wire.DEVICES
    )


def test_generate_commands_use_what_the_panel_sends(chat_parts: SimpleNamespace) -> None:
    parse = chat_parts.requests.GenerateCommand.parse
    cmd = parse(
        {
            "id": 4,
            "messages": [{"role": "user", "content": "hi"}, {"role": "tool", "content": "x"}, 3],
            "system": "S",
            "temperature": 0.7,
            "top_p": 0.9,
            "top_k": 40,
            "repetition_penalty": 1.1,
            "max_new_tokens": 512,
            "seed": 5,
        }
    )
    assert cmd.request_id == 4 and cmd.messages == ({"role": "user", "content": "hi"},)
    assert cmd.max_new_tokens == 512 and cmd.sampling.seed == 5
    assert cmd.sampling.generate_kwargs() == {
        "do_sample": True,
        "temperature": 0.7,
        "top_p": 0.9,
        "top_k": 40,
        "repetition_penalty": 1.1,
    }
    # Left out: the feature is switched off and the length bounded, no default of its own.
    bare = parse({"messages": []})
    assert bare.request_id is None
    assert bare.max_new_tokens == chat_parts.requests.FALLBACK_MAX_NEW_TOKENS
    assert bare.sampling.generate_kwargs() == {"do_sample": False, "repetition_penalty": 1.0}
    assert parse({"seed": -1}).sampling.seed is None
    with pytest.raises(chat_parts.errors.WorkerFailure):
        parse({"temperature": "hot"})


def test_generate_commands_keep_the_roles_the_panel_declares(chat_parts: SimpleNamespace) -> None:
    from rocmpanel.chat.store import ROLES

    parse = chat_parts.requests.GenerateCommand.parse
    messages = [{"role": role, "content": role} for role in (*ROLES, "tool")]
    assert [m["role"] for m in parse({"messages": messages}).messages] == list(ROLES)
    # One worker-side copy, in _wire.py beside the others (tests/base/test_enums.py).
    assert not hasattr(chat_parts.requests, "ROLES")


def test_token_events_carry_the_request_and_are_batched(
    chat_parts: SimpleNamespace, wire_lines: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rocmpanel.jobs.protocol import Token

    clock = iter([1.0, 1.001, 1.002, 1.003, 1.1, 1.1])
    monkeypatch.setattr(chat_parts.stream.time, "perf_counter", lambda: next(clock))
    batcher = chat_parts.stream.TokenBatcher(7)
    batcher.on_text("He", tokens=1)  # the first at once
    batcher.on_text("l", tokens=1)  # within EMIT_INTERVAL_S: held
    batcher.on_text("lo", tokens=2)
    batcher.on_text("", stream_end=True)  # the end sends what waits
    sent = events(wire_lines)
    assert all(isinstance(e, Token) for e in sent)
    assert [(e.text, e.request_id, e.count) for e in sent] == [("He", 7, 1), ("llo", 7, 3)]
    assert batcher.text == "Hello" and batcher.first_at == 1.0


class FakeEngine:
    """An engine whose outcomes the test chooses."""

    def __init__(self, chat_parts: SimpleNamespace, load_error: BaseException | None = None):
        self.parts = chat_parts
        self.unloaded = 0
        self.load_error = load_error or MemoryError("CUDA out of memory while loading")

    def load(self, cmd: Any) -> Any:
        raise self.load_error

    def unload(self) -> bool:
        self.unloaded += 1
        return True

    def generate(self, cmd: Any, stop: threading.Event) -> Any:
        if cmd.request_id == 2:
            raise self.parts.errors.WorkerFailure("too long", "context")
        return self.parts.generate.ReplyReport(
            request_id=cmd.request_id,
            text="Hi!",
            prompt_tokens=5,
            new_tokens=2,
            ttft_s=0.01,
            tokens_per_s=None,
            total_s=0.02,
            peak_memory_bytes=1024,
            memory_kind="rss",
            device="cpu",
            precision="fp32",
            stopped=stop.is_set(),
            finish="length",
        )


def test_the_command_loop_turns_outcomes_into_typed_events(
    chat_parts: SimpleNamespace, wire_lines: io.StringIO
) -> None:
    from rocmpanel.jobs.protocol import RawLine, ReplyDone, Result, WorkerError

    loop = chat_parts.loop
    commands: queue.Queue[Any] = queue.Queue()
    stops = loop.StopEvents()
    lines = [
        '{"op": "generate", "id": 1, "messages": []}',
        '{"op": "stop"}',  # reaches the queued generate at once
        '{"op": "generate", "id": 2}',
        "not json",
        '{"op": "unload"}',
        '{"op": "dance"}',
        '{"op": "exit"}',
        '{"op": "generate", "id": 9}',  # after exit: never read
    ]
    loop.read_commands(lines, commands, stops)
    engine = FakeEngine(chat_parts)
    assert loop.serve(engine, commands, stops) == 0
    sent = [e for e in events(wire_lines) if not isinstance(e, RawLine)]
    errors = [e for e in sent if isinstance(e, WorkerError)]
    assert [e.kind for e in errors] == ["bad_command", "bad_command", "context"]
    context = errors[2]
    assert context.data["op"] == "generate" and context.data["id"] == 2
    assert engine.unloaded == 1  # for the unload command
    replies = [e for e in sent if isinstance(e, ReplyDone)]
    assert [r.request_id for r in replies] == [1] and replies[0].data["stopped"] is True
    assert replies[0].text == "Hi!" and replies[0].data["new_tokens"] == 2
    results = [e for e in sent if isinstance(e, Result)]
    assert [r.data for r in results] == [{"kind": "unloaded", "had_model": True}]


@pytest.mark.parametrize(
    ("load_error", "kind", "message", "missing"),
    [
        (
            MemoryError("CUDA out of memory while loading"),
            "oom",
            "Out of memory during load: CUDA out of memory while loading",
            None,
        ),
        (
            ModuleNotFoundError("No module named 'torch'", name="torch"),
            "missing_package",
            "This Python lacks torch (ModuleNotFoundError: No module named 'torch').",
            ["torch"],
        ),
        (
            ImportError("Using `bitsandbytes` 4-bit quantization requires bitsandbytes"),
            "missing_package",
            "This Python lacks bitsandbytes (ImportError: Using `bitsandbytes` 4-bit "
            "quantization requires bitsandbytes).",
            ["bitsandbytes"],
        ),
        (
            ImportError("libamdhip64.so: cannot open shared object file"),
            "load",
            "ImportError: libamdhip64.so: cannot open shared object file",
            None,
        ),
        (ValueError("bad config"), "load", "ValueError: bad config", None),
    ],
)
def test_a_failed_load_sends_one_error_and_ends_the_loop(
    chat_parts: SimpleNamespace,
    wire_lines: io.StringIO,
    load_error: BaseException,
    kind: str,
    message: str,
    missing: list[str] | None,
) -> None:
    from rocmpanel.jobs.protocol import RawLine, WorkerError

    loop = chat_parts.loop
    commands: queue.Queue[Any] = queue.Queue()
    stops = loop.StopEvents()
    lines = [
        '{"op": "load", "precision": "fp32", "path": "/m"}',
        '{"op": "generate", "id": 1, "messages": []}',  # never run: the worker exits
    ]
    loop.read_commands(lines, commands, stops)
    engine = FakeEngine(chat_parts, load_error)
    assert loop.serve(engine, commands, stops) == loop.LOAD_FAILED_EXIT == 3
    sent = [e for e in events(wire_lines) if not isinstance(e, RawLine)]
    assert len(sent) == 1 and isinstance(sent[0], WorkerError)
    error = sent[0]
    assert (error.kind, error.message, error.data["op"]) == (kind, message, "load")
    assert error.data.get("missing") == missing
    assert type(load_error).__name__ in error.detail  # the traceback, for the log
    assert engine.unloaded == (1 if kind == "oom" else 0)


def test_a_refused_folder_also_ends_the_loop(
    chat_parts: SimpleNamespace, wire_lines: io.StringIO
) -> None:
    from rocmpanel.jobs.protocol import RawLine, WorkerError

    loop = chat_parts.loop
    commands: queue.Queue[Any] = queue.Queue()
    stops = loop.StopEvents()
    refusal = chat_parts.errors.WorkerFailure("/m has no config.json.", "no_model")
    loop.read_commands(['{"op": "load", "precision": "fp32", "path": "/m"}'], commands, stops)
    assert loop.serve(FakeEngine(chat_parts, refusal), commands, stops) == 3
    sent = [e for e in events(wire_lines) if not isinstance(e, RawLine)]
    assert [(e.kind, e.message) for e in sent if isinstance(e, WorkerError)] == [
        ("no_model", "/m has no config.json.")
    ]


def test_the_worker_names_the_packages_the_panel_checks(chat_parts: SimpleNamespace) -> None:
    from rocmpanel.chat.requirements import distributions

    assert set(chat_parts.errors.KNOWN_PACKAGES) == set(distributions())


def test_bitsandbytes_optional_kernel_warning_becomes_one_info_line(
    chat_parts: SimpleNamespace, wire_lines: io.StringIO
) -> None:
    import logging

    from rocmpanel.jobs.protocol import LogLine

    load = chat_parts.load
    load.explain_optional_kernels()
    load.explain_optional_kernels()  # once only
    logger = logging.getLogger(load.BNB_CPU_LOGGER)
    try:
        assert sum(isinstance(f, load.OptionalKernelNote) for f in logger.filters) == 1
        records: list[logging.LogRecord] = []
        handler = logging.Handler()
        handler.emit = records.append  # type: ignore[method-assign]
        logger.addHandler(handler)
        logger.warning(
            "Failed to load CPU gemm_4bit_forward from kernels-community: %s. Please make "
            "sure you already `pip install kernels`",
            "No module named 'kernels'",
        )
        logger.warning("a real problem")
        logger.removeHandler(handler)
        assert [r.getMessage() for r in records] == ["a real problem"]  # others pass
        sent = events(wire_lines)
        assert [(e.message, e.level) for e in sent if isinstance(e, LogLine)] == [
            (load.OPTIONAL_KERNEL_NOTE, "info")
        ]
    finally:
        for f in list(logger.filters):
            logger.removeFilter(f)


def test_siblings_share_no_private_names_and_take_no_engine_argument() -> None:
    # The split is by responsibility: each sibling's functions take typed values, not the
    # engine, and what one sibling uses from another is public.
    for path in [*sorted(WORKERS.glob("_chat_*.py")), WORKERS / "chat.py"]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("_chat_"):
                private = [a.name for a in node.names if a.name.startswith("_")]
                assert not private, f"{path.name} imports {private} from {node.module}"
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names = [a.arg for a in node.args.args]
                assert "engine" not in names or path.name == "_chat_loop.py", (
                    f"{path.name}: {node.name} takes the engine"
                )
