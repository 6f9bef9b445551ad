"""Check a local Hugging Face model folder before anything tries to load it.

Pure inspection with the standard library: ``config.json`` (architecture, sizes, custom
code), the safetensors shards (present, complete, and their tensor headers, which give the
parameter count without loading a byte of weights), the tokenizer files and the chat
template. The result says what blocks a load (``problems``) and what the user should know
(``warnings``). Pickled ``.bin`` weights are refused: loading them can run code.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import struct
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from rocmpanel.base import files
from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import translate
from rocmpanel.base.units import format_count, format_memory

# Model types loaded by transformers' own code that share LLaMA's decoder layout closely
# enough for the memory estimate (GQA attention, a KV cache of 2 × layers × kv heads).
LLAMA_FAMILY = frozenset(
    {"llama", "mistral", "mixtral", "qwen2", "qwen3", "gemma", "gemma2", "phi3", "olmo"}
)
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json")
MAX_HEADER_BYTES = 100 * files.MIB  # a safetensors header; real ones are < 10 MiB
MAX_JSON_BYTES = 32 * files.MIB  # config.json, tokenizer_config.json, the shard index
MAX_TOKENIZER_BYTES = files.CAPTURE_LIMIT  # tokenizer.json (Gemma 3's is about 33 MB)
# More parameters than any model ever published by far (the largest are ~2 * 10**12): a
# header claiming more is damaged, not a model to estimate (the messages say "10 trillion").
MAX_PARAMETERS = 10**13
# The dtypes the safetensors format defines (safetensors' Dtype enum).
SAFETENSORS_DTYPES = frozenset(
    {
        "BOOL", "U8", "I8", "U16", "I16", "U32", "I32", "U64", "I64",
        "F4", "F6_E2M3", "F6_E3M2", "F8_E4M3", "F8_E5M2", "F8_E8M0",
        "F16", "BF16", "F32", "F64", "C64",
    }
)  # fmt: skip


class TemplateSource(Enum):
    """Where the chat template comes from."""

    FILE = "chat_template file"
    TOKENIZER_CONFIG = "tokenizer_config.json"
    FALLBACK = "built-in fallback"


@dataclass(frozen=True)
class ModelShape:
    """The sizes the memory estimate needs, from config.json (None: not given)."""

    hidden_size: int | None = None
    layers: int | None = None
    attention_heads: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    vocab_size: int | None = None
    max_positions: int | None = None
    tied_embeddings: bool = False


@dataclass(frozen=True)
class ModelCheck:
    """What a model folder holds and whether it can be loaded as it is."""

    folder: Path
    architecture: str | None
    model_type: str | None
    shape: ModelShape
    parameters: int | None
    weight_files: tuple[str, ...]
    weight_bytes: int
    weight_dtype: str | None
    tokenizer_files: tuple[str, ...]
    template: TemplateSource
    needs_remote_code: bool
    quantized_on_disk: str | None
    problems: tuple[str, ...]
    warnings: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def name(self) -> str:
        return self.folder.name

    def summary_lines(self) -> list[str]:
        params = "n/a" if self.parameters is None else format_count(self.parameters)
        lines = [
            f"Model: {self.folder}",
            f"Architecture: {self.architecture or 'n/a'} ({self.model_type or 'n/a'})",
            f"Parameters: {params}; weights on disk {format_memory(self.weight_bytes)}"
            f" in {len(self.weight_files)} safetensors file(s), {self.weight_dtype or 'n/a'}",
            f"Chat template: {self.template.value}",
        ]
        lines += [f"Problem: {p}" for p in self.problems]
        lines += [f"Warning: {w}" for w in self.warnings]
        return lines


def _read_exactly(fd: int, count: int) -> bytes:
    chunks: list[bytes] = []
    left = count
    while left > 0:
        chunk = os.read(fd, min(left, files.MIB))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_safetensors_header(path: Path) -> dict[str, Any]:
    """The JSON header of a safetensors file (8-byte little-endian length, then JSON): only
    those bytes are read, at most :data:`MAX_HEADER_BYTES`, never a weight. A FIFO, a
    device or a header longer than the file is a PanelError that says so, never a hang."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise PanelError(
                    translate(
                        "model_check",
                        "{file} is not a regular file (a FIFO, a device or a socket), so it is "
                        "not a safetensors file.",
                    ).format(file=path.name)
                )
            raw = _read_exactly(fd, 8)
            if len(raw) != 8:
                raise PanelError(
                    translate(
                        "model_check", "{file} is too short to be a safetensors file."
                    ).format(file=path.name)
                )
            (length,) = struct.unpack("<Q", raw)
            if length <= 0 or length > MAX_HEADER_BYTES or length > info.st_size - 8:
                raise PanelError(
                    translate(
                        "model_check", "{file} has an implausible safetensors header."
                    ).format(file=path.name)
                )
            data = _read_exactly(fd, length)
        finally:
            os.close(fd)
    except OSError as exc:
        raise PanelError(_could_not_read(path, exc)) from exc
    if len(data) != length:
        raise PanelError(
            translate(
                "model_check", "{file} is cut short: its safetensors header is incomplete."
            ).format(file=path.name)
        )
    try:
        header = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise PanelError(_damaged_header(path), str(exc)) from exc
    if not isinstance(header, dict):
        raise PanelError(_damaged_header(path))
    return header


