"""The vLLM-on-ROCm command that serves the same model, for when one GPU is not enough.

rocmpanel serves the loaded model on one device, one request at a time. vLLM splits a
model over several GPUs (tensor parallel) and answers many requests at once; this module
writes the equivalent ``vllm serve`` line for a model folder and a set of GPUs, and the
``docker run`` line that runs it in vLLM's ROCm image. The facts (image, container flags,
supported GPUs, what does not carry over) and their sources live in
``resources/serve.yaml``.

The API key is never in the line: it names the shell variable ``ROCMPANEL_API_KEY`` and
hands it to vLLM as ``VLLM_API_KEY`` (which vLLM reads like ``--api-key``), so the line can
be pasted into a chat or a bug report, and the key stays out of the process list, which
every user of the machine can read.
"""

from __future__ import annotations

import csv
import io
import os
import re
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import translate
from rocmpanel.chat.serve_protocol import DEFAULT_HOST, DEFAULT_PORT, is_loopback

SERVE_YAML = "serve.yaml"
KEY_VARIABLE = "ROCMPANEL_API_KEY"
KEY_REFERENCE = f"${KEY_VARIABLE}"  # an env value that names the variable, not a value
VLLM_KEY_VARIABLE = "VLLM_API_KEY"
GPU_VARIABLE = "HIP_VISIBLE_DEVICES"
CONTAINER_HOST = "0.0.0.0"  # inside the container; the host side is published on `host` only
WINDOWS = "windows"


@dataclass(frozen=True)
class VllmFacts:
    """What ``resources/serve.yaml`` says about vLLM on ROCm."""

    image: str
    entrypoint: str
    docker_flags: tuple[str, ...]
    model_mount: str
    supported_gfx: tuple[str, ...]
    windows: bool
    bnb_gfx_prefixes: tuple[str, ...]
    sources: tuple[str, ...]  # URLs, in the order the data names them


@dataclass(frozen=True)
class VllmCommand:
    """The command, in the forms a user runs it, and what to know about it."""

    argv: tuple[str, ...]  # vllm serve ...
    env: tuple[tuple[str, str], ...]  # a value "$NAME" refers to the shell variable NAME
    docker: tuple[str, ...]  # the docker run argv that runs argv in vLLM's ROCm image
    text: str  # one copyable shell line: env + argv
    docker_text: str  # the same for docker (the key passed through from the environment)
    notes: tuple[str, ...]  # what differs from rocmpanel's serving, GPU support
    sources: tuple[str, ...]  # URLs


