"""The chat worker's commands and answers as the panel builds and reads them."""

from __future__ import annotations

import dataclasses

from rocmpanel.base.enums import Device, Precision
from rocmpanel.base.settings import ChatSettings, Settings
from rocmpanel.chat.protocol import (
    GenerateRequest,
    LoadedModel,
    LoadRequest,
    Reply,
    Sampling,
    smaller_setting,
)
from rocmpanel.jobs.protocol import ReplyDone, parse_line


def test_load_requests_send_enum_values() -> None:
    load = LoadRequest("/m", Precision.INT8, Device.CPU, 2048)
    assert load.op == "load"
    fields = load.fields()
    assert fields["precision"] == "int8" and fields["device"] == "cpu"
    assert fields["trust_remote_code"] is False
    assert LoadRequest("/m", Precision.NF4, Device.GPU, 1).fields()["device"] == "gpu"


def test_sampling_defaults_are_the_settings_declarations() -> None:
    declared = ChatSettings()
    sampling = Sampling.declared()
    for field in dataclasses.fields(Sampling):
        assert getattr(sampling, field.name) == getattr(declared, field.name), field.name
    # The values the old copies disagreed on: the declaration wins.
    assert sampling.repetition_penalty == declared.repetition_penalty == 1.1
    assert sampling.max_new_tokens == declared.max_new_tokens == 512
    settings = Settings()
    settings.chat.temperature = 0.2
    assert Sampling.from_settings(settings.chat, top_k=3) == dataclasses.replace(
        sampling, temperature=0.2, top_k=3
    )


def test_generate_requests_send_every_value_explicitly() -> None:
    request = GenerateRequest(
        3, (("user", "hi"),), "sys", Sampling.declared(seed=-1, temperature=0.0)
    )
    fields = request.fields()
    assert fields["messages"] == [{"role": "user", "content": "hi"}]
    assert fields["seed"] is None and fields["temperature"] == 0.0
    for key in ("top_p", "top_k", "repetition_penalty", "max_new_tokens"):
        assert fields[key] is not None, key


def test_replies_are_read_from_typed_reply_events() -> None:
    done = parse_line(
        '{"event": "reply", "id": 3, "text": "ok", "new_tokens": 2, "finish": "eos",'
        ' "device": "gpu", "precision": "nf4"}'
    )
    assert isinstance(done, ReplyDone) and done.request_id == 3
    reply = Reply.from_done(done)
    assert reply.id == 3 and reply.text == "ok" and reply.finish == "eos"
    assert reply.figures.new_tokens == 2 and reply.figures.device is Device.GPU


def test_loaded_model_reads_the_worker_report() -> None:
    requested = LoadRequest("/m", Precision.FP16, Device.AUTO, 4096)
    loaded = LoadedModel.from_result(
        {
            "kind": "loaded",
            "path": "/m",
            "precision": "fp16",
            "device": "cuda",  # what workers before the enums said
            "device_name": "Radeon RX 7900 XTX",
            "bdf": "0000:03:00.0",
            "parameters": 7_000_000_000,
            "context_length": 4096,
            "load_s": 12.5,
            "memory_bytes": 14 * 1024**3,
            "memory_kind": "vram",
        },
        requested,
    )
    assert loaded.device is Device.GPU and loaded.on_gpu and loaded.bdf == "0000:03:00.0"
    assert loaded.precision is Precision.FP16 and loaded.parameters == 7_000_000_000
    garbled = LoadedModel.from_result({"precision": "q3", "device": "tpu"}, requested)
    assert garbled.precision is Precision.FP16 and garbled.device is Device.AUTO
    assert garbled.bdf is None and garbled.path == "/m"
    assert loaded.preset is None and garbled.preset is None


def test_loaded_model_names_the_preset_it_runs_under() -> None:
    requested = LoadRequest("/m", Precision.FP16, Device.AUTO, 4096)
    preset = {"id": "low-vram", "name": "Low VRAM"}
    assert LoadedModel.from_result({"preset": preset}, requested).preset == "Low VRAM"
    assert LoadedModel.from_result({"preset": {"id": "x"}}, requested).preset == "x"
    assert LoadedModel.from_result({"preset": "Low VRAM"}, requested).preset is None
    assert LoadedModel.from_result({"preset": {"name": 3}}, requested).preset is None


def test_smaller_settings() -> None:
    assert smaller_setting(Precision.FP16, 8192) == (Precision.INT8, 8192)
    assert smaller_setting(Precision.NF4, 8192) == (Precision.NF4, 4096)
    assert smaller_setting(Precision.NF4, 600) == (Precision.NF4, 512)
    request = LoadRequest("/m", Precision.BF16, Device.GPU, 4096)
    assert request.smaller() == LoadRequest("/m", Precision.INT8, Device.GPU, 4096)
