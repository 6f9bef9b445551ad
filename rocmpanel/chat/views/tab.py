"""The Chat tab: a local model in a persistent worker, streaming replies, saved chats.

The model runs in the chat worker (a child process in the workload Python), so an
out-of-memory or a driver crash ends that process, never the panel; the tab then says what
happened and offers to reload, or to reload with a smaller setting. Tokens arrive in
batches from the job runner and are rendered on a short timer, so the window stays live.
"""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import replace

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QFrame, QMessageBox, QScrollArea, QSplitter, QVBoxLayout, QWidget

from rocmpanel.base.errors import PanelError
from rocmpanel.chat.memory_estimate import Fit
from rocmpanel.chat.protocol import (
    GenerateRequest,
    LoadedModel,
    LoadRequest,
    Reply,
    result_kind,
    smaller_setting,
)
from rocmpanel.chat.store import ChatStore, title_from
from rocmpanel.chat.views.figures import LiveFigures, token_count, worker_memory_text
from rocmpanel.chat.views.history import ConversationList
from rocmpanel.chat.views.model_panel import ModelPanel
from rocmpanel.chat.views.transcript import ChatComposer, ChatView
from rocmpanel.chat.views.worker_link import WorkerBanner, end_chat_worker, start_chat_worker
from rocmpanel.gui.context import AppContext
from rocmpanel.jobs.process import JobOutcome
from rocmpanel.jobs.protocol import Progress, Result, Token, WorkerError
from rocmpanel.jobs.runner import Job