def _strings(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{what} must be a list of strings")
    return tuple(value)


def parse(text: str) -> VllmFacts:
    """The facts in the text of ``serve.yaml``; PanelError when it is not what it should be."""
    import yaml

    try:
        data = yaml.safe_load(text)
        sources: Mapping[str, Any] = data["sources"]
        vllm = data["vllm"]
        keys = _strings(vllm["src"], "vllm.src")
        urls = tuple(str(sources[key]["url"]) for key in keys)
        facts = VllmFacts(
            image=str(vllm["image"]),
            entrypoint=str(vllm["entrypoint"]),
            docker_flags=_strings(vllm["docker_flags"], "vllm.docker_flags"),
            model_mount=str(vllm["model_mount"]).rstrip("/"),
            supported_gfx=_strings(vllm["supported_gfx"], "vllm.supported_gfx"),
            windows=bool(vllm["windows"]),
            bnb_gfx_prefixes=_strings(vllm["bnb_gfx_prefixes"], "vllm.bnb_gfx_prefixes"),
            sources=urls,
        )
    except yaml.YAMLError as exc:
        raise PanelError(
            translate("vllm", "{file} is not valid YAML.").format(file=SERVE_YAML), str(exc)
        ) from exc
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise PanelError(_malformed(), repr(exc)) from exc
    if not facts.image or not facts.model_mount.startswith("/"):
        raise PanelError(_malformed(), "vllm.image or vllm.model_mount")
    return facts


def _malformed() -> str:
    return translate("vllm", "{file} is malformed.").format(file=SERVE_YAML)


@lru_cache(maxsize=1)
def load_facts() -> VllmFacts:
    """The shipped facts (read once per process)."""
    from rocmpanel.base.resources import read_resource

    try:
        return parse(read_resource(SERVE_YAML))
    except OSError as exc:
        raise PanelError(
            translate("vllm", "Could not read {file}.").format(file=SERVE_YAML), str(exc)
        ) from exc


def this_os() -> str:
    """The OS name the inventory uses for this machine ("linux" or "windows")."""
    return WINDOWS if sys.platform == "win32" else "linux"


def _quoted(value: str) -> str:
    """A shell word: the key reference in double quotes (so the shell expands it), every
    other value quoted as needed."""
    return f'"{value}"' if value == KEY_REFERENCE else shlex.quote(value)


def shell_line(env: Sequence[tuple[str, str]], argv: Sequence[str]) -> str:
    """``NAME=value ... program args`` for a POSIX shell."""
    words = [f"{name}={_quoted(value)}" for name, value in env]
    return " ".join([*words, *(_quoted(a) for a in argv)])


def _folder(model_dir: str, os_name: str) -> tuple[str, str]:
    """(the folder's path, its name: the model id both servers answer with)."""
    path = os.path.expanduser(model_dir.strip())
    if os_name != WINDOWS and not path.startswith("/"):
        path = os.path.abspath(path)  # docker -v needs an absolute path
    trimmed = path.rstrip("/\\") or path
    return trimmed, re.split(r"[\\/]", trimmed)[-1] or "model"


def _published(host: str, port: int) -> str:
    """docker -p: the container's port published on ``host`` only (an address: docker
    takes no host names, so localhost is written 127.0.0.1)."""
    host = "127.0.0.1" if host.strip().lower() == "localhost" else host
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"{shown}:{port}:{port}"


def _mount(path: str, inside: str) -> str:
    """docker --mount for ``path`` read-only at ``inside``: unlike -v it takes a path with
    a colon; its value is comma-separated (CSV), so a field with a comma is quoted."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow(
        ["type=bind", f"src={path}", f"dst={inside}", "readonly"]
    )
    return buffer.getvalue()


def _notes(
    facts: VllmFacts, gpus: Sequence[int], gfx: Sequence[str], host: str, os_name: str
) -> tuple[str, ...]:
    from rocmpanel.base.api_key import key_file

    tp = max(1, len(gpus))
    notes: list[str] = []
    if tp > 1:
        notes.append(
            translate(
                "vllm",
                "vLLM splits the model over {count} GPUs (tensor parallel) and answers many "
                "requests at once; rocmpanel serves on one device, one request at a time.",
            ).format(count=tp)
        )
    else:
        notes.append(
            translate(
                "vllm",
                "With one GPU this serves on one device, as rocmpanel does, but answers many "
                "requests at once; select more GPUs to split the model over them.",
            )
        )
    notes.append(
        translate(
            "vllm",
            "It serves the folder's own weights in their dtype (usually bf16): about 2 bytes "
            "per parameter, spread over the GPUs, plus the KV cache; vLLM takes 90% of each "
            "GPU's memory by default (--gpu-memory-utilization). rocmpanel's 4-bit and 8-bit "
            "(bitsandbytes) do not carry over: vLLM loads bitsandbytes on ROCm only on Radeon "
            "GPUs, not on Instinct.",
        )
    )
    supported = ", ".join(facts.supported_gfx)
    unknown = [g for g in dict.fromkeys(gfx) if g not in facts.supported_gfx]
    supports = translate("vllm", "vLLM on ROCm supports {targets}.")
    if not gfx:
        notes.append(supports.format(targets=supported))
    elif unknown:
        not_among = (
            translate(
                "vllm",
                "vLLM on ROCm supports {targets}; {target} is not among them, so it may not "
                "run here.",
            )
            if len(unknown) == 1
            else translate(
                "vllm",
                "vLLM on ROCm supports {targets}; {target} are not among them, so it may not "
                "run here.",
            )
        )
        notes.append(not_among.format(targets=supported, target=", ".join(unknown)))
    else:
        notes.append(supports.format(targets=", ".join(dict.fromkeys(gfx))))
    notes.append(
        translate(
            "vllm",
            'Set {variable} to the API key first (export {variable}="$(cat {file})"): vLLM '
            "reads it as {vllm_variable}, so the key is neither in this line nor in the "
            "process list. vLLM checks the key only under /v1 and a few other paths, so other "
            "endpoints answer anyone who can reach it.",
        ).format(
            variable=KEY_VARIABLE,
            file=shlex.quote(str(key_file())),
            vllm_variable=VLLM_KEY_VARIABLE,
        )
    )
    if not is_loopback(host):
        notes.append(
            translate(
                "vllm",
                "It listens on {host}: anyone who can reach this machine there can use the "
                "endpoints vLLM does not guard, over plain HTTP.",
            ).format(host=host)
        )
    if os_name == WINDOWS and not facts.windows:
        notes.append(
            translate(
                "vllm",
                "vLLM does not run on Windows (its documentation points to WSL): run this on a "
                "Linux machine with the GPUs; the line is for a POSIX shell such as bash.",
            )
        )
    return tuple(notes)


def vllm_command(
    model_dir: str,
    gpus: Sequence[int],
    *,
    port: int = DEFAULT_PORT,
    host: str = DEFAULT_HOST,
    gfx: Sequence[str] = (),
    os_name: str = "",
    facts: VllmFacts | None = None,
) -> VllmCommand:
    """The vLLM command serving ``model_dir`` over ``gpus`` (HIP device numbers; none: one
    GPU, tensor parallel 1) on ``host``:``port``, under the model folder's name as its id.

    ``gfx``: the GPUs' targets (checked against vLLM's list); ``os_name``: "linux" or
    "windows" (default: this machine's)."""
    facts = facts or load_facts()
    os_name = os_name or this_os()
    path, name = _folder(model_dir, os_name)
    tp = str(max(1, len(gpus)))
    env: list[tuple[str, str]] = [(VLLM_KEY_VARIABLE, KEY_REFERENCE)]
    if gpus:
        env.append((GPU_VARIABLE, ",".join(str(g) for g in gpus)))
    served = (f"--served-model-name={name}",)  # one word: a name such as -x is no option
    argv = (
        "vllm",
        "serve",
        path,
        *served,
        "--host",
        host,
        "--port",
        str(port),
        "--tensor-parallel-size",
        tp,
    )
    inside = f"{facts.model_mount}/{re.sub(r'[^A-Za-z0-9._-]', '_', name)}"
    docker_env: tuple[str, ...] = ("-e", VLLM_KEY_VARIABLE)  # passed through, not written
    if gpus:
        docker_env += ("-e", f"{GPU_VARIABLE}={env[1][1]}")
    docker = (
        "docker",
        "run",
        *facts.docker_flags,
        *docker_env,
        "-p",
        _published(host, port),
        "--mount",
        _mount(path, inside),
        "--entrypoint",
        facts.entrypoint,
        facts.image,
        "serve",
        inside,
        *served,
        "--host",
        CONTAINER_HOST,
        "--port",
        str(port),
        "--tensor-parallel-size",
        tp,
    )
    return VllmCommand(
        argv=argv,
        env=tuple(env),
        docker=docker,
        text=shell_line(env, argv),
        docker_text=shell_line(env[:1], docker),
        notes=_notes(facts, gpus, gfx, host, os_name),
        sources=facts.sources,
    )


def for_this_machine(
    model_dir: str, *, port: int, host: str, gpus: tuple[str, ...] | None = None
) -> VllmCommand:
    """The command over the GPUs jobs run on (``gpus``: PCI addresses; None: the saved
    choice, by default the discrete GPUs: tensor parallel needs cards alike), numbered as
    the runtime lists them."""
    from rocmpanel.jobs import gpu_choice

    choice = gpu_choice.resolve(gpus)
    gfx = [g.gfx for g in choice.gpus if g.gfx]
    return vllm_command(model_dir, choice.indices, port=port, host=host, gfx=gfx, os_name=this_os())


def command_lines(command: VllmCommand) -> list[str]:
    """The command as ``rocmpanel serve --vllm`` prints it: both lines, then the notes and
    the sources as shell comments (the whole text can be pasted into a shell)."""
    return [
        "# vLLM on ROCm, to run instead when one GPU is not enough:",
        command.text,
        "# or in vLLM's ROCm Docker image:",
        command.docker_text,
        "# Notes:",
        *(f"# - {note}" for note in command.notes),
        "# Sources:",
        *(f"# {source}" for source in command.sources),
    ]
