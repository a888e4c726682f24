"""What the app does with the composer's text: the decisions pi's interactive mode makes on submit.

In order: a slash command runs; ``!cmd`` / ``!!cmd`` runs the command (no model call, no
permission prompt: the user typed it) and appends pi's ``bashExecution`` message; while the agent
works, Enter queues a steering message and Alt+Enter a follow-up (shown above the composer,
removable, Alt+Up takes them all back, an abort returns them: never lost, never sent twice);
otherwise the prompt is sent, its ``@path`` files and pasted images attached. Every sent or queued
prompt goes into the prompt history.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_tui.agent.attachments import attachment_line, compose, mentions
from agent_tui.agent.queue import MessageQueue, restored_text
from agent_tui.agent.user_bash import UserCommand, parse_user_command, run_user_command
from agent_tui.projection.describe import plural
from agent_tui.projection.tokens import image_rule
from agent_tui.providers.events import StopReason
from agent_tui.store.errors import StoreError
from agent_tui.store.record import JSONObject
from agent_tui.store.session import Session
from agent_tui.tui import give_way, user_commands
from agent_tui.tui.agent_bridge import BuiltInThread
from agent_tui.tui.history import PromptHistory
from agent_tui.tui.widgets.composer import Composer
from agent_tui.tui.widgets.queue_view import QueueView

if TYPE_CHECKING:
    from agent_tui.agent.sandbox import Sandbox
    from agent_tui.tui.host import Host

#: Prompts longer than this are sent but not kept in the history file.
HISTORY_MAX_CHARS = 64 * 1024
#: Seconds between looks at an agent still being built, for the messages typed meanwhile.
AGENT_WAIT = 0.05


class ComposerActions:
    """One per app. The app calls :meth:`submitted`, :meth:`dequeue`, :meth:`aborting` and
    :meth:`turn_ended`; everything else here is the composer's business."""

    def __init__(self, app: Host, history: PromptHistory) -> None:
        self.app = app
        self.history = history
        self.bash_abort: asyncio.Event | None = None
        #: ``!cmd`` results that finished while the agent worked: appended when its turn ends
        #: (pi's pending bash messages), never between a tool call and its result.
        self.pending: list[tuple[Session, JSONObject]] = []
        self._checkpoints_failed = False  # a folder checkpoints refuse (home, /): said once
        self._queue: MessageQueue | None = None
        #: Messages sent while the first turn's agent is still being built (its queue does not
        #: exist yet), in order: queued once it does.
        self._waiting: list[Composer.Submitted] = []
        #: Messages whose ``@`` files (or images) are read in a worker, off the event loop (the
        #: app answers keys meanwhile), and the ones sent after them: taken in order, one at a time.
        self._reading: list[Composer.Submitted] = []
        #: The message of the turn under way, until the turn ends: (session, entries before it,
        #: the text typed). A turn that ends without having written it (the session file changed
        #: under us, a hook refused it, Esc while the agent was built) gives the text back.
        self._unwritten: tuple[Session, int, str] | None = None

    # -- the queue ---------------------------------------------------------------------------

    def queue(self) -> MessageQueue | None:
        """The running agent's queue (None: the agent cannot take messages mid-turn)."""
        turns = self.app.turns
        queue = turns.queue if turns is not None else None
        if queue is None:
            return None
        if queue is not self._queue:
            self._queue = queue
            queue.on_change = self.show_queue
        return queue

    def show_queue(self) -> None:
        queue = self._queue
        self.app.main_screen.query_one(QueueView).show(queue.items() if queue is not None else [])

    def take_back(self, current: str | None = None) -> int:
        """Every queued message back into the composer, before what it holds (pi's restore)."""
        queue = self.queue()
        taken = queue.take_all() if queue is not None else []
        if taken:
            composer = self.app.composer
            composer.set_text(restored_text(taken, composer.text if current is None else current))
        return len(taken)

    def dequeue(self) -> None:
        """Alt+Up."""
        n = self.take_back()
        self.app.notify(
            f"Restored {plural(n, 'queued message')} to the composer" if n else "No queued messages"
        )

    def aborting(self) -> None:
        """Esc / Ctrl+C while the agent works: what is queued comes back, nothing of it is sent."""
        waiting, self._waiting = self._waiting, []
        for event in waiting:
            self.app.composer.settle(event)  # still typed in the composer
        self.take_back()

    def removed(self, message_id: int, take_back: bool) -> None:
        queue = self.queue()
        message = queue.remove(message_id) if queue is not None else None
        if message is not None and take_back:
            composer = self.app.composer
            composer.set_text(restored_text([message], composer.text))
            self.app.set_focus(composer)

    async def turn_ended(self, stop_reason: StopReason | None) -> None:
        """A turn ended. Messages queued after the loop's last look: sent now (pi's continue) when
        it ended normally, back to the composer when it was aborted or failed."""
        await self.flush_pending()
        self._give_back_unwritten()
        queue = self.queue()
        if queue is None or not len(queue):
            return
        if stop_reason in ("aborted", "error") or self.app.session is None or self.app.session.read_only:
            self.take_back()
            return
        self.app.call_later(self._continue)

    def _give_back_unwritten(self) -> None:
        sent, self._unwritten = self._unwritten, None
        app = self.app
        if sent is None or app.session is not sent[0]:
            return
        _, before, typed = sent
        for entry in app.index.entries[before:]:
            if entry.type == "message" and (entry.message or {}).get("role") == "user":
                return  # written: the chat shows it
        composer = app.composer
        composer.set_text("\n\n".join(t for t in (typed, composer.text) if t.strip()))
        app.notify("The message was not sent: it is back in the composer.", severity="warning", timeout=8)

    async def flush_pending(self) -> None:
        pending, self.pending = self.pending, []
        for session, message in pending:
            self._record(session, message)
        if pending:
            await self.app.refresh_views(self.app.index.leaf_id)

    async def _checkpoint(self, session: Session | None, cwd: str, when: str) -> None:
        """The core's checkpoint around a ``!cmd`` (agent.checkpointing.checkpoint_command), as
        ``AgentSession.bash`` takes it: not mid-turn (the entry would land inside the turn)."""
        from agent_tui.agent.checkpointing import checkpoint_command
        from agent_tui.agent.checkpoints import CheckpointStore, checkpoints_enabled

        app = self.app
        if session is None or session.read_only or app.busy or not checkpoints_enabled():
            return
        if self._checkpoints_failed:  # said once; the folder will not change
            return
        failed = await checkpoint_command(CheckpointStore(), session, cwd, when, lambda: not app.busy)
        if failed is not None:
            self._checkpoints_failed = True
            app.notify(
                f"No file checkpoints around your commands: {failed}", severity="warning", markup=False
            )

    def _record(self, session: Session, message: JSONObject) -> None:
        if session.read_only:
            return
        try:
            session.append({"type": "message", "message": message})
        except StoreError as e:
            self.app.notify(str(e), severity="error")

    def _continue(self) -> None:
        """Deliver what was queued as a turn of its own (unless a send already started one)."""
        app = self.app
        queue = self.queue()
        if app.busy or queue is None or not len(queue) or app.turns is None:
            return
        app.busy = True
        app.run_events(app.turns.run(None))

    # -- submit --------------------------------------------------------------------------------

    async def submitted(self, event: Composer.Submitted) -> None:
        if self._reading or event.images or mentions(event.text):
            # its files are read in a worker; a message sent meanwhile waits its turn
            self._reading.append(event)
            if len(self._reading) == 1:
                self.app.run_worker(self._read_in_order(), group="attachments", exit_on_error=False)
            return
        await self._take(event)

    async def _read_in_order(self) -> None:
        while self._reading:
            try:
                await self._take(self._reading[0])
            except Exception as e:  # one message failing never leaves the others stuck behind it
                self.app.notify(f"cannot send: {e}", severity="error")
            finally:
                del self._reading[0]

    async def _take(self, event: Composer.Submitted) -> None:
        give_way.hold()  # the background imports wait while the message is shown (pending_prompt)
        waits = False
        try:
            waits = await self._submitted(event)
        finally:
            if not waits:
                self.app.composer.settle(event)  # not taken: its text stays typed in the composer

    def _building(self) -> bool:
        """Whether the running turn's agent is still being built (it has no queue yet): only the
        app's own agent is built in a thread."""
        turns = self.app.turns
        return isinstance(turns, BuiltInThread) and not turns.ready

    def _indexing(self) -> bool:
        """Whether the session open is its end only, while the whole file is indexed
        (``Session.partial``): a message waits for the index, kept in the composer."""
        session = self.app.session
        return session is not None and session.partial

    async def _drain(self) -> None:
        """Queue the messages that waited for the agent, in order, once it is built."""
        if not self._waiting:
            return
        if self._building() or self._indexing():
            self.app.set_timer(AGENT_WAIT, self._drain)
            return
        waiting, self._waiting = self._waiting, []
        for event in waiting:
            await self._take(event)

    async def _submitted(self, event: Composer.Submitted) -> bool:
        """Take the message; True when it waits for the agent (see :meth:`_drain`)."""
        from agent_tui.tui.commands import NAMES, parse_slash

        app = self.app
        text = typed = event.text
        expanded = None
        slash = parse_slash(text)
        if slash is not None and slash[0] not in NAMES:  # a built-in wins its name
            expanded = user_commands.expand_typed(app, text)  # /template ARGS, /skill:name ARGS
            if expanded is not None and not expanded.strip():
                app.notify(f"/{slash[0]} expands to nothing: nothing sent", severity="warning")
                return False
            if expanded is not None:
                slash, text = None, expanded
        if slash is not None:
            app.composer.clear_submitted()
            await app.run_slash(*slash)
            return False
        command = parse_user_command(text) if expanded is None else None
        if command is not None:
            await self.run_command(command, text)
            return False
        text = text.removeprefix("/") if expanded is None and text.startswith("//") else text
        if self.bash_abort is not None:
            app.notify("A command is running: press Esc to cancel it first.", severity="warning")
            return False
        if self._indexing() and not self._waiting:
            app.notify("The session file is being indexed: the message is sent when it is done.")
        if self._waiting or self._indexing() or (app.busy and self._building()):
            # typed on while the first message's agent is built (or the file is indexed): queued
            # once it exists, in order
            self._waiting.append(event)
            if len(self._waiting) == 1:
                app.set_timer(AGENT_WAIT, self._drain)
            return True
        if app.busy:
            await self.enqueue(text, event.images, follow_up=event.follow_up, typed=typed)
            return False
        await self.send(text, event.images, typed=typed)
        return False

    async def _compose(self, text: str, images: list[Path]) -> list[dict[str, Any]] | str:
        if not images and not mentions(text):
            return text  # nothing to read (a thread's start cost the first send 10-25 ms at load)
        # the folder agent-tui was started in, never a session header's cwd (a handed-over session's);
        # read in a thread: a slow disk never stops the app answering keys
        provider, model, _ = self.app.next_send()
        rule = image_rule({"provider": provider, "modelId": model})
        composed = await asyncio.to_thread(compose, text, str(self.app.config.cwd), images, image_rule=rule)
        for notice in composed.notices:
            self.app.notify(notice, severity="warning", timeout=8)
        if composed.attachments:
            self.app.notify(attachment_line(composed.attachments), title="attached", timeout=6)
        return text if len(composed.content) == 1 else composed.content

    def _remember(self, text: str) -> None:
        if len(text) <= HISTORY_MAX_CHARS:  # typed here: the folder agent-tui started in, never a header's
            self.history.add(text, str(self.app.config.cwd))

    async def enqueue(
        self, text: str, images: list[Path], *, follow_up: bool, typed: str | None = None
    ) -> None:
        app = self.app
        queue = self.queue()
        if queue is None:
            app.notify("A reply is streaming: wait for it or press Esc to stop it.", severity="warning")
            return
        if app.session is not None and app.session.read_only:
            app.notify(
                f"{app.session.read_only_reason or 'read-only session'}: the message stays in the composer",
                severity="error",
            )
            return
        content = await self._compose(text, images)
        blocks = None if isinstance(content, str) else content
        if follow_up:
            queue.follow_up(text, blocks)
        else:
            queue.steer(text, blocks)
        self._remember(typed if typed is not None else text)
        app.composer.clear_submitted()

    async def send(self, text: str, images: list[Path], *, typed: str | None = None) -> None:
        """Send ``text``; the history keeps ``typed`` (what was typed: ``/review x``, not its expansion)."""
        app = self.app
        if app.session is not None and app.session.read_only:
            app.notify(app.session.read_only_reason or "read-only session", severity="error")
            return
        content = await self._compose(text, images)
        session, before = app.session, len(app.index.entries)
        if await app.send(content):
            typed = typed if typed is not None else text
            self._remember(typed)
            if app.session is session and session is not None:
                self._unwritten = (session, before, typed)
            elif app.session is not None:  # the first message made the session
                self._unwritten = (app.session, 0, typed)

    # -- !cmd ------------------------------------------------------------------------------------

    async def run_command(self, command: UserCommand, typed: str) -> None:
        app = self.app
        if self.bash_abort is not None:
            app.notify("A command is already running: press Esc to cancel it first.", severity="warning")
            return
        try:
            session = app.ensure_session()
        except StoreError as e:
            app.notify(str(e), severity="error")
            return
        if session.read_only:
            app.notify(session.read_only_reason or "read-only session", severity="error")
            return
        app.composer.clear_submitted()
        self._remember(typed)
        self.bash_abort = asyncio.Event()
        app.run_user_command(command, str(app.config.cwd), self.bash_abort)  # never the header's cwd

    def cancel_command(self) -> bool:
        """Esc while a ``!cmd`` runs: stop it (its process group is killed). True if one was running."""
        if self.bash_abort is None:
            return False
        self.bash_abort.set()
        return True

    def _sandbox(self) -> Sandbox:
        """Where the user's command runs: the app's sandbox, as the model's commands (agent.sandbox)."""
        from agent_tui.tui.agent_bridge import agent_permissions, choice_config
        from agent_tui.tui.sandbox_state import command_sandbox

        return command_sandbox(agent_permissions(self.app.turns), choice_config(self.app.config.model))

    async def execute(self, command: UserCommand, cwd: str, abort: asyncio.Event) -> None:
        """Run the command, its output streaming into a panel above the composer, then append
        the ``bashExecution`` message and show it in the chat."""
        from agent_tui.tui.widgets.bash_run import BashRun

        app = self.app
        panel = BashRun(command.command, excluded=command.exclude_from_context)
        await app.main_screen.query_one("#center").mount(panel, before=app.main_screen.query_one(QueueView))
        try:
            session = app.session
            await self._checkpoint(session, cwd, "before")
            message = await run_user_command(command, cwd, abort, panel.add_output, sandbox=self._sandbox())
            if session is None:
                return
            if app.busy:  # the agent is mid-turn: recorded when it ends, as pi does
                self.pending.append((session, message))
                app.notify(f"Ran {command.command}: recorded when the agent stops.")
                return
            self._record(session, message)
            await self._checkpoint(session, cwd, "after")
            if message.get("cancelled"):
                app.notify(f"Cancelled: {command.command}")
        finally:
            self.bash_abort = None
            await panel.remove()
        await app.refresh_views(app.index.leaf_id)


__all__ = ["HISTORY_MAX_CHARS", "ComposerActions"]
