"""The Chat tab: a local model in a persistent worker, streaming replies, saved chats.

The model runs in the chat worker (a child process in the workload Python), so an
out-of-memory or a driver crash ends that process, never the panel; the tab then says what
happened and offers to reload, or to reload with a smaller setting. What the chat is at any
moment (loaded, answering, stopping, the conversation, the request answered) is kept and
decided by a :class:`~rocmpanel.chat.session.ChatSession`; the tab shows it, saves the
conversation and draws it. Tokens arrive in batches from the job runner and are rendered
on a short timer, so the window stays live. The conversation is saved through a
:class:`~rocmpanel.chat.views.store_queue.StoreQueue`: off the GUI thread, in order, and
waited for when the window closes.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QFrame, QMessageBox, QScrollArea, QSplitter, QVBoxLayout, QWidget

from rocmpanel.base.errors import PanelError
from rocmpanel.base.i18n import translate
from rocmpanel.chat.memory_estimate import Fit
from rocmpanel.chat.protocol import LoadedModel, LoadRequest, Reply
from rocmpanel.chat.serve_protocol import is_serve_error
from rocmpanel.chat.session import ChatSession, Failure
from rocmpanel.chat.store import Conversation, title_from
from rocmpanel.chat.views.figures import LiveFigures, rss_text, vram_text_over
from rocmpanel.chat.views.history import ConversationList
from rocmpanel.chat.views.model_panel import ModelPanel
from rocmpanel.chat.views.store_queue import SavedChat, StoreQueue, remember_model
from rocmpanel.chat.views.transcript import ChatComposer, ChatView
from rocmpanel.chat.views.worker_link import WorkerBanner, end_chat_worker, start_chat_worker
from rocmpanel.gui.context import AppContext
from rocmpanel.gui.report import report
from rocmpanel.jobs.process import JobOutcome, JobState
from rocmpanel.jobs.protocol import Progress, ReplyDone, Result, Token, WorkerError
from rocmpanel.jobs.runner import Job


class ChatTab(QWidget):
    """Chat with a local LLaMA-family model; conversations are kept in sqlite."""

    title = "Chat"

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        # Opens (creates or migrates) the store with its first call, off the GUI thread.
        self.store_queue = StoreQueue(parent=self)
        self.saved_chat: SavedChat | None = None  # the saved conversation being written
        self.session = ChatSession()
        # The model that answered the conversation shown (a marker shows when it changes).
        self.chat_model: str | None = None
        self._build()
        self.store_queue.submit(
            translate("ChatTab", "Reading the recent models"),
            lambda store: store.recent_models(),
            self.model_panel.set_recent,
        )
        self._update_buttons()

    @property
    def job(self) -> Job | None:
        """The worker the session talks to."""
        worker = self.session.worker
        return worker if isinstance(worker, Job) else None

    # -- layout ------------------------------------------------------------------------
    def _build(self) -> None:
        splitter = QSplitter(Qt.Orientation.Horizontal)
        self.conversations = ConversationList(self.store_queue)
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

        self.model_panel = ModelPanel(self.ctx)
        self.model_panel.load_requested.connect(self.load_model)
        self.model_panel.unload_requested.connect(self.unload_model)
        self.serve_panel = self.model_panel.serve_panel
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self.model_panel)
        scroll.setMinimumWidth(330)
        # Always there, so the panel's width (and so the height of its wrapped labels) does
        # not change when it starts to scroll: with the bar shown only as needed, a window
        # just too short left the last controls below the scrollable range.
        scroll.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        splitter.addWidget(scroll)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setStretchFactor(2, 0)
        splitter.setSizes([220, 600, 380])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)

    def _update_buttons(self) -> None:
        s = self.session
        self.composer.update_buttons(s.can_send, s.can_stop, s.can_regenerate, s.can_edit)
        self.serve_panel.set_model(s.worker, s.loaded.path if s.loaded is not None else None)

    # -- the worker --------------------------------------------------------------------
    def _start_worker(self, allow_hub: bool) -> None:
        job = start_chat_worker(self.ctx, allow_hub)
        job.progress_changed.connect(self._on_job_progress)
        job.tokens_received.connect(self._on_job_tokens)
        job.reply_received.connect(self._on_job_reply)
        job.result_received.connect(self._on_job_result)
        job.error_reported.connect(self._on_job_error)
        job.finished.connect(self._on_job_finished)
        previous = self.session.use_worker(job, allow_hub)  # a reply in it is left unfinished
        if isinstance(previous, Job):
            end_chat_worker(previous)

    def _from_current_job(self) -> bool:
        """Whether the signal being handled comes from the session's worker (a worker
        ended on purpose may still deliver a few events); direct calls count as current."""
        sender = self.sender()
        return sender is None or sender is self.job

    @Slot(object, bool)
    def load_model(self, request: LoadRequest, allow_hub: bool = False) -> None:
        verdict = self.model_panel.verdict
        if verdict is not None and verdict.fit is Fit.WONT_FIT:
            answer = QMessageBox.warning(
                self,
                translate("ChatTab", "This model may not fit"),
                translate("ChatTab", "{verdict}\n\nLoad anyway?").format(verdict=verdict.message),
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                QMessageBox.StandardButton.No,
            )
            if answer != QMessageBox.StandardButton.Yes:
                return
        was_generating = self.session.generating
        try:
            if self.session.needs_worker(allow_hub):
                self._start_worker(allow_hub)
            self.session.load(request)
        except PanelError as exc:
            doing = translate("ChatTab", "Starting the chat worker")
            self.banner.show_error(exc, doing, None, False)
            self._update_buttons()
            return
        if was_generating:
            self._abandon_reply()
        self.serve_panel.model_gone("load")  # the worker stops its server before loading
        job = self.job
        if job is not None:
            job.set_cancel_label("Cancel")  # cancelling a load stops it
        self.banner.hide()
        self.model_panel.set_loading(True)
        self.model_panel.save_settings()
        self.live_label.setText(
            translate("ChatTab", "Loading {path} ({precision})…").format(
                path=request.path, precision=request.precision.value
            )
        )
        self._update_buttons()

    @Slot()
    def unload_model(self) -> None:
        was_generating = self.session.generating
        self.session.unload()
        self.serve_panel.model_gone("unload")
        if was_generating:
            self._abandon_reply()
        self.model_panel.set_loaded(None)
        self.live_label.set_preset(None)
        self.live_label.setText(translate("ChatTab", "Model unloaded."))
        self._update_buttons()

    def _reload(self, smaller: bool) -> None:
        request = self.session.reload_request(smaller)
        if request is None:
            return
        if smaller:
            self.model_panel.set_precision(request.precision)
            self.model_panel.context_spin.setValue(request.context_length)
        self.load_model(request, self.session.worker_allows_hub)

    # -- job events --------------------------------------------------------------------
    @Slot(object)
    def _on_job_progress(self, progress: Progress) -> None:
        if self._from_current_job() and self.session.loading:
            self.model_panel.set_progress(progress.fraction, progress.step)

    @Slot(list)
    def _on_job_tokens(self, tokens: list[Token]) -> None:
        if not self._from_current_job():
            return
        streamed = self.session.on_tokens(tokens)
        if streamed is not None:
            self.live_label.add_tokens(streamed.tokens)
            self.view.append_to_last(streamed.text)

    @Slot(object)
    def _on_job_reply(self, done: ReplyDone) -> None:
        if not self._from_current_job():
            return
        reply = self.session.on_reply(done)
        if reply is not None:
            self._finish_reply(reply)
        self._update_buttons()

    @Slot(object)
    def _on_job_result(self, result: Result) -> None:
        if not self._from_current_job() or self.serve_panel.on_result(result):
            return
        loaded = self.session.on_result(result)
        if loaded is not None:
            self._show_loaded(loaded)
        self._update_buttons()

    def _show_loaded(self, loaded: LoadedModel) -> None:
        self.model_panel.set_loaded(loaded)
        path, precision = loaded.path, loaded.precision
        self.store_queue.submit(
            translate("ChatTab", "Remembering the model"),
            lambda store: remember_model(store, path, precision),
            self.model_panel.set_recent,
        )
        self.live_label.set_preset(loaded.preset)
        ready = translate("ChatTab", "Ready: {precision} on {device}.").format(
            precision=loaded.precision.value, device=loaded.device_name
        )
        self.live_label.setText(self.live_label.with_preset(ready))
        self.ctx.notify(
            translate("ChatTab", "Chat model loaded in {seconds} s").format(seconds=loaded.load_s)
        )
        job = self.job
        if job is not None:
            job.set_cancel_label("Unload")  # ending the worker now unloads the model
        self._mark_model_change()
        self.input.setFocus()

    def _mark_model_change(self) -> None:
        """A separator in the transcript when the conversation goes on with another model
        than the one that answered it so far (shown only: the store keeps no markers)."""
        loaded = self.session.loaded
        if loaded is None:
            return
        if self.session.history and self.chat_model not in (None, loaded.path):
            name = Path(loaded.path).name or loaded.path
            self.view.add_marker(
                translate("ChatTab", "Model changed to {model}").format(model=name)
            )
        if self.session.history or self.chat_model is None:
            self.chat_model = loaded.path

    def _finish_reply(self, reply: Reply) -> None:
        """Bounded work only: the reply's changed blocks are drawn, it is saved off the GUI
        thread, and its conversation moves to the top of the list (no re-read of the list)."""
        self.view.finish_last(reply.text, reply.figures.shown_summary())
        saved = self.saved_chat
        if saved is not None:
            text, figures = reply.text, reply.figures
            self.store_queue.submit(
                translate("ChatTab", "Saving the reply"),
                lambda store: saved.add(store, "assistant", text, figures),
            )
            self.conversations.touch(saved)
        self.live_label.stop(
            translate("ChatTab", "Last reply: {figures}").format(
                figures=reply.figures.shown_summary()
            )
        )

    @Slot(object)
    def _on_job_error(self, error: WorkerError) -> None:
        if not self._from_current_job():
            return
        if is_serve_error(error):  # the model stays: not the chat's failure
            self.serve_panel.on_error(error)
            return
        # The hook may be filled in after the tab was built: ask it now.
        self.session.can_install = self.ctx.install_packages is not None
        failure = self.session.on_error(error)
        self._show_failure(failure)
        if failure.model_lost:
            self.model_panel.set_loaded(None)
            self.model_panel.set_error(failure.message)
            self.live_label.set_preset(None)
            self.live_label.setText(translate("ChatTab", "No model loaded."))
        if failure.missing:
            self.model_panel.packages_box.refresh()  # show all that is missing, and the fix

    @Slot(object)
    def _on_job_finished(self, outcome: JobOutcome) -> None:
        job = self.sender()
        if not isinstance(job, Job):
            return
        unloaded = outcome.state is JobState.CANCELLED and job.cancel_label == "Unload"
        if job is self.serve_panel.worker:
            self.serve_panel.model_gone("exit")
        failure = self.session.on_worker_exit(job, outcome)
        if failure is None:
            return  # one we ended on purpose, or a failed load (its error said why)
        if unloaded and not failure.abandoned_reply:
            # The job's "Unload" (the jobs strip): the user ended the worker to unload.
            self.model_panel.set_loaded(None)
            self.live_label.set_preset(None)
            self.live_label.setText(translate("ChatTab", "Model unloaded."))
            self._update_buttons()
            return
        self._show_failure(failure)
        self.model_panel.set_loaded(None)
        self.live_label.set_preset(None)
        self.live_label.setText(translate("ChatTab", "No model loaded."))

    def _show_failure(self, failure: Failure) -> None:
        if failure.abandoned_reply:
            self._abandon_reply()
        self.banner.show_failure(failure, self.session.last_load)
        self._update_buttons()

    def _abandon_reply(self) -> None:
        """Show the unfinished reply as such (it is not saved) after an error or a crash."""
        self.live_label.stop(translate("ChatTab", "The reply did not finish."))
        widget = self.view.last()
        if widget is not None and widget.role == "assistant":
            self.view.flush()
            widget.set_figures(translate("ChatTab", "(not finished)"))

    # -- conversation ------------------------------------------------------------------
    @Slot(str)
    def send_message(self, text: str) -> None:
        text = text.strip()
        if not text or self.session.generating:
            return
        if not self.session.can_send:
            self.ctx.notify(translate("ChatTab", "Load a model first (the panel on the right)."))
            return
        loaded = self.session.loaded
        if self.saved_chat is None and loaded is not None:
            self.saved_chat = saved = SavedChat()
            title, model, system = title_from(text), loaded.path, self.model_panel.system_prompt()
            self.store_queue.submit(
                translate("ChatTab", "Saving the conversation"),
                lambda store: saved.create(store, title, model, system),
                lambda _id: self._on_saved_chat_created(saved),
                lambda error: self._on_saved_chat_failed(saved, error),
            )
        saved_chat = self.saved_chat
        if saved_chat is not None:
            self.store_queue.submit(
                translate("ChatTab", "Saving the message"),
                lambda store: saved_chat.add(store, "user", text),
            )
        self._mark_model_change()
        self.session.add_user_message(text)
        self.view.add_message("user", text)
        self.input.clear()
        if saved_chat is not None:
            self.conversations.touch(saved_chat)
        self._start_reply()

    def _on_saved_chat_created(self, saved: SavedChat) -> None:
        if saved is self.saved_chat:  # still the conversation shown
            self.session.conversation_id = saved.id

    def _on_saved_chat_failed(self, saved: SavedChat, error: BaseException) -> None:
        """The chat goes on unsaved; the next message tries to save it again."""
        report(error, translate("ChatTab", "Saving the conversation"))
        if saved is self.saved_chat:
            self.saved_chat = None

    def _start_reply(self) -> None:
        try:
            self.session.start_reply(self.model_panel.system_prompt(), self.model_panel.sampling())
        except PanelError as exc:
            doing = translate("ChatTab", "Asking for a reply")
            self.banner.show_error(exc, doing, self.session.last_load, True)
            self._update_buttons()
            return
        self.view.add_message("assistant")
        loaded, job = self.session.loaded, self.job
        live = self.ctx.live_memory
        if loaded is not None and loaded.on_gpu:
            bdfs = loaded.bdfs or tuple(b for b in (loaded.bdf,) if b)
            self.live_label.start(lambda: vram_text_over(live, bdfs))
        else:
            pid = job.pid if job is not None else None
            self.live_label.start(lambda: rss_text(pid))
        self._update_buttons()

    @Slot()
    def stop(self) -> None:
        self.session.stop()
        self._update_buttons()

    @Slot()
    def regenerate(self) -> None:
        kept = self.session.regenerate()
        if kept is None:
            return
        self._truncate_saved(kept)
        self.view.truncate(kept)  # the old reply, or an unfinished one
        self._start_reply()

    @Slot()
    def edit_last(self) -> None:
        taken = self.session.edit_last()
        if taken is None:
            return
        text, kept = taken
        self.input.setPlainText(text)
        self.view.truncate(kept)
        self._truncate_saved(kept)
        self.input.setFocus()
        self._update_buttons()

    def _truncate_saved(self, keep: int) -> None:
        saved = self.saved_chat
        if saved is not None:
            self.store_queue.submit(
                translate("ChatTab", "Saving the conversation"),
                lambda store: saved.truncate(store, keep),
            )

    @Slot()
    def new_chat(self) -> None:
        if self.session.generating:
            self.live_label.stop("")
        self.session.new_conversation()
        self.chat_model = None
        self.saved_chat = None
        self.view.clear()
        self.conversations.list.clearSelection()
        self.input.setFocus()
        self._update_buttons()

    @Slot(int)
    def open_conversation(self, conversation_id: int) -> None:
        """Read the conversation off the GUI thread, then show it."""
        if self.session.generating:
            self.ctx.notify(translate("ChatTab", "Stop the reply before switching conversations."))
            return
        self.store_queue.submit(
            translate("ChatTab", "Opening the conversation"),
            lambda store: store.get(conversation_id),
            self._show_conversation,
        )

    def _show_conversation(self, conversation: Conversation) -> None:
        turns = ((m.role, m.content) for m in conversation.messages)
        if not self.session.open_conversation(conversation.id, turns):
            self.ctx.notify(translate("ChatTab", "Stop the reply before switching conversations."))
            return
        self.saved_chat = SavedChat(conversation.id)
        self.chat_model = conversation.model or None
        self.view.clear()
        self.view.show_messages(conversation.messages)
        if conversation.system_prompt:
            self.model_panel.system_edit.setPlainText(conversation.system_prompt)
        self._update_buttons()

    def _on_conversation_deleted(self, conversation_id: int) -> None:
        if self.saved_chat is not None and conversation_id == self.saved_chat.id:
            self.new_chat()

    def shutdown(self) -> None:
        """Called when the window closes: save choices and end the worker (without
        waiting for it here). Store calls still queued run on: the window's close waits
        for background calls."""
        self.live_label.stop("")
        self.serve_panel.shutdown()
        self.model_panel.save_settings(replace_damaged=False)
        job = self.session.drop_worker()
        if isinstance(job, Job):
            end_chat_worker(job)
