"""The chat worker: one persistent process that loads a model and streams replies.

Commands arrive as JSON lines on stdin: ``load``, ``generate``, ``stop``, ``unload``,
``exit``. A reader thread takes them off stdin, so ``stop`` is seen while a reply is being
generated; the main thread runs loads and generations one at a time (torch's CPU kernels
are much slower on any other thread). ``stop`` sets an event that a stopping criterion
checks after every token, so a reply ends within one token. Tokens are sent from the
streamer inside ``generate``; the first at once, then at screen rate.

Hub access is off (``HF_HUB_OFFLINE=1`` before transformers is imported) unless the worker
was started with ``--allow-hub``; remote code is refused unless a load asks for it; only
safetensors weights are loaded.
"""

from __future__ import annotations

import gc
import json
import os
import queue
import sys
import threading
import time
import traceback
from pathlib import Path

import _wire

ALLOW_HUB = "--allow-hub" in sys.argv[1:]
if not ALLOW_HUB:
    # Read at import by huggingface_hub: must be set before transformers is imported.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

PRECISIONS = ("nf4", "int8", "fp16", "bf16", "fp32")
FALLBACK_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant: {% endif %}"
)
EMIT_INTERVAL_S = 0.015
LOAD_START, LOAD_END = 0.3, 0.95  # the share of the load progress that weights take
OOM_SUGGESTION = (
    "Reload with a smaller precision (4-bit NF4), a shorter context length, or fewer new tokens."
)


class WorkerFailure(Exception):
    """A failure to report as an error event of a given kind (the worker keeps running)."""

    def __init__(self, message: str, kind: str, detail: str = "") -> None:
        super().__init__(message)
        self.message, self.kind, self.detail = message, kind, detail


def _is_oom(exc: BaseException) -> bool:
    if isinstance(exc, MemoryError):
        return True
    name = type(exc).__name__
    return name == "OutOfMemoryError" or "out of memory" in str(exc).lower()