def _could_not_read(path: Path, exc: OSError) -> str:
    return translate("model_check", "Could not read {file}: {reason}.").format(
        file=path.name, reason=exc.strerror or exc
    )


def _damaged_header(path: Path) -> str:
    return translate("model_check", "{file} has a damaged safetensors header.").format(
        file=path.name
    )


def _count_tensors(
    header: dict[str, Any], name: str = "model.safetensors"
) -> tuple[int, dict[str, int]]:
    """Parameters in one header, and how many elements each dtype holds. A tensor entry that
    is not ``{"dtype": <a safetensors dtype>, "shape": [<sizes >= 0>], ...}`` is a PanelError
    that names the file and the tensor ("model.safetensors has a damaged header: ...")."""
    total = 0
    by_dtype: dict[str, int] = {}
    for tensor, info in header.items():
        if tensor == "__metadata__":
            continue
        label = _short(tensor)
        if not isinstance(info, dict):
            raise _damaged(
                name,
                translate(
                    "model_check", "the entry of tensor {tensor} is not a description"
                ).format(tensor=label),
            )
        shape = info.get("shape")
        if not isinstance(shape, list) or not all(
            isinstance(dim, int) and not isinstance(dim, bool) and dim >= 0 for dim in shape
        ):
            raise _damaged(
                name,
                translate(
                    "model_check", "tensor {tensor} has the shape {shape}, not a list of sizes"
                ).format(tensor=label, shape=_short(shape)),
            )
        dtype = info.get("dtype")
        if not isinstance(dtype, str) or dtype not in SAFETENSORS_DTYPES:
            raise _damaged(
                name,
                translate("model_check", "tensor {tensor} has the unknown dtype {dtype}").format(
                    tensor=label, dtype=_short(dtype)
                ),
            )
        count = 1
        for dim in shape:
            count *= dim
            if count > MAX_PARAMETERS:
                break  # a 10**40 dimension, or many large ones: no need to multiply on
        total += count
        if count > MAX_PARAMETERS or total > MAX_PARAMETERS:
            raise _damaged(
                name,
                translate(
                    "model_check",
                    "tensor {tensor} would hold more than 10 trillion parameters, far more "
                    "than any model",
                ).format(tensor=label),
            )
        by_dtype[dtype] = by_dtype.get(dtype, 0) + count
    return total, by_dtype


