"""ChatSession, the chat's state machine: every transition, with a fake worker (no Qt, no torch)."""

from __future__ import annotations

from typing import Any

import pytest

from rocmpanel.base.enums import Device, Precision
from rocmpanel.base.errors import PanelError
from rocmpanel.chat.protocol import LoadRequest, Sampling
from rocmpanel.chat.session import ChatSession, SessionState, describe_exit
from rocmpanel.jobs.process import JobOutcome, JobState
from rocmpanel.jobs.protocol import ReplyDone, Result, Token, WorkerError

REQUEST = LoadRequest("/models/tiny", Precision.FP16, Device.AUTO, 8192)
SAMPLING = Sampling.declared(temperature=0.0)
LOADED = {
    "kind": "loaded",
    "path": "/models/tiny",
    "precision": "fp16",
    "device": "gpu",
    "device_name": "Radeon",
    "bdf": "0000:03:00.0",
    "context_length": 8192,
}


class FakeWorker:
    """Records what is sent; ``running = False`` makes it refuse like a dead process."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.running = True

    def send(self, op: str, **fields: Any) -> None:
        if not self.running:
            raise PanelError("The worker is no longer running.")
        self.sent.append((op, fields))

    @property
    def ops(self) -> list[str]:
        return [op for op, _ in self.sent]


def token(text: str, request_id: int | None, count: int | None = 1) -> Token:
    return Token(text, request_id=request_id, count=count)


def reply(request_id: int | None, text: str = "Hi!", **figures: Any) -> ReplyDone:
    return ReplyDone(request_id, text, {"id": request_id, "new_tokens": 2, **figures})


def ready() -> tuple[ChatSession, FakeWorker]:
    session, worker = ChatSession(), FakeWorker()
    session.use_worker(worker, allow_hub=False)
    session.load(REQUEST)
    assert session.on_result(Result(LOADED)) is not None
    return session, worker


def generating(text: str = "Hello") -> tuple[ChatSession, FakeWorker]:
    session, worker = ready()
    assert session.add_user_message(text)
    session.start_reply("Be brief.", SAMPLING)
    return session, worker


def test_a_new_session_has_no_model_and_cannot_send() -> None:
    session = ChatSession()
    assert session.state is SessionState.NO_MODEL
    assert not session.can_send and not session.add_user_message("hi")
    assert session.needs_worker(allow_hub=False)
    with pytest.raises(PanelError):
        session.load(REQUEST)  # no worker to send it to
    assert session.state is SessionState.NO_MODEL and session.last_load is None


def test_load_then_loaded() -> None:
    session, worker = ChatSession(), FakeWorker()
    assert session.use_worker(worker, allow_hub=True) is None
    assert not session.needs_worker(allow_hub=True) and session.needs_worker(allow_hub=False)
    session.load(REQUEST)
    assert session.state is SessionState.LOADING and session.loading
    assert worker.sent == [("load", REQUEST.fields())]
    assert session.last_load == REQUEST
    assert session.on_result(Result({"kind": "unloaded", "had_model": False})) is None
    loaded = session.on_result(Result(LOADED))
    assert loaded is not None and loaded.device is Device.GPU and loaded.bdf == "0000:03:00.0"
    assert session.state is SessionState.READY and session.loaded is loaded
    assert session.can_send and not session.can_regenerate and not session.can_edit


def test_a_load_the_worker_cannot_take_changes_nothing() -> None:
    session, worker = ChatSession(), FakeWorker()
    session.use_worker(worker, allow_hub=False)
    worker.running = False
    with pytest.raises(PanelError):
        session.load(REQUEST)
    assert session.state is SessionState.NO_MODEL and session.last_load is None


def test_a_failed_load_is_a_failure_that_offers_a_retry_after_oom() -> None:
    session, worker = ChatSession(), FakeWorker()
    session.use_worker(worker, allow_hub=False)
    session.load(REQUEST)
    failure = session.on_error(
        WorkerError("Out of memory during load", "oom", data={"op": "load", "suggestion": "Less."})
    )
    assert session.state is SessionState.FAILED and session.loaded is None
    assert failure.model_lost and failure.offer_reload and not failure.abandoned_reply
    assert failure.message == "Out of memory during load Less."
    refused = session.on_error(WorkerError("no weights", "no_weights", data={"op": "load"}))
    assert refused.model_lost and not refused.offer_reload
    assert session.reload_request(smaller=False) == REQUEST
    smaller = session.reload_request(smaller=True)
    assert smaller is not None and smaller.precision is Precision.INT8


def test_a_reply_streams_for_its_request_and_ends_the_turn() -> None:
    session, worker = generating()
    assert session.state is SessionState.GENERATING and session.can_stop
    op, fields = worker.sent[-1]
    assert op == "generate" and fields["id"] == session.request_id == 1
    assert fields["messages"] == [{"role": "user", "content": "Hello"}]
    assert fields["system"] == "Be brief."
    assert not session.can_send and not session.can_edit and not session.can_regenerate
    streamed = session.on_tokens([token("Hi", 1, 1), token("?", 0), token("!", 1, None)])
    assert streamed is not None and (streamed.text, streamed.tokens) == ("Hi!", 2)
    assert session.on_tokens([token("old", 0)]) is None
    assert session.on_reply(reply(0)) is None  # an older request's end
    done = session.on_reply(reply(1, "Hi!", finish="eos"))
    assert done is not None and done.text == "Hi!" and done.finish == "eos"
    assert session.state is SessionState.READY
    assert session.history == [("user", "Hello"), ("assistant", "Hi!")]
    assert session.on_tokens([token("late", 1)]) is None  # no reply runs


def test_request_ids_grow_with_each_reply() -> None:
    session, worker = generating()
    session.on_reply(reply(1))
    session.add_user_message("Again")
    request = session.start_reply("", SAMPLING)
    assert request.id == 2 and worker.sent[-1][1]["id"] == 2
    assert len(request.messages) == 3


def test_stop_ends_the_reply_within_a_token() -> None:
    session, worker = generating()
    assert session.stop()
    assert worker.ops[-1] == "stop" and session.state is SessionState.STOPPING
    assert session.generating and not session.can_stop
    assert not session.stop()  # already asked
    assert session.on_tokens([token("x", 1)]) is not None  # the last token still counts
    done = session.on_reply(reply(1, "x", stopped=True, finish="stop"))
    assert done is not None and done.figures.stopped
    assert session.state is SessionState.READY
    assert not ChatSession().stop()


def test_a_new_chat_leaves_the_reply_and_ignores_its_end() -> None:
    session, worker = generating()
    session.conversation_id = 7
    session.new_conversation()
    assert worker.ops[-1] == "stop"
    assert session.state is SessionState.READY and session.history == []
    assert session.conversation_id is None
    assert session.on_tokens([token("late", 1)]) is None
    assert session.on_reply(reply(1)) is None and session.history == []
    session.add_user_message("Fresh")
    assert session.start_reply("", SAMPLING).id == 2


def test_regenerate_and_edit_last() -> None:
    session, _ = generating("First")
    assert session.regenerate() is None  # not while a reply runs
    assert session.edit_last() is None
    session.on_reply(reply(1, "One"))
    assert session.regenerate() == 1 and session.history == [("user", "First")]
    # After a reply that never finished, the user message is asked again as it is.
    assert session.regenerate() == 1 and session.history == [("user", "First")]
    session.start_reply("", SAMPLING)
    session.on_reply(reply(2, "Two"))
    session.add_user_message("Second")
    session.start_reply("", SAMPLING)
    session.on_reply(reply(3, "Three"))
    assert session.edit_last() == ("Second", 2)
    assert session.history == [("user", "First"), ("assistant", "Two")]


def test_a_generate_error_abandons_only_its_own_reply() -> None:
    session, _ = generating()
    other = session.on_error(WorkerError("old", "generate", data={"op": "generate", "id": 0}))
    assert not other.abandoned_reply and session.state is SessionState.GENERATING
    oom = session.on_error(
        WorkerError("Out of memory while generating", "oom", data={"op": "generate", "id": 1})
    )
    assert oom.abandoned_reply and oom.offer_reload and not oom.model_lost
    assert session.state is SessionState.READY and session.loaded is not None
    assert session.history == [("user", "Hello")]  # the unanswered message stays
    context = session.on_error(WorkerError("too long", "context", data={"op": "x"}))
    assert not context.offer_reload and not context.abandoned_reply


def test_the_worker_going_away_is_a_failure_that_offers_a_reload() -> None:
    session, worker = generating()
    killed = JobOutcome(JobState.CRASHED, -9, "killed", signal_name="SIGKILL")
    assert session.on_worker_exit(FakeWorker(), killed) is None  # not this session's
    failure = session.on_worker_exit(worker, killed)
    assert failure is not None and failure.offer_reload and failure.abandoned_reply
    assert failure.model_lost and "killed (SIGKILL" in failure.message
    assert session.state is SessionState.FAILED and session.worker is None
    assert session.loaded is None and not session.can_send
    assert session.history == [("user", "Hello")]
    assert session.needs_worker(allow_hub=False)
    idle = ChatSession()
    idle_worker = FakeWorker()
    idle.use_worker(idle_worker, allow_hub=False)
    quiet = idle.on_worker_exit(idle_worker, JobOutcome(JobState.FAILED, 1, "gone"))
    assert quiet is not None and not quiet.offer_reload


def test_a_new_worker_replaces_the_old_one_and_its_model() -> None:
    session, old = generating()
    new = FakeWorker()
    assert session.use_worker(new, allow_hub=True) is old
    assert session.loaded is None and session.state is SessionState.NO_MODEL
    assert session.worker_allows_hub and not session.needs_worker(allow_hub=True)
    assert session.drop_worker() is new and session.worker is None


def test_loading_during_a_reply_stops_it_first() -> None:
    session, worker = generating()
    session.load(REQUEST)
    assert worker.ops[-2:] == ["stop", "load"]
    assert session.state is SessionState.LOADING
    assert session.on_tokens([token("late", 1)]) is None
    assert session.on_reply(reply(1)) is None


def test_unload_and_a_late_loaded_result() -> None:
    session, worker = ChatSession(), FakeWorker()
    session.use_worker(worker, allow_hub=False)
    session.load(REQUEST)
    session.unload()  # given up while loading
    assert worker.ops == ["load", "unload"] and session.state is SessionState.NO_MODEL
    assert session.on_result(Result(LOADED)) is None and session.loaded is None
    session, worker = generating()
    worker.running = False  # already gone: nothing to stop or unload, no error
    session.unload()
    assert session.state is SessionState.NO_MODEL and worker.ops[-1] == "generate"


def test_a_reply_the_worker_cannot_take_leaves_the_session_ready() -> None:
    session, worker = ready()
    session.add_user_message("Hello")
    worker.running = False
    with pytest.raises(PanelError):
        session.start_reply("", SAMPLING)
    assert session.state is SessionState.READY and session.request_id == 0
    with pytest.raises(PanelError, match="Load a model"):
        ChatSession().start_reply("", SAMPLING)


def test_open_a_saved_conversation() -> None:
    session, _ = ready()
    turns = [("system", "S"), ("user", "Q"), ("assistant", "A")]
    assert session.open_conversation(4, turns)
    assert session.conversation_id == 4 and session.history == [("user", "Q"), ("assistant", "A")]
    session.add_user_message("More")
    session.start_reply("", SAMPLING)
    assert not session.open_conversation(5, [])
    assert session.conversation_id == 4


def test_worker_exits_are_described_plainly() -> None:
    cancelled = JobOutcome(JobState.CANCELLED, -15, "Cancelled.")
    assert describe_exit(cancelled) == "it was cancelled."
    killed = JobOutcome(JobState.CRASHED, -9, "killed", signal_name="SIGKILL")
    assert "ran out of memory" in describe_exit(killed)
    assert describe_exit(JobOutcome(JobState.CRASHED, -11, "x", signal_name="SIGSEGV")) == (
        "it was killed by SIGSEGV."
    )
    tail = ("Loading:  10%|█\rLoading: 100%|██", "RuntimeError: HIP error: invalid device function")
    crashed = JobOutcome(JobState.CRASHED, 1, "crashed", stderr_tail=tail)
    assert describe_exit(crashed) == (
        "it exited with code 1. Last error: RuntimeError: HIP error: invalid device function"
    )
    bar_only = JobOutcome(JobState.CRASHED, 3, "crashed", stderr_tail=("a 10%\rb 100%",))
    assert describe_exit(bar_only).endswith("Last error: b 100%")


MISSING = WorkerError(
    "This Python lacks transformers (ModuleNotFoundError: No module named 'transformers').",
    "missing_package",
    data={"op": "load", "missing": ["transformers"]},
)


@pytest.mark.parametrize(
    ("gui", "can_install", "fix"),
    [
        (True, True, "The install button below installs them."),
        (True, False, "Install them into the workload Python."),
        (False, False, "Install them: pip install -U transformers."),
    ],
)
def test_a_load_that_lacks_packages_names_them_with_the_fix(
    gui: bool, can_install: bool, fix: str
) -> None:
    session, worker = ChatSession(gui=gui), FakeWorker()
    session.can_install = can_install
    session.use_worker(worker, allow_hub=False)
    session.load(REQUEST)
    failure = session.on_error(MISSING)
    assert failure.message == (
        f"The model was not loaded. The workload Python lacks transformers. {fix}"
    )
    assert failure.missing == ("transformers",) and failure.model_lost
    assert not failure.offer_reload  # reloading cannot help until it is installed
    assert session.state is SessionState.FAILED and not session.loading


def test_the_exit_after_a_failed_load_is_not_reported_twice() -> None:
    session, worker = ChatSession(), FakeWorker()
    session.use_worker(worker, allow_hub=False)
    session.load(REQUEST)
    session.on_error(MISSING)
    failed = JobOutcome(JobState.FAILED, 3, MISSING.message, error=MISSING)
    assert session.on_worker_exit(worker, failed) is None  # the error said why
    assert session.worker is None and session.state is SessionState.FAILED
    assert session.needs_worker(allow_hub=False)
    # A crash after a failed load (not the expected exit) is still reported.
    session.use_worker(worker, allow_hub=False)
    session.load(REQUEST)
    session.on_error(WorkerError("no config", "no_model", data={"op": "load"}))
    crashed = JobOutcome(JobState.CRASHED, -11, "killed", signal_name="SIGSEGV")
    failure = session.on_worker_exit(worker, crashed)
    assert failure is not None and "killed by SIGSEGV" in failure.message


def test_a_generate_error_keeps_the_worker_expected_to_run() -> None:
    session, worker = generating()
    session.on_error(WorkerError("too long", "context", data={"op": "generate", "id": 1}))
    exited = JobOutcome(JobState.FAILED, 1, "gone", error=MISSING)
    failure = session.on_worker_exit(worker, exited)
    assert failure is not None and failure.message.startswith("The chat worker stopped:")