def _rss_bytes() -> tuple[int | None, int | None]:
    """(current, peak) resident memory of this process."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            fields = dict(line.split(":", 1) for line in handle if ":" in line)
        return (
            int(fields["VmRSS"].split()[0]) * 1024,
            int(fields["VmHWM"].split()[0]) * 1024,
        )
    except (OSError, KeyError, ValueError):
        pass
    if sys.platform == "win32":
        return _windows_memory()
    try:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return None, peak if sys.platform == "darwin" else peak * 1024
    except (ImportError, OSError):
        return None, None


def _windows_memory() -> tuple[int | None, int | None]:
    """Working set and its peak through psapi (stdlib ctypes; no psutil in workers)."""
    import ctypes
    from ctypes import wintypes

    class Counters(ctypes.Structure):
        _fields_ = [
            ("cb", wintypes.DWORD),
            ("PageFaultCount", wintypes.DWORD),
            ("PeakWorkingSetSize", ctypes.c_size_t),
            ("WorkingSetSize", ctypes.c_size_t),
            ("QuotaPeakPagedPoolUsage", ctypes.c_size_t),
            ("QuotaPagedPoolUsage", ctypes.c_size_t),
            ("QuotaPeakNonPagedPoolUsage", ctypes.c_size_t),
            ("QuotaNonPagedPoolUsage", ctypes.c_size_t),
            ("PagefileUsage", ctypes.c_size_t),
            ("PeakPagefileUsage", ctypes.c_size_t),
        ]

    try:
        counters = Counters()
        counters.cb = ctypes.sizeof(Counters)
        process = ctypes.windll.kernel32.GetCurrentProcess()
        if not ctypes.windll.psapi.GetProcessMemoryInfo(
            process, ctypes.byref(counters), counters.cb
        ):
            return None, None
        return int(counters.WorkingSetSize), int(counters.PeakWorkingSetSize)
    except (AttributeError, OSError):
        return None, None


class Engine:
    """Holds the model; every method runs on the engine thread."""

    def __init__(self) -> None:
        self.model = None
        self.tokenizer = None
        self.device = "cpu"
        self.precision = None
        self.context_length = 0
        self.path = None
        self.torch = None

    # -- load / unload -----------------------------------------------------------------
    def _check_folder(self, folder: Path, trust_remote_code: bool) -> None:
        if not folder.is_dir():
            raise WorkerFailure(f"{folder} is not a folder.", "no_model")
        if not (folder / "config.json").is_file():
            raise WorkerFailure(f"{folder} has no config.json.", "no_model")
        if not any(folder.glob("*.safetensors")):
            pickled = any(folder.glob("*.bin")) or any(folder.glob("*.pt"))
            raise WorkerFailure(
                "Only pickled weights were found; rocmpanel loads safetensors only."
                if pickled
                else f"No weights were found in {folder} (no .safetensors files).",
                "no_weights",
            )
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        tok_config = {}
        if (folder / "tokenizer_config.json").is_file():
            tok_config = json.loads((folder / "tokenizer_config.json").read_text("utf-8"))
        if ("auto_map" in config or "auto_map" in tok_config) and not trust_remote_code:
            raise WorkerFailure(
                "This model needs its own Python code (auto_map); it was not run. Allow "
                "remote code for this model only if you trust its repository.",
                "remote_code",
            )

    def load(self, cmd: dict) -> None:
        folder = Path(str(cmd.get("path", ""))).expanduser()
        precision = str(cmd.get("precision", "nf4"))
        if precision not in PRECISIONS:
            raise WorkerFailure(f"Unknown precision {precision!r}.", "bad_command")
        trust = bool(cmd.get("trust_remote_code", False))
        self._check_folder(folder, trust)
        if self.model is not None:
            self.unload(report=False)
        started = time.perf_counter()
        _wire.progress(0.05, "Importing torch and transformers")
        import torch
        import transformers

        self.torch = torch
        transformers.logging.set_verbosity_error()
        _report_weight_loading(transformers)
        want = str(cmd.get("device", "auto"))
        if want == "cuda" and not torch.cuda.is_available():
            raise WorkerFailure("No GPU is visible to torch in this Python.", "no_gpu")
        device = "cuda" if want != "cpu" and torch.cuda.is_available() else "cpu"
        if device == "cpu":
            _leave_a_core_free(torch)
        gpu_bf16 = device == "cuda" and torch.cuda.is_bf16_supported()
        compute = torch.bfloat16 if device == "cpu" or gpu_bf16 else torch.float16
        kwargs: dict = {"trust_remote_code": trust, "use_safetensors": True}
        if precision == "nf4":
            kwargs["quantization_config"] = transformers.BitsAndBytesConfig(
                load_in_4bit=True,
                bnb_4bit_quant_type="nf4",
                bnb_4bit_compute_dtype=compute,
                bnb_4bit_use_double_quant=True,
            )
            kwargs["dtype"] = compute
        elif precision == "int8":
            kwargs["quantization_config"] = transformers.BitsAndBytesConfig(load_in_8bit=True)
            kwargs["dtype"] = torch.float16
        else:
            kwargs["dtype"] = {
                "fp16": torch.float16,
                "bf16": torch.bfloat16,
                "fp32": torch.float32,
            }[precision]
        kwargs["device_map"] = {"": 0} if device == "cuda" else "cpu"
        if device == "cuda":
            torch.cuda.reset_peak_memory_stats()
        _wire.progress(0.15, "Reading the tokenizer")
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder), trust_remote_code=trust)
        if not getattr(tokenizer, "chat_template", None):
            tokenizer.chat_template = FALLBACK_TEMPLATE
            _wire.log("The tokenizer has no chat template; using a plain role: text layout.")
        _wire.progress(LOAD_START, f"Loading weights ({precision} on {device})")
        load_kwargs = dict(kwargs)
        if _version(transformers.__version__) < (4, 56):
            # Older transformers call it torch_dtype (renamed to dtype in 4.56).
            load_kwargs["torch_dtype"] = load_kwargs.pop("dtype")
        model = transformers.AutoModelForCausalLM.from_pretrained(str(folder), **load_kwargs)
        model.eval()
        _wire.progress(LOAD_END, "Ready check")
        max_positions = getattr(model.config, "max_position_embeddings", None) or 4096
        context = int(cmd.get("context_length") or max_positions)
        self.model, self.tokenizer, self.device = model, tokenizer, device
        self.precision, self.path = precision, str(folder)
        self.context_length = max(16, min(context, max_positions))
        params = sum(_unpacked_numel(p) for p in model.parameters())
        memory = torch.cuda.max_memory_allocated() if device == "cuda" else _rss_bytes()[0]
        _wire.progress(1.0, "Loaded")
        _wire.result(
            {
                "kind": "loaded",
                "path": self.path,
                "precision": precision,
                "device": device,
                "device_name": torch.cuda.get_device_name(0) if device == "cuda" else "CPU",
                "compute_dtype": str(kwargs["dtype"]).replace("torch.", ""),
                "parameters": params,
                "context_length": self.context_length,
                "load_s": round(time.perf_counter() - started, 3),
                "memory_bytes": memory,
                "memory_kind": "vram" if device == "cuda" else "rss",
                "footprint_bytes": int(model.get_memory_footprint()),
                "threads": torch.get_num_threads(),
            }
        )

    def unload(self, report: bool = True) -> None:
        had = self.model is not None
        self.model = self.tokenizer = None
        gc.collect()
        if self.torch is not None and self.device == "cuda":
            self.torch.cuda.empty_cache()
        if report:
            _wire.result({"kind": "unloaded", "had_model": had})

    # -- generate ----------------------------------------------------------------------
    def _prompt(self, messages: list, system: str, max_new: int):
        chat = [m for m in messages if m.get("role") in ("user", "assistant", "system")]
        if system and not any(m["role"] == "system" for m in chat):
            chat.insert(0, {"role": "system", "content": system})
        limit = self.context_length - max_new
        while True:
            encoded = self.tokenizer.apply_chat_template(
                chat, add_generation_prompt=True, return_dict=True, return_tensors="pt"
            )
            length = int(encoded["input_ids"].shape[-1])
            if length <= limit:
                return encoded, length
            # Drop the oldest non-system message and try again.
            droppable = [i for i, m in enumerate(chat) if m["role"] != "system"]
            if len(droppable) <= 1:
                raise WorkerFailure(
                    f"The message needs {length} tokens but only {limit} fit in the context "
                    f"({self.context_length}) with {max_new} new tokens.",
                    "context",
                )
            chat.pop(droppable[0])
            # Many templates insist that the conversation starts with the user.
            while len(droppable) > 2 and chat[droppable[0]]["role"] == "assistant":
                chat.pop(droppable[0])
                droppable.pop()

    def generate(self, cmd: dict) -> None:
        if self.model is None:
            raise WorkerFailure("No model is loaded.", "no_model")
        torch, model, tokenizer = self.torch, self.model, self.tokenizer
        import transformers

        request = cmd.get("id")
        max_new = max(1, int(cmd.get("max_new_tokens", 256)))
        max_new = min(max_new, max(1, self.context_length - 8))
        encoded, prompt_tokens = self._prompt(
            list(cmd.get("messages", [])), str(cmd.get("system", "")), max_new
        )
        encoded = {k: v.to(model.device) for k, v in encoded.items()}
        seed = cmd.get("seed")
        if seed is not None and int(seed) >= 0:
            transformers.set_seed(int(seed))
        temperature = float(cmd.get("temperature", 0.7))
        sampling: dict = {"do_sample": temperature > 0}
        if temperature > 0:
            sampling.update(
                temperature=temperature,
                top_p=float(cmd.get("top_p", 0.95)),
                top_k=int(cmd.get("top_k", 50)),
            )
        sampling["repetition_penalty"] = float(cmd.get("repetition_penalty", 1.0))
        # Created by the stdin reader when the command arrived, so a stop sent right
        # after generate is not lost while the command waits in the queue.
        stop_event = cmd.get("_stop") or threading.Event()

        class StopOnEvent(transformers.StoppingCriteria):
            """Checked after every token; the answers are made once, not per token."""

            answers: tuple = ()

            def __call__(self, input_ids, scores, **kwargs):
                if not self.answers:
                    shape, device = (input_ids.shape[0],), input_ids.device
                    self.answers = (
                        torch.zeros(shape, dtype=torch.bool, device=device),
                        torch.ones(shape, dtype=torch.bool, device=device),
                    )
                return self.answers[stop_event.is_set()]

        streamer = transformers.TextStreamer(tokenizer, skip_prompt=True, skip_special_tokens=True)
        started = time.perf_counter()
        first: list[float] = []
        pieces: list[str] = []
        pending: list[str] = []
        counts = [0, 0.0]  # tokens waiting in ``pending``, time of the last token event

        def flush() -> None:
            if pending:
                _wire.token("".join(pending), id=request, n=counts[0])
                pending.clear()
                counts[0] = 0
                counts[1] = time.perf_counter()

        def on_text(text: str, stream_end: bool = False, tokens: int = 1) -> None:
            # Called from inside generate: a token goes out with no hand-over to another
            # thread. The first one at once; later ones at most every EMIT_INTERVAL_S,
            # which spares a fast model hundreds of pipe writes (and the panel as many
            # wake-ups) per second while the text still flows at screen rate.
            if text:
                now = time.perf_counter()
                if not first:
                    first.append(now)
                pieces.append(text)
                pending.append(text)
                counts[0] += tokens
                if now - counts[1] >= EMIT_INTERVAL_S:
                    flush()
            if stream_end:
                flush()

        _flush_each_token(streamer, on_text)
        if self.device == "cuda":
            torch.cuda.reset_peak_memory_stats()
        # generate runs right here, on the thread that loaded the model (the main
        # thread): torch's CPU kernels run several times slower on any other thread (their
        # OpenMP pools belong to the main thread; measured 2.5x for bf16/NF4). Tokens
        # leave from inside generate, so there is no consumer that a failing generate
        # could leave waiting: an exception comes straight back here.
        try:
            with torch.inference_mode():
                ids = model.generate(
                    **encoded,
                    max_new_tokens=max_new,
                    streamer=streamer,
                    stopping_criteria=transformers.StoppingCriteriaList([StopOnEvent()]),
                    pad_token_id=tokenizer.pad_token_id or tokenizer.eos_token_id,
                    **sampling,
                )
        except Exception as exc:
            flush()
            trace = traceback.format_exc()
            if _is_oom(exc):
                message = f"Out of memory while generating: {exc}"
                del exc  # its traceback holds the frames that hold the big tensors
                if self.device == "cuda":
                    torch.cuda.empty_cache()
                raise WorkerFailure(message, "oom", trace) from None
            raise WorkerFailure(
                f"Generation failed: {type(exc).__name__}: {exc}", "generate", trace
            ) from exc
        ended = time.perf_counter()
        new_tokens = int(ids.shape[-1]) - prompt_tokens
        ttft = (first[0] - started) if first else None
        decode_s = ended - first[0] if first else 0.0
        # Speed over the tokens after the first, as the first one includes the prefill.
        speed = (new_tokens - 1) / decode_s if new_tokens > 1 and decode_s > 0 else None
        if self.device == "cuda":
            peak, kind = torch.cuda.max_memory_allocated(), "vram"
        else:
            peak, kind = _rss_bytes()[1], "rss"
        eos = tokenizer.eos_token_id
        last = int(ids[0, -1]) if new_tokens > 0 else None
        finish = "stop" if stop_event.is_set() else ("eos" if last == eos else "length")
        _wire.result(
            {
                "kind": "reply",
                "id": request,
                "text": "".join(pieces),
                "prompt_tokens": prompt_tokens,
                "new_tokens": new_tokens,
                "ttft_s": None if ttft is None else round(ttft, 5),
                "tokens_per_s": None if speed is None else round(speed, 2),
                "total_s": round(ended - started, 4),
                "peak_memory_bytes": peak,
                "memory_kind": kind,
                "device": self.device,
                "precision": self.precision,
                "stopped": stop_event.is_set(),
                "finish": finish,
            }
        )


class _ReportingBar:
    """Wraps transformers' "Loading weights" bar to send progress events as it advances."""

    def __init__(self, bar, total: int | None) -> None:
        self._bar = bar
        self._total = total

    def __iter__(self):
        last = 0.0
        for done, item in enumerate(self._bar, 1):
            yield item
            now = time.monotonic()
            if self._total and now - last >= 0.2:
                last = now
                fraction = LOAD_START + (LOAD_END - LOAD_START) * done / self._total
                _wire.progress(fraction, f"Loading weights ({done}/{self._total})")

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        close = getattr(self._bar, "close", None)
        if callable(close):
            close()

    def __getattr__(self, name: str):
        return getattr(self._bar, name)