def _short(value: object, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters, for a message."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _damaged(name: str, detail: str) -> PanelError:
    return PanelError(
        translate(
            "model_check",
            "{file} has a damaged header: {detail}. Download the file again; it cannot be loaded "
            "as it is.",
        ).format(file=name, detail=detail)
    )


def _int(config: dict[str, Any], *keys: str) -> int | None:
    for key in keys:
        value = config.get(key)
        # A size is a positive integer of sane magnitude; a negative, zero or absurd one in
        # a damaged config.json is left out (the estimate then skips that part).
        if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**40:
            return value
    return None


def read_shape(config: dict[str, Any]) -> ModelShape:
    """The sizes in a config.json (text_config is used for multimodal wrappers)."""
    inner = config.get("text_config")
    if isinstance(inner, dict):
        config = {**config, **inner}
    hidden = _int(config, "hidden_size", "n_embd", "d_model")
    heads = _int(config, "num_attention_heads", "n_head")
    kv_heads = _int(config, "num_key_value_heads") or heads
    head_dim = _int(config, "head_dim")
    if head_dim is None and hidden and heads:
        head_dim = hidden // heads
    return ModelShape(
        hidden_size=hidden,
        layers=_int(config, "num_hidden_layers", "n_layer"),
        attention_heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        vocab_size=_int(config, "vocab_size"),
        max_positions=_int(config, "max_position_embeddings", "n_positions"),
        tied_embeddings=bool(config.get("tie_word_embeddings", False)),
    )


def _load_json(path: Path) -> Any:
    """A model folder's JSON file, read bounded (:data:`MAX_JSON_BYTES`) and never from a
    FIFO or a device; PanelError that says what is wrong."""
    try:
        data = files.read_bytes(path, MAX_JSON_BYTES)
    except (files.NotRegularFileError, files.TooLargeError) as exc:
        raise PanelError(_cannot_be_used(path, exc)) from exc
    except OSError as exc:
        raise PanelError(_could_not_read(path, exc)) from exc
    try:
        return json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise PanelError(
            translate("model_check", "{file} is not valid JSON.").format(file=path.name), str(exc)
        ) from exc


def _cannot_be_used(path: Path, exc: OSError) -> str:
    return translate("model_check", "{file} cannot be used: {reason}.").format(
        file=path.name, reason=_after_path(exc, path)
    )


def _after_path(exc: OSError, path: Path) -> str:
    """base/files' sentence without the full path it starts with ("is a FIFO ...")."""
    text = str(exc)
    return "it " + text[len(str(path)) + 1 :] if text.startswith(f"{path} ") else text


def _weights(folder: Path, problems: list[str]) -> list[Path]:
    index = folder / "model.safetensors.index.json"
    files = sorted(folder.glob("*.safetensors"))
    if index.exists():  # a FIFO or a device there: _load_json says so
        try:
            data = _load_json(index)
        except PanelError as exc:
            problems.append(exc.message)
            return files
        listed = _listed_shards(index.name, data, problems)
        if listed is None:
            return []
        missing = [name for name in listed if not (folder / name).is_file()]
        if missing:
            problems.append(
                translate(
                    "model_check",
                    "{missing} of {listed} weight shards are missing (first: {first}); the "
                    "download is incomplete.",
                ).format(missing=len(missing), listed=len(listed), first=missing[0])
            )
        if listed:
            return [folder / name for name in listed if (folder / name).is_file()]
    if not files:
        pickled = sorted(p.name for p in folder.glob("*.bin") if "pytorch_model" in p.name)
        pickled += sorted(p.name for p in folder.glob("*.pt*"))
        if pickled:
            problems.append(
                translate(
                    "model_check",
                    "Only pickled weights were found ({file}); rocmpanel loads safetensors "
                    "only, because pickled files can run code. Convert the model or pick the "
                    "safetensors version.",
                ).format(file=pickled[0])
            )
        else:
            problems.append(
                translate(
                    "model_check", "No weights were found: the folder has no .safetensors files."
                )
            )
    return files


def _listed_shards(name: str, data: Any, problems: list[str]) -> list[str] | None:
    """The shard files a shard index names, or None (with a problem) when the index is
    damaged: not ``{"weight_map": {tensor: file}}``, a file that is not a string, or one
    outside the model folder (an absolute path or ``..``)."""
    weight_map = data.get("weight_map") if isinstance(data, dict) else None
    if not isinstance(weight_map, dict):
        problems.append(
            translate(
                "model_check",
                "{file} is damaged: its weight_map is not a mapping from tensor names to "
                "files. Download the model again.",
            ).format(file=name)
        )
        return None
    listed: set[str] = set()
    for value in weight_map.values():
        if not isinstance(value, str) or not value.strip():
            problems.append(
                translate(
                    "model_check",
                    "{file} is damaged: its weight_map names the shard {shard}, which is not a "
                    "file name. Download the model again.",
                ).format(file=name, shard=_short(value))
            )
            return None
        relative = Path(value)
        if relative.is_absolute() or ".." in relative.parts:
            problems.append(
                translate(
                    "model_check",
                    "{file} names the shard {shard}, which is outside the model folder; "
                    "rocmpanel reads only files inside it.",
                ).format(file=name, shard=_short(value))
            )
            return None
        listed.add(value)
    return sorted(listed)


def _tokenizer_problem(path: Path) -> str | None:
    """What is wrong with a tokenizer.json, or None. transformers reads its ``added_tokens``
    list (each entry with an integer ``id``) and tokenizers its ``model`` object; without
    them the load fails deep inside transformers (``KeyError: 'added_tokens'``)."""
    try:
        data = files.read_bytes(path, MAX_TOKENIZER_BYTES)
    except (files.NotRegularFileError, files.TooLargeError) as exc:
        return _cannot_be_used(path, exc)
    except OSError as exc:
        return _could_not_read(path, exc)
    detail: str | None = translate("model_check", "it is not valid JSON")
    with contextlib.suppress(ValueError, RecursionError):  # UnicodeDecodeError: a ValueError
        detail = _tokenizer_detail(json.loads(data.decode("utf-8")))
    if detail is None:
        return None
    return translate(
        "model_check", "{file} is damaged: {detail}. Download the model's tokenizer files again."
    ).format(file=path.name, detail=detail)


def _tokenizer_detail(tokenizer: Any) -> str | None:
    if not isinstance(tokenizer, dict):
        return translate("model_check", "it is not a JSON object")
    added = tokenizer.get("added_tokens")
    if not isinstance(added, list):
        return translate("model_check", "it has no 'added_tokens' list")
    for entry in added:
        token_id = entry.get("id") if isinstance(entry, dict) else None
        if not isinstance(token_id, int) or isinstance(token_id, bool) or token_id < 0:
            return translate(
                "model_check", "its 'added_tokens' list holds {entry}, which has no token id"
            ).format(entry=_short(entry))
    if not isinstance(tokenizer.get("model"), dict):
        return translate("model_check", "it has no 'model' section")
    return None


def _template(folder: Path, tokenizer_config: dict[str, Any]) -> TemplateSource:
    if (folder / "chat_template.jinja").is_file() or (folder / "chat_template.json").is_file():
        return TemplateSource.FILE
    if tokenizer_config.get("chat_template"):
        return TemplateSource.TOKENIZER_CONFIG
    return TemplateSource.FALLBACK


def check_model(folder: Path | str, *, trust_remote_code: bool = False) -> ModelCheck:
    """Inspect ``folder``; never loads weights. Raises PanelError only for a missing folder."""
    folder = Path(folder).expanduser()
    if not folder.is_dir():
        raise PanelError(
            translate("model_check", "{folder} is not a folder.").format(folder=folder)
        )
    problems: list[str] = []
    warnings: list[str] = []
    config: dict[str, Any] = {}
    config_path = folder / "config.json"
    if not config_path.exists():
        problems.append(
            translate(
                "model_check", "config.json is missing: this is not a Hugging Face model folder."
            )
        )
    else:
        try:
            loaded = _load_json(config_path)
        except PanelError as exc:
            problems.append(exc.message)
        else:
            if isinstance(loaded, dict):
                config = loaded
            else:
                problems.append(
                    translate(
                        "model_check",
                        "config.json holds no settings object (a JSON object is expected): "
                        "this is not a Hugging Face model folder.",
                    )
                )
    architectures = config.get("architectures")
    architecture = (
        str(architectures[0]) if isinstance(architectures, list) and architectures else None
    )
    model_type = str(config["model_type"]) if config.get("model_type") else None
    if config and architecture is None:
        warnings.append(translate("model_check", "config.json names no architecture."))
    elif architecture and not architecture.endswith("ForCausalLM"):
        problems.append(
            translate(
                "model_check", "{architecture} is not a text-generation (causal LM) model."
            ).format(architecture=architecture)
        )
    if model_type and model_type not in LLAMA_FAMILY:
        warnings.append(
            translate(
                "model_check",
                "Model type {type} is not LLaMA-family; loading may work, the memory estimate "
                "may be off.",
            ).format(type=repr(model_type))
        )
    tokenizer_config: dict[str, Any] = {}
    tc_path = folder / "tokenizer_config.json"
    if tc_path.exists():
        try:
            loaded = _load_json(tc_path)
            tokenizer_config = loaded if isinstance(loaded, dict) else {}
        except PanelError as exc:
            warnings.append(exc.message)
    # auto_map (in config.json or tokenizer_config.json) is how a repository asks
    # transformers to import its own Python files.
    needs_remote_code = "auto_map" in config or "auto_map" in tokenizer_config
    if needs_remote_code:
        if trust_remote_code:
            warnings.append(
                translate(
                    "model_check",
                    "This model ships its own Python code and you allowed it to run: it runs "
                    "with your user's rights. Only do this for a repository you trust.",
                )
            )
        else:
            problems.append(
                translate(
                    "model_check",
                    "This model needs its own Python code (auto_map / custom modelling "
                    "files), which rocmpanel does not run unless you allow remote code for "
                    "this model.",
                )
            )
    quant = config.get("quantization_config")
    quantized_on_disk = None
    if isinstance(quant, dict):
        quantized_on_disk = str(quant.get("quant_method", "unknown"))
        warnings.append(
            translate(
                "model_check",
                "The weights are already quantized ({method}); the precision choice does not "
                "apply.",
            ).format(method=quantized_on_disk)
        )

    files = _weights(folder, problems)
    parameters: int | None = None
    by_dtype: dict[str, int] = {}
    weight_bytes = 0
    for path in files:
        try:
            weight_bytes += path.stat().st_size
            count, dtypes = _count_tensors(read_safetensors_header(path), path.name)
        except (OSError, PanelError) as exc:
            problems.append(exc.message if isinstance(exc, PanelError) else str(exc))
            continue
        parameters = (parameters or 0) + count
        if parameters > MAX_PARAMETERS:
            problems.append(
                translate(
                    "model_check",
                    "The safetensors headers add up to more than 10 trillion parameters, far "
                    "more than any model: a header is damaged. Download the model again.",
                )
            )
            parameters = None
            break
        for key, value in dtypes.items():
            by_dtype[key] = by_dtype.get(key, 0) + value
    weight_dtype = max(by_dtype, key=lambda k: by_dtype[k]) if by_dtype else None

    tokenizer_json = folder / "tokenizer.json"
    tokenizer_problem = None
    if os.path.lexists(tokenizer_json):  # also a FIFO, a device or a dangling link
        tokenizer_problem = _tokenizer_problem(tokenizer_json)
    if tokenizer_problem is not None:
        problems.append(tokenizer_problem)
    tokenizer_files = tuple(name for name in TOKENIZER_FILES if (folder / name).is_file())
    if not tokenizer_files and tokenizer_problem is None:
        problems.append(
            translate("model_check", "No tokenizer was found (tokenizer.json or tokenizer.model).")
        )
    template = _template(folder, tokenizer_config)
    if template is TemplateSource.FALLBACK:
        warnings.append(
            translate(
                "model_check",
                "The tokenizer has no chat template; a plain 'role: text' layout is used, "
                "which a base (non-chat) model may continue oddly.",
            )
        )
    return ModelCheck(
        folder=folder,
        architecture=architecture,
        model_type=model_type,
        shape=read_shape(config),
        parameters=parameters,
        weight_files=tuple(p.name for p in files),
        weight_bytes=weight_bytes,
        weight_dtype=weight_dtype,
        tokenizer_files=tokenizer_files,
        template=template,
        needs_remote_code=needs_remote_code,
        quantized_on_disk=quantized_on_disk,
        problems=tuple(problems),
        warnings=tuple(warnings),
    )
