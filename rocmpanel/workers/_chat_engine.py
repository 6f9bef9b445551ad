"""The chat worker's engine: the loaded model and what it does (load, reply, unload).

A private sibling of ``chat.py``. :class:`ChatEngine` owns the model, its tokenizer, the
device and the precision; its methods run on the main thread, one at a time (the command
loop calls them). torch and transformers are imported by :meth:`ChatEngine.load`, after
``chat.py`` has switched the hub off. The parts live beside it by responsibility:
``_chat_load`` (folder check, weight arguments, load progress), ``_chat_generate`` (prompt,
stop check, figures) and ``_chat_stream`` (text out of ``generate``, as token events).
"""

from __future__ import annotations

import gc
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import _preset
import _wire
from _chat_devices import Placement, device_of, input_device, layer_ranges, offloaded, split_text
from _chat_errors import WorkerFailure, is_oom
from _chat_generate import (
    GenerationRun,
    ReplyReport,
    build_prompt,
    decode_speed,
    finish_reason,
    stop_criteria,
)
from _chat_load import (
    FALLBACK_TEMPLATE,
    LOAD_END,
    LOAD_START,
    check_folder,
    dtype_keyword,
    explain_optional_kernels,
    leave_a_core_free,
    pci_slot,
    plan_gpus,
    report_weight_loading,
    resolve_device,
    unpacked_numel,
    weight_kwargs,
)
from _chat_memory import rss_bytes
from _chat_requests import GenerateCommand, LoadCommand, Sampling
from _chat_stream import OnText, TokenBatcher, flush_each_token


@dataclass(frozen=True)
class LoadReport:
    """What a ``loaded`` result says about the model now in memory."""

    path: str
    precision: str
    device: str  # "gpu" or "cpu"
    device_name: str
    bdf: str | None  # the GPU's PCI slot ("0000:03:00.0"), when torch reports it
    compute_dtype: str
    parameters: int
    context_length: int
    load_s: float
    memory_bytes: int | None
    footprint_bytes: int
    threads: int
    # The tuning preset the model runs under (workers/_preset.py: summary, records).
    preset: dict[str, Any] | None = None
    preset_settings: list[dict[str, Any]] = field(default_factory=list)
    # Each GPU the model is on: index (in this job's numbering), name, bdf, bytes allocated
    # after the load, and the decoder layers it holds ([[first, last], ...]).
    gpus: list[dict[str, Any]] = field(default_factory=list)
    split: str = ""  # "layers 0-15 on GPU 0, 16-31 on GPU 1" when spread, else ""

    def as_result(self) -> dict[str, Any]:
        """The ``result`` event's data."""
        return {
            "kind": "loaded",
            "path": self.path,
            "precision": self.precision,
            "device": self.device,
            "device_name": self.device_name,
            "bdf": self.bdf,
            "compute_dtype": self.compute_dtype,
            "parameters": self.parameters,
            "context_length": self.context_length,
            "load_s": round(self.load_s, 3),
            "memory_bytes": self.memory_bytes,
            "memory_kind": "vram" if self.device == "gpu" else "rss",
            "footprint_bytes": self.footprint_bytes,
            "threads": self.threads,
            "preset": self.preset,
            "preset_settings": self.preset_settings,
            "gpus": self.gpus,
            "split": self.split,
        }