def _report_weight_loading(transformers) -> None:
    """Turn the weight-loading progress bar into progress events (transformers >= 5)."""
    setter = getattr(transformers.utils.logging, "set_tqdm_hook", None)
    if setter is None:
        return

    def hook(factory, args, kwargs):
        bar = factory(*args, **kwargs)
        if kwargs.get("desc") != "Loading weights" or not args:
            return bar
        total = len(args[0]) if hasattr(args[0], "__len__") else None
        return _ReportingBar(bar, total)

    setter(hook)


def _leave_a_core_free(torch) -> None:
    """On the CPU, use one thread less than torch would, unless the user chose a number.

    torch starts one OpenMP thread per core and they spin-wait for each other at every
    operation; when anything else wants a core (the panel drawing the reply), one of them
    is descheduled and each operation waits for it: measured here on 2 cores, a busy
    neighbour cut a small model from ~900 to ~30 tokens/s with 2 threads, not at all with 1.
    """
    if any(os.environ.get(k) for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")):
        return
    threads = torch.get_num_threads()
    if threads > 1:
        torch.set_num_threads(threads - 1)


def _version(text: str) -> tuple[int, int]:
    parts = [0, 0]
    for index, piece in enumerate(text.split(".")[:2]):
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts[index] = int(digits or 0)
    return parts[0], parts[1]


def _unpacked_numel(param) -> int:
    """Elements of a weight; 4-bit weights are packed two to a byte with their shape aside."""
    state = getattr(param, "quant_state", None)
    shape = getattr(state, "shape", None)
    if shape is not None:
        count = 1
        for dim in shape:
            count *= int(dim)
        return count
    return int(param.numel())


def _flush_each_token(streamer, on_text) -> None:
    """Make the streamer hand over text after every token, not at word boundaries.

    TextStreamer holds text back until a space, which delays the first visible token, and
    decodes its whole cache on every token. With a fast tokenizer, tokenizers' own
    incremental decoder does it in about a microsecond per token. Otherwise two short
    windows are decoded per token (the offsets trick of text-generation servers): the text
    of the tokens already sent, and the same plus the new one; the difference is the new
    text. Either way, text ending in a cut UTF-8 sequence is held until it completes.
    """
    if _stream_with_decode_stream(streamer, on_text):
        return
    tokens: list[int] = []
    offsets = [0, 0]  # prefix start, end of what was sent
    decode_kwargs = streamer.decode_kwargs

    def put(value) -> None:
        if len(value.shape) > 1:
            value = value[0]
        if streamer.skip_prompt and streamer.next_tokens_are_prompt:
            streamer.next_tokens_are_prompt = False
            return
        tokens.extend(value.tolist())
        prefix, sent = offsets
        before = streamer.tokenizer.decode(tokens[prefix:sent], **decode_kwargs)
        after = streamer.tokenizer.decode(tokens[prefix:], **decode_kwargs)
        if len(after) > len(before) and not after.endswith("\ufffd"):
            offsets[0], offsets[1] = sent, len(tokens)
            on_text(after[len(before) :], tokens=len(tokens) - sent)

    def end() -> None:
        prefix, sent = offsets
        if sent < len(tokens):
            before = streamer.tokenizer.decode(tokens[prefix:sent], **decode_kwargs)
            after = streamer.tokenizer.decode(tokens[prefix:], **decode_kwargs)
            on_text(after[len(before) :], tokens=len(tokens) - sent)
        streamer.next_tokens_are_prompt = True
        on_text("", stream_end=True)

    streamer.put = put
    streamer.end = end


def _stream_with_decode_stream(streamer, on_text) -> bool:
    """Use tokenizers' DecodeStream when the tokenizer has a Rust backend (0.21+)."""
    backend = getattr(streamer.tokenizer, "backend_tokenizer", None)
    try:
        from tokenizers.decoders import DecodeStream
    except ImportError:
        return False
    if backend is None:
        return False
    skip = bool(streamer.decode_kwargs.get("skip_special_tokens", False))
    state = [DecodeStream(skip_special_tokens=skip), 0]  # decoder, tokens not yet sent

    def put(value) -> None:
        if len(value.shape) > 1:
            value = value[0]
        if streamer.skip_prompt and streamer.next_tokens_are_prompt:
            streamer.next_tokens_are_prompt = False
            return
        for token_id in value.tolist():
            state[1] += 1
            text = state[0].step(backend, token_id)
            if text:
                on_text(text, tokens=state[1])
                state[1] = 0

    def end() -> None:
        streamer.next_tokens_are_prompt = True
        state[0], state[1] = DecodeStream(skip_special_tokens=skip), 0
        on_text("", stream_end=True)

    streamer.put = put
    streamer.end = end
    return True


class StopEvents:
    """The stop events of queued and running generations; ``stop`` sets them all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: set[threading.Event] = set()

    def new(self) -> threading.Event:
        event = threading.Event()
        with self._lock:
            self._events.add(event)
        return event

    def done(self, event: threading.Event | None) -> None:
        with self._lock:
            self._events.discard(event)

    def stop_all(self) -> None:
        with self._lock:
            for event in self._events:
                event.set()


def engine_loop(engine: Engine, commands: queue.Queue, stops: StopEvents) -> None:
    while True:
        cmd = commands.get()
        if cmd is None:
            return
        op = cmd.get("op")
        try:
            if op == "load":
                engine.load(cmd)
            elif op == "generate":
                engine.generate(cmd)
            elif op == "unload":
                engine.unload()
        except WorkerFailure as exc:
            _wire.error(
                exc.message,
                kind=exc.kind,
                detail=exc.detail,
                op=op,
                id=cmd.get("id"),
                suggestion=OOM_SUGGESTION if exc.kind == "oom" else "",
            )
        except Exception as exc:
            kind = "oom" if _is_oom(exc) else op or "error"
            message = f"{type(exc).__name__}: {exc}"
            if kind == "oom":
                message = f"Out of memory during {op}: {exc}"
                engine.unload(report=False)
            _wire.error(
                message,
                kind=kind,
                detail=traceback.format_exc(),
                op=op,
                id=cmd.get("id"),
                suggestion=OOM_SUGGESTION if kind == "oom" else "",
            )
        finally:
            stops.done(cmd.get("_stop"))


def read_commands(commands: queue.Queue, stops: StopEvents) -> None:
    """The stdin reader (its own thread): queue work, act on ``stop`` at once."""
    try:
        for line in sys.stdin:
            line = line.strip()
            if not line:
                continue
            try:
                cmd = json.loads(line)
                op = cmd["op"]
            except (ValueError, KeyError, TypeError):
                _wire.error(f"Not a command: {line[:200]}", kind="bad_command")
                continue
            if op == "stop":
                stops.stop_all()
            elif op == "exit":
                break
            elif op == "generate":
                cmd["_stop"] = stops.new()
                commands.put(cmd)
            elif op in ("load", "unload"):
                commands.put(cmd)
            else:
                _wire.error(f"Unknown command {op!r}.", kind="bad_command")
    finally:
        # exit, or the panel went away (end of stdin): finish what runs, then leave.
        stops.stop_all()
        commands.put(None)


def main() -> None:
    stops = StopEvents()
    commands: queue.Queue = queue.Queue()
    reader = threading.Thread(
        target=read_commands, args=(commands, stops), name="stdin", daemon=True
    )
    reader.start()
    _wire.log(f"chat worker ready (pid {os.getpid()}, hub {'on' if ALLOW_HUB else 'off'})")
    # Loads and generations run on the main thread (see Engine.generate for why).
    engine_loop(Engine(), commands, stops)


if __name__ == "__main__":
    _wire.run_main(main)