class ChatTab(QWidget):
    """Chat with a local LLaMA-family model; conversations are kept in sqlite."""

    title = "Chat"

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.store = ChatStore()
        self.job: Job | None = None
        self.job_allows_hub = False
        self.loaded: LoadedModel | None = None
        self.last_load: LoadRequest | None = None
        self.conversation_id: int | None = None
        self.history: list[tuple[str, str]] = []
        self.generating = False
        self.loading = False
        self.request_id = 0
        self._build()
        self.model_panel.set_recent(self.store.recent_models())
        self._update_buttons()

    # -- layout ------------------------------------------------------------------------
    def _build(self) -> None:
        splitter = QSplitter(Qt.Orientation.Horizontal)
        self.conversations = ConversationList(self.store)
        self.conversations.opened.connect(self.open_conversation)
        self.conversations.new_requested.connect(self.new_chat)
        self.conversations.deleted.connect(self._on_conversation_deleted)
        splitter.addWidget(self.conversations)

        centre = QWidget()
        column = QVBoxLayout(centre)
        column.setContentsMargins(4, 0, 4, 0)
        self.banner = WorkerBanner()
        self.banner.reload_requested.connect(self._reload)
        self.banner_label = self.banner.label
        self.reload_smaller_button = self.banner.reload_smaller_button
        column.addWidget(self.banner)
        self.view = ChatView()
        column.addWidget(self.view, 1)
        self.live_label = LiveFigures()
        column.addWidget(self.live_label)
        self.composer = composer = ChatComposer()
        self.input = composer.input
        self.send_button, self.stop_button = composer.send_button, composer.stop_button
        self.regenerate_button, self.edit_button = composer.regenerate_button, composer.edit_button
        self.input.submitted.connect(self.send_message)
        self.send_button.clicked.connect(lambda: self.send_message(self.input.toPlainText()))
        self.stop_button.clicked.connect(self.stop)
        self.regenerate_button.clicked.connect(self.regenerate)
        self.edit_button.clicked.connect(self.edit_last)
        column.addWidget(composer)
        splitter.addWidget(centre)

        self.model_panel = ModelPanel(self.ctx.settings)
        self.model_panel.load_requested.connect(self.load_model)
        self.model_panel.unload_requested.connect(self.unload_model)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self.model_panel)
        scroll.setMinimumWidth(330)
        splitter.addWidget(scroll)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setStretchFactor(2, 0)
        splitter.setSizes([220, 600, 380])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)

    def _update_buttons(self) -> None:
        self.composer.update_buttons(self.loaded is not None, self.generating, self.history)

    def _show_banner(self, text: str, offer_reload: bool) -> None:
        self.banner.show_message(text, self.last_load, offer_reload)

    # -- the worker --------------------------------------------------------------------
    def _ensure_job(self, allow_hub: bool) -> Job:
        if self.job is not None and self.job.running and self.job_allows_hub == allow_hub:
            return self.job
        self._stop_job()
        job = start_chat_worker(self.ctx, allow_hub)
        job.progress_changed.connect(self._on_job_progress)
        job.tokens_received.connect(self._on_job_tokens)
        job.result_received.connect(self._on_job_result)
        job.error_reported.connect(self._on_job_error)
        job.finished.connect(lambda outcome, j=job: self._on_job_finished(j, outcome))
        self.job, self.job_allows_hub = job, allow_hub
        return job

    def _stop_job(self) -> None:
        job, self.job = self.job, None
        if job is not None:
            end_chat_worker(job)

    @Slot(object, bool)
    def load_model(self, request: LoadRequest, allow_hub: bool = False) -> None:
        verdict = self.model_panel.verdict
        if verdict is not None and verdict.fit is Fit.WONT_FIT:
            answer = QMessageBox.warning(
                self,
                "This model may not fit",
                verdict.message + "\n\nLoad anyway?",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                QMessageBox.StandardButton.No,
            )
            if answer != QMessageBox.StandardButton.Yes:
                return
        if self.generating:
            self.stop()
        try:
            job = self._ensure_job(allow_hub)
            job.send(request.op, **request.fields())
        except PanelError as exc:
            self._show_banner(f"Could not start the chat worker: {exc.message}", False)
            return
        self.last_load = request
        self.loaded = None
        self.banner.hide()
        self.loading = True
        self.model_panel.set_loading(True)
        self.model_panel.save_settings()
        self.live_label.setText(f"Loading {request.path} ({request.precision.value})…")
        self._update_buttons()

    @Slot()
    def unload_model(self) -> None:
        if self.job is not None and self.job.running:
            if self.generating:
                self.stop()
            with contextlib.suppress(PanelError):
                self.job.send("unload")
        self.loaded = None
        self.model_panel.set_loaded(None)
        self.live_label.setText("Model unloaded.")
        self._update_buttons()

    def _reload(self, smaller: bool) -> None:
        request = self.last_load
        if request is None:
            return
        if smaller:
            precision, context = smaller_setting(request.precision, request.context_length)
            request = replace(request, precision=precision, context_length=context)
            self.model_panel.set_precision(precision)
            self.model_panel.context_spin.setValue(context)
        self.load_model(request, self.job_allows_hub)

    # -- job events --------------------------------------------------------------------
    def _on_job_progress(self, progress: Progress) -> None:
        if self.loaded is None:
            self.model_panel.set_progress(progress.fraction, progress.step)

    def _on_job_tokens(self, tokens: list[Token]) -> None:
        if not self.generating:
            return
        text = "".join(t.text for t in tokens if t.data.get("id") == self.request_id)
        if not text:
            return
        self.live_label.add_tokens(
            sum(token_count(t) for t in tokens if t.data.get("id") == self.request_id)
        )
        self.view.append_to_last(text)

    def _on_job_result(self, result: Result) -> None:
        kind = result_kind(result.data)
        if kind == "loaded":
            self.loaded = LoadedModel.from_dict(result.data)
            self.loading = False
            self.model_panel.set_loaded(self.loaded)
            with contextlib.suppress(sqlite3.Error):
                self.store.remember_model(self.loaded.path, self.loaded.precision)
                self.model_panel.set_recent(self.store.recent_models())
            self.live_label.setText(f"Ready: {self.loaded.precision} on {self.loaded.device_name}.")
            self.ctx.notify(f"Chat model loaded in {self.loaded.load_s} s")
            self.input.setFocus()
        elif kind == "reply":
            reply = Reply.from_dict(result.data)
            if reply.id == self.request_id and self.generating:
                self._finish_reply(reply)
        self._update_buttons()

    def _finish_reply(self, reply: Reply) -> None:
        self.generating = False
        self.view.flush()
        widget = self.view.last()
        if widget is not None:
            widget.set_text(reply.text)
            widget.render()
            widget.set_figures(reply.figures.summary())
        self.history.append(("assistant", reply.text))
        if self.conversation_id is not None:
            self.store.add_message(self.conversation_id, "assistant", reply.text, reply.figures)
            self.conversations.refresh(self.conversation_id)
        self.live_label.stop("Last reply: " + reply.figures.summary())

    def _on_job_error(self, error: WorkerError) -> None:
        op = str(error.data.get("op", ""))
        suggestion = str(error.data.get("suggestion") or "")
        oom = error.kind == "oom"
        if op == "generate" and self.generating:
            self._abandon_reply()
        if op == "load" or (not op and self.loaded is None):
            self.loading = False
            self.model_panel.set_loaded(None)
            self.model_panel.set_status(f'<span style="color:#b00020">{error.message}</span>')
        text = error.message + (f" {suggestion}" if suggestion else "")
        self._show_banner(text, offer_reload=oom)
        self._update_buttons()

    def _abandon_reply(self) -> None:
        """Drop the unfinished reply (it is not saved) after an error or a crash."""
        self.generating = False
        self.live_label.stop("The reply did not finish.")
        widget = self.view.last()
        if widget is not None and widget.role == "assistant":
            self.view.flush()
            widget.set_figures("(not finished)")

    def _on_job_finished(self, job: Job, outcome: JobOutcome) -> None:
        if job is not self.job:
            return  # one we ended on purpose
        self.job = None
        was_loaded = self.loaded is not None or self.loading
        self.loading = False
        if self.generating:
            self._abandon_reply()
        self.loaded = None
        self.model_panel.set_loaded(None)
        self.banner.show_worker_exit(outcome, self.last_load, offer_reload=was_loaded)
        self.live_label.setText("No model loaded.")
        self._update_buttons()

    # -- conversation ------------------------------------------------------------------
    @Slot(str)
    def send_message(self, text: str) -> None:
        text = text.strip()
        if not text or self.generating:
            return
        if self.loaded is None or self.job is None:
            self.ctx.notify("Load a model first (the panel on the right).")
            return
        if self.conversation_id is None:
            self.conversation_id = self.store.create(
                title_from(text), self.loaded.path, self.model_panel.system_prompt()
            )
        self.store.add_message(self.conversation_id, "user", text)
        self.view.add_message("user", text)
        self.history.append(("user", text))
        self.input.clear()
        self.conversations.refresh(self.conversation_id)
        self._start_reply()

    def _start_reply(self) -> None:
        if self.job is None:
            return
        self.request_id += 1
        request = GenerateRequest(
            self.request_id,
            tuple(self.history),
            self.model_panel.system_prompt(),
            self.model_panel.sampling(),
        )
        try:
            self.job.send(request.op, **request.fields())
        except PanelError as exc:
            self._show_banner(exc.message, offer_reload=True)
            return
        self.view.add_message("assistant")
        self.generating = True
        on_gpu = self.loaded is not None and self.loaded.device == "cuda"
        pid = self.job.pid
        self.live_label.start(lambda: worker_memory_text(on_gpu, pid))
        self._update_buttons()

    @Slot()
    def stop(self) -> None:
        if self.generating and self.job is not None:
            with contextlib.suppress(PanelError):
                self.job.send("stop")

    @Slot()
    def regenerate(self) -> None:
        if self.generating or not self.history:
            return
        if self.history[-1][0] == "assistant":
            self.history.pop()
            if self.conversation_id is not None:
                self.store.truncate(self.conversation_id, len(self.history))
        self.view.truncate(len(self.history))  # the old reply, or an unfinished one
        self._start_reply()

    @Slot()
    def edit_last(self) -> None:
        if self.generating:
            return
        users = [i for i, (role, _) in enumerate(self.history) if role == "user"]
        if not users:
            return
        index = users[-1]
        self.input.setPlainText(self.history[index][1])
        del self.history[index:]
        self.view.truncate(index)
        if self.conversation_id is not None:
            self.store.truncate(self.conversation_id, index)
        self.input.setFocus()
        self._update_buttons()

    @Slot()
    def new_chat(self) -> None:
        if self.generating:
            self.stop()
        self.conversation_id = None
        self.history.clear()
        self.view.clear()
        self.generating = False
        self.conversations.list.clearSelection()
        self.input.setFocus()
        self._update_buttons()

    @Slot(int)
    def open_conversation(self, conversation_id: int) -> None:
        if self.generating:
            self.ctx.notify("Stop the reply before switching conversations.")
            return
        try:
            conversation = self.store.get(conversation_id)
        except PanelError as exc:
            self.ctx.notify(exc.message)
            return
        self.conversation_id = conversation.id
        self.view.clear()
        self.history = []
        self.view.show_messages(conversation.messages)
        for message in conversation.messages:
            if message.role in ("user", "assistant"):
                self.history.append((message.role, message.content))
        if conversation.system_prompt:
            self.model_panel.system_edit.setPlainText(conversation.system_prompt)
        self._update_buttons()

    def _on_conversation_deleted(self, conversation_id: int) -> None:
        if conversation_id == self.conversation_id:
            self.new_chat()

    def shutdown(self) -> None:
        """Called when the window closes: save choices and end the worker."""
        self.live_label.stop("")
        self.model_panel.save_settings()
        self._stop_job()