class ChatEngine:
    """One model in memory at a time, with its tokenizer, device and precision."""

    def __init__(self) -> None:
        self.model: Any = None
        self.tokenizer: Any = None
        self.torch: Any = None
        self.device = "cpu"  # "gpu" or "cpu" (as _wire.DEVICES spells them)
        self.precision = ""
        self.context_length = 0
        self.path = ""
        self.trust_remote_code = False  # the load's choice; the server's tokenizer follows it
        self.loaded_at = 0  # unix time of the load (the served model's "created")
        self.gpus: tuple[int, ...] = ()  # the GPUs the model is on (spread: several)
        self.input_device: Any = None  # where prompts go: the input embedding's device

    @property
    def on_gpu(self) -> bool:
        return self.device == "gpu"

    def load(self, cmd: LoadCommand) -> LoadReport:
        """Load the model ``cmd`` asks for (the previous one goes first) and describe it."""
        check_folder(cmd.path, cmd.trust_remote_code)
        if self.model is not None:
            self.unload()
        started = time.perf_counter()
        _wire.progress(0.05, "Importing torch and transformers")
        explain_optional_kernels()
        if self.torch is None:  # the first load: torch is not imported yet
            _preset.before_torch()
        import torch
        import transformers

        self.torch = torch
        transformers.logging.set_verbosity_error()
        report_weight_loading(transformers)
        device = resolve_device(torch, cmd.device)
        if device == "cpu":
            leave_a_core_free(torch)
        # After leave_a_core_free: a preset's cpu_threads wins over the worker's default.
        preset_records = _preset.after_torch(torch)
        _preset.log_applied(preset_records)
        kwargs = {
            "trust_remote_code": cmd.trust_remote_code,
            "use_safetensors": True,
            **weight_kwargs(transformers, torch, cmd.precision, device),
        }
        placement: Placement | None = None
        if device == "gpu":
            placement = plan_gpus(torch, cmd.path, cmd.precision, cmd.context_length)
            kwargs.update(placement.kwargs())
            _wire.log(placement.message, "info" if placement.fits else "warning")
            for index in placement.gpus:
                torch.cuda.reset_peak_memory_stats(index)
        _wire.progress(0.15, "Reading the tokenizer")
        folder = str(cmd.path)
        tokenizer = transformers.AutoTokenizer.from_pretrained(
            folder, trust_remote_code=cmd.trust_remote_code
        )
        if not getattr(tokenizer, "chat_template", None):
            tokenizer.chat_template = FALLBACK_TEMPLATE
            _wire.log("The tokenizer has no chat template; using a plain role: text layout.")
        where = f"{len(placement.gpus)} GPUs" if placement and placement.spread else device
        _wire.progress(LOAD_START, f"Loading weights ({cmd.precision} on {where})")
        try:
            model = transformers.AutoModelForCausalLM.from_pretrained(
                folder, **dtype_keyword(transformers, kwargs)
            )
        except Exception as exc:
            # One that was known not to fit fails as out of memory, with the plan's figures
            # (accelerate refuses a map that would need the disk; the GPU may run out).
            if placement is None or not (is_oom(exc) or not placement.fits):
                raise
            message = f"Out of memory while loading ({type(exc).__name__}: {exc}). "
            del exc  # its traceback holds the frames that hold the weights
            raise WorkerFailure(
                message + placement.message, "oom", traceback.format_exc()
            ) from None
        model.eval()
        gpus: list[dict[str, Any]] = []
        split = ""
        if placement is not None:
            gpus, split = self._placed(torch, model, placement)
        _wire.progress(LOAD_END, "Ready check")
        max_positions = getattr(model.config, "max_position_embeddings", None) or 4096
        context = cmd.context_length or max_positions
        self.model, self.tokenizer, self.device = model, tokenizer, device
        self.gpus = tuple(g["index"] for g in gpus)
        self.input_device = input_device(model)
        self.precision, self.path = cmd.precision, folder
        self.trust_remote_code, self.loaded_at = cmd.trust_remote_code, int(time.time())
        self.context_length = max(16, min(context, max_positions))
        report = LoadReport(
            path=folder,
            precision=cmd.precision,
            device=device,
            device_name=_device_name(gpus) if gpus else "CPU",
            bdf=gpus[0]["bdf"] if gpus else None,
            compute_dtype=str(kwargs["dtype"]).replace("torch.", ""),
            parameters=sum(unpacked_numel(p) for p in model.parameters()),
            context_length=self.context_length,
            load_s=time.perf_counter() - started,
            memory_bytes=self._peak() if gpus else rss_bytes()[0],
            footprint_bytes=int(model.get_memory_footprint()),
            threads=torch.get_num_threads(),
            preset=_preset.summary(),
            preset_settings=preset_records,
            gpus=gpus,
            split=split,
        )
        _wire.progress(1.0, "Loaded")
        return report

    def _placed(
        self, torch: Any, model: Any, placement: Placement
    ) -> tuple[list[dict[str, Any]], str]:
        """Each GPU the model landed on, and the layer split; a model that landed partly in
        RAM or on disk (never asked for) is refused (a failed load ends the worker)."""
        device_map = getattr(model, "hf_device_map", None) or {"": placement.gpus[0]}
        away = offloaded(device_map)
        if away:  # a failed load ends the worker, which gives the memory back
            shown = ", ".join(away[:3]) + (", ..." if len(away) > 3 else "")
            raise WorkerFailure(
                f"The model did not fit on the GPUs: {len(away)} parts ({shown}) were put in "
                f"RAM or on disk, which rocmpanel does not do. {placement.message}",
                "oom",
            )
        used = sorted({d for d in map(device_of, device_map.values()) if isinstance(d, int)})
        runs = layer_ranges(device_map)
        gpus = [
            {
                "index": index,
                "name": torch.cuda.get_device_name(index),
                "bdf": pci_slot(torch, index),
                "bytes": int(torch.cuda.memory_allocated(index)),
                "layers": [[first, last] for dev, first, last in runs if dev == index],
            }
            for index in used
        ]
        return gpus, split_text(runs) if len(used) > 1 else ""

    def _peak(self) -> int:
        """The allocator's peak since the last reset, over every GPU the model is on."""
        return sum(int(self.torch.cuda.max_memory_allocated(i)) for i in self.gpus)

    def unload(self) -> bool:
        """Drop the model and give its memory back; whether there was one."""
        had = self.model is not None
        self.model = self.tokenizer = self.input_device = None
        self.gpus = ()
        gc.collect()
        if self.torch is not None and self.on_gpu:
            self.torch.cuda.empty_cache()
        return had

    def generate(self, cmd: GenerateCommand, stop: threading.Event) -> ReplyReport:
        """Answer ``cmd``: tokens go out as they come; the finished reply is returned.

        ``generate`` runs right here, on the thread that loaded the model (the main
        thread): torch's CPU kernels run several times slower on any other thread (their
        OpenMP pools belong to the main thread; measured 2.5x for bf16/NF4). Tokens leave
        from inside generate, so there is no consumer that a failing generate could leave
        waiting: an exception comes straight back here. ``stop`` ends it within a token.
        """
        if self.model is None:
            raise WorkerFailure("No model is loaded.", "no_model")
        max_new = min(cmd.max_new_tokens, max(1, self.context_length - 8))
        encoded, prompt_tokens = build_prompt(
            self.tokenizer, cmd.messages, cmd.system, self.context_length, max_new
        )
        batcher = TokenBatcher(cmd.request_id)
        if self.on_gpu:
            for index in self.gpus:
                self.torch.cuda.reset_peak_memory_stats(index)
        run = self._generate(encoded, max_new, cmd.sampling, stop, batcher.on_text, batcher.flush)
        if self.on_gpu:
            peak, kind = self._peak(), "vram"
        else:
            peak, kind = rss_bytes()[1], "rss"
        return ReplyReport(
            request_id=cmd.request_id,
            text=batcher.text,
            prompt_tokens=prompt_tokens,
            new_tokens=run.new_tokens,
            ttft_s=None if run.first_at is None else run.first_at - run.started,
            tokens_per_s=decode_speed(run.new_tokens, run.first_at, run.ended),
            total_s=run.ended - run.started,
            peak_memory_bytes=peak,
            memory_kind=kind,
            device=self.device,
            precision=self.precision,
            stopped=stop.is_set(),
            finish=run.finish,
        )

    def generate_ids(
        self,
        input_ids: Sequence[int],
        max_new: int,
        sampling: Sampling,
        stop: threading.Event,
        on_text: OnText,
    ) -> GenerationRun:
        """Continue ``input_ids`` by up to ``max_new`` tokens, handing ``on_text`` the text
        of every token (the HTTP server's requests come tokenized). Main thread only, like
        :meth:`generate`; ``stop`` ends it within a token."""
        if self.model is None:
            raise WorkerFailure("No model is loaded.", "no_model")
        torch = self.torch
        ids = torch.tensor([list(input_ids)], dtype=torch.long)
        encoded = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
        return self._generate(encoded, max(1, max_new), sampling, stop, on_text, lambda: None)

    def _generate(
        self,
        encoded: Mapping[str, Any],
        max_new: int,
        sampling: Sampling,
        stop: threading.Event,
        on_text: OnText,
        on_failure: Callable[[], None],
    ) -> GenerationRun:
        """``model.generate`` with text out of every token; failures as WorkerFailure."""
        torch, model, tokenizer = self.torch, self.model, self.tokenizer
        import transformers

        prompt_tokens = int(encoded["input_ids"].shape[-1])
        # The embedding's device: a model spread over GPUs takes its input on the first.
        encoded = {k: v.to(self.input_device) for k, v in encoded.items()}
        if sampling.seed is not None:
            transformers.set_seed(sampling.seed)
        streamer = transformers.TextStreamer(tokenizer, skip_prompt=True, skip_special_tokens=True)
        first: list[float] = []

        def text_out(text: str, stream_end: bool = False, tokens: int = 1) -> None:
            if text and not first:
                first.append(time.perf_counter())
            on_text(text, stream_end=stream_end, tokens=tokens)

        started = time.perf_counter()
        flush_each_token(streamer, text_out)
        try:
            with torch.inference_mode():
                ids = model.generate(
                    **encoded,
                    max_new_tokens=max_new,
                    streamer=streamer,
                    stopping_criteria=stop_criteria(transformers, torch, stop),
                    pad_token_id=tokenizer.pad_token_id or tokenizer.eos_token_id,
                    **sampling.generate_kwargs(),
                )
        except Exception as exc:
            on_failure()
            trace = traceback.format_exc()
            if is_oom(exc):
                message = f"Out of memory while generating: {exc}"
                del exc  # its traceback holds the frames that hold the big tensors
                if self.on_gpu:
                    torch.cuda.empty_cache()
                raise WorkerFailure(message, "oom", trace) from None
            raise WorkerFailure(
                f"Generation failed: {type(exc).__name__}: {exc}", "generate", trace
            ) from exc
        ended = time.perf_counter()
        new_tokens = int(ids.shape[-1]) - prompt_tokens
        last = int(ids[0, -1]) if new_tokens > 0 else None
        return GenerationRun(
            prompt_tokens=prompt_tokens,
            new_tokens=new_tokens,
            started=started,
            first_at=first[0] if first else None,
            ended=ended,
            finish=finish_reason(stop.is_set(), last, tokenizer.eos_token_id),
        )


def _device_name(gpus: list[dict[str, Any]]) -> str:
    """``Radeon RX 7900 XTX``, or for a spread model ``2 × Radeon RX 7900 XTX`` (or the
    names joined with "+" when the cards differ)."""
    names = [str(g["name"]) for g in gpus]
    if len(set(names)) == 1 and len(names) > 1:
        return f"{len(names)} × {names[0]}"
    return " + ".join(names)
