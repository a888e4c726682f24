"""The session actions: hide, replace, restore, pin, label, rename, fork, export, branch, compact...

One controller that the keys, the command palette, the slash commands and the
tree all call (over 500 lines, on purpose: every action of the app in one place, each short). Each action appends through the store
(:class:`~agent_tui.store.session.Session`) and then asks the app to project
and redraw; an action that needs an answer first pushes a dialog and acts when
it is dismissed.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.css.query import NoMatches

from agent_tui.agent.events import AgentEvent
from agent_tui.agent.model_sources import local_catalog, server_catalog
from agent_tui.projection import registry
from agent_tui.projection.catalog import CatalogModel, ModelChoiceError, choose, split_level
from agent_tui.projection.describe import plural
from agent_tui.projection.models import MODELS, THINKING_LEVELS, lookup, selectable_thinking_levels
from agent_tui.store.content import content_text
from agent_tui.store.errors import StoreError
from agent_tui.store.paths import data_home, make_private_dirs, session_file_name
from agent_tui.store.session import BRANCH_MARKER, Session
from agent_tui.tui import branch_summary_offer, compaction_review, surgery_actions
from agent_tui.tui.agent_bridge import AgentUnavailable, ModelChoice, load_agent_config, model_problem
from agent_tui.tui.screens.choice import ChoiceScreen
from agent_tui.tui.screens.editor import EditorScreen
from agent_tui.tui.screens.prompt import PromptScreen

if TYPE_CHECKING:
    from agent_tui.tui.host import Host


def export_session(session: Session, out: Path, fmt: str) -> None:
    """Write the active branch to ``out`` (never over an existing file)."""
    try:
        from agent_tui.library.export import export_bytes, write_new_file
    except ImportError:  # an agent-tui without the library: JSONL through fork
        session.fork(None, out)
        return
    write_new_file(out, export_bytes(session.index, fmt, source=session.path))


def reply_text(message: dict[str, Any]) -> str:
    """The text blocks of an assistant message (no thinking, no tool calls)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = [str(b.get("text", "")) for b in content or () if isinstance(b, dict) and b.get("type") == "text"]
    return "\n\n".join(p for p in parts if p.strip())


def branch_notice(target: str, old_path: list[str], new_path: set[str]) -> str:
    """``continuing from a2; 6 later entries are now a side branch ⑂``: the entries of the old
    branch after the point where the new one leaves it."""
    kept = 0
    for entry_id in old_path:
        if entry_id not in new_path:
            break
        kept += 1
    left = len(old_path) - kept
    if not left:
        return f"continuing from {target}"
    noun = "entry is" if left == 1 else "entries are"
    from agent_tui.tui.symbols import SYMBOLS  # the ASCII set's Y with ascii_symbols = true

    return f"continuing from {target}; {left} later {noun} now a side branch {SYMBOLS['fork']}"


def keep_settings(session: Session, model: dict[str, Any] | None, thinking: str) -> list[dict[str, Any]]:
    """The ``model_change`` / ``thinking_level_change`` that keep the model and thinking level the
    user had before a branch, where the branch's own path says otherwise (pi issue #11451)."""
    from agent_tui.projection.context import project

    now = project(session.index)
    out: list[dict[str, Any]] = []
    wanted = (model or {}).get("provider"), (model or {}).get("modelId")
    if wanted[1] and ((now.model or {}).get("provider"), (now.model or {}).get("modelId")) != wanted:
        out.append({"type": "model_change", "provider": wanted[0], "modelId": wanted[1]})
    if now.thinking_level != thinking:
        out.append({"type": "thinking_level_change", "thinkingLevel": thinking})
    return out


class SessionActions:
    """The actions on the app's session (``app.session``, created on the first append)."""

    def __init__(self, app: Host) -> None:
        self.app: Host = app
        self._compact_prompted = False

    # -- helpers --------------------------------------------------------------------

    def notify(self, message: str, **kwargs: object) -> None:
        self.app.notify(message, **kwargs)  # type: ignore[arg-type]

    def target(self, entry_id: str | None = None) -> str | None:
        """The entry an action is about: the one named, else the selected one; None (and a notice)."""
        app = self.app
        target = entry_id or app.selected_id or app.session_tree.cursor_entry_id
        if target is None:
            from agent_tui.tui.keymap import key_name

            tree = key_name(app.keymap, "tree", "f1")
            self.notify(
                f"Select an entry in the tree first ({tree}, then the arrow keys).", severity="warning"
            )
            return None
        if target not in app.index:
            self.notify(f"no entry with id {target!r}", severity="error")
            return None
        return target

    def can_append(self) -> bool:
        if self.app.busy:
            self.notify("A reply is streaming: wait for it or press Esc to stop it.", severity="warning")
            return False
        return True

    async def append(self, fn: Callable[[Session], object], cursor: str | None = None) -> bool:
        """Run ``fn`` on the session (created if need be), then redraw; False (and a notice) if refused."""
        if not self.can_append():
            return False
        try:
            fn(self.app.ensure_session())
        except StoreError as e:
            self.notify(str(e), severity="error")
            return False
        # the app closing (a key of a burst ran after its panes went): the entry is written
        with contextlib.suppress(NoMatches):
            await self.app.refresh_views(cursor)
        return True

    def current_text(self, entry_id: str) -> str:
        """What the model sees of ``entry_id`` now (its replacement if replaced), as text."""
        app = self.app
        for ce in app.projection.entries:
            if ce.entry.id == entry_id and ce.messages:
                return content_text(ce.messages[-1].message.get("content"), "\n", image="[image]")
        entry = app.index.get(entry_id)
        if entry.type == "message":
            return content_text((entry.message or {}).get("content"), "\n", image="[image]")
        return content_text(entry.data.get("content"), "\n", image="[image]")

    # -- branching ------------------------------------------------------------------

    async def branch_to(self, entry_id: str, summarize: bool = False, ask_focus: bool = False) -> None:
        """Continue from ``entry_id``; on a past user message, its text goes to the composer and the
        conversation continues from its parent (so sending makes a sibling of it). A draft in the
        composer is never overwritten: the message's text goes to the history instead (Up).
        ``summarize`` (the tree's ``s``): leave a summary of the branch left, without asking;
        ``ask_focus`` (``S``, pi's "Summarize with custom prompt"): first ask what it should keep."""
        app = self.app
        if not self.can_append():
            return
        entry = app.index.get(entry_id)
        target = entry_id
        if entry.type == "message" and entry.role == "user":
            text = content_text((entry.message or {}).get("content"), "\n", image="[image]")
            composer = app.composer
            if composer.text.strip() and composer.text != text:
                composer.offer_in_history(text)
                self.notify("Your draft stays in the composer; Up brings that message's text.")
            else:
                composer.set_text(text)
            if entry.parent_id is None:
                from agent_tui.tui.keymap import key_name

                new = key_name(app.keymap, "new", "ctrl+n")
                self.notify(
                    "That is the session's first entry: nothing comes before it. "
                    f"Its text is in the composer; {new} starts a new session."
                )
                app.focus_composer()
                return
            target = entry.parent_id
        leaf = app.index.by_id.get(app.index.leaf_id or "")
        at_marker = (
            leaf is not None
            and leaf.type == "custom"
            and leaf.data.get("customType") == BRANCH_MARKER
            and leaf.parent_id == target
        )
        if target == app.index.leaf_id or at_marker:  # a second Enter: no second "continued here"
            app.focus_composer()
            self.notify("Already there: the next message continues from this entry.")
            return
        if summarize:
            summarizer = self._branch_summarizer(target)
            if summarizer is not None and ask_focus:
                run = summarizer

                async def focused(value: str | None) -> None:
                    if value is None:  # cancelled: nothing moves
                        return
                    branch_summary_offer.summarize(self, target, run, value.strip() or None)

                app.push_screen(
                    PromptScreen(
                        "Summarize the branch you leave: what should the summary keep?",
                        placeholder="e.g. the decisions and the files changed",
                        hint="Enter summarizes (empty: the usual summary); Esc cancels.",
                    ),
                    focused,
                )
                return
            if summarizer is not None:
                branch_summary_offer.summarize(self, target, summarizer)
                return
            self.notify("No message is left behind there: nothing to summarize, just moving.")
            await self._move_to(target)
            return
        summarizer = self._branch_summarizer(target)
        if summarizer is not None:  # pi's "Summarize branch?" (No summary / Summarize / custom prompt)
            left = self._messages_left(target)
            moving = branch_summary_offer.offer(self, target, left, summarizer, self._move_to)
            if moving is not None:
                await moving
            return
        await self._move_to(target)

    async def _move_to(self, target: str) -> None:
        """Move the leaf to ``target``, keeping the model and thinking level in use, and say what
        became of the entries left behind."""
        app = self.app
        before = app.projection
        old_path = [e.id for e in before.path]

        def move(session: Session) -> None:
            session.branch(target)
            for fields in keep_settings(session, before.model, before.thinking_level):
                session.append(fields)

        if await self.append(move, cursor=None):
            app.selected_id = target
            await app.refresh_views(target)
            app.focus_composer()
            self.notify(branch_notice(target, old_path, {e.id for e in app.projection.path}))
            from agent_tui.tui.checkpoint_offer import offer_restore

            await offer_restore(self, target)  # the files as the node left them, if they differ

    def _messages_left(self, target: str) -> int:
        """The messages a move to ``target`` leaves behind (pi's rule: back to the common ancestor)."""
        from agent_tui.agent.compaction import abandoned_entries

        if self.app.session is None:
            return 0
        return sum(1 for e in abandoned_entries(self.app.session, target) if e.type == "message")

    def _branch_summarizer(self, target: str) -> Callable[..., AsyncIterator[AgentEvent]] | None:
        """The agent's branch-summary call (target, and optionally the focus) when moving to
        ``target`` leaves messages behind and a model is configured; else None. The agent is built
        only when the summary is asked for."""
        app = self.app
        if not self._messages_left(target):
            return None
        if app.config.agent_factory is None and model_problem(app.config.model):
            return None

        def summarize(target_id: str, focus: str | None = None) -> AsyncIterator[AgentEvent]:
            return app.turns_for_session().branch_with_summary(target_id, focus)

        return summarize

    # -- context edits --------------------------------------------------------------

    async def hide(self, entry_id: str | None = None) -> None:
        if entry_id is None and (span := self.app.session_tree.marked_span()) is not None:
            await surgery_actions.span(self, *span, restore=False)
            return
        target = self.target(entry_id)
        if target is not None and await self.append(lambda s: s.hide(target), target):
            self.notify(f"Hid {target} from the model.")

    async def restore(self, entry_id: str | None = None) -> None:
        if entry_id is None and (span := self.app.session_tree.marked_span()) is not None:
            await surgery_actions.span(self, *span, restore=True)
            return
        target = self.target(entry_id)
        if target is not None and await self.append(lambda s: s.restore(target), target):
            self.notify(f"Restored {target}.")

    async def pin(self, entry_id: str | None = None, pinned: bool | None = None) -> None:
        target = self.target(entry_id)
        if target is None:
            return
        value = (not self.app.index.is_pinned(target)) if pinned is None else pinned
        if await self.append(lambda s: s.pin(target, value), target):
            self.notify(f"{'Pinned' if value else 'Unpinned'} {target}.")

    def replace(self, entry_id: str | None = None, text: str | None = None) -> None:
        app = self.app
        target = self.target(entry_id)
        if target is None or not self.can_append():
            return
        if text is None and app.index.get(target).type == "compaction":
            surgery_actions.edit_summary(self, target)
            return

        async def done(value: str | None) -> None:
            if value is None:
                return
            if await self.append(lambda s: s.replace(target, value), target):
                self.notify(f"Replaced the content of {target}.")

        if text is not None:
            app.run_worker(done(text), exit_on_error=False)
            return
        app.push_screen(
            EditorScreen(
                f"Replace what the model sees of {target}",
                self.current_text(target),
                counter=lambda value: app.replace_count(target, value),
            ),
            done,
        )

    def label(self, entry_id: str | None = None, name: str | None = None) -> None:
        app = self.app
        target = self.target(entry_id)
        if target is None:
            return

        async def done(value: str | None) -> None:
            if value is None:
                return
            if await self.append(lambda s: s.label(target, value.strip() or None), target):
                self.notify(
                    f"Labelled {target}: {value.strip()}"
                    if value.strip()
                    else f"Cleared the label of {target}."
                )

        if name is not None:
            app.run_worker(done(name), exit_on_error=False)
            return
        app.push_screen(
            PromptScreen(
                f"Label {target}", app.index.labels.get(target, ""), hint="An empty label clears it."
            ),
            done,
        )

    def rename(self, name: str | None = None) -> None:
        app = self.app

        async def done(value: str | None) -> None:
            if value is None or not value.strip():
                return
            if await self.append(lambda s: s.rename(value)):
                self.notify(f"Renamed the session: {value.strip()}")

        if name is not None:
            app.run_worker(done(name), exit_on_error=False)
            return
        # the name now, selected: typing replaces it, an arrow key keeps it to be corrected
        app.push_screen(
            PromptScreen("Rename the session", app.index.name or "", "a name for this session"), done
        )

    # -- files: fork, export, resume, new ------------------------------------------------

    def _new_session_path(self) -> Path:
        from agent_tui.store.clock import now_iso

        return self.app.config.session_dir / session_file_name(str(uuid.uuid4()), now_iso())

    async def fork(self, entry_id: str | None = None) -> None:
        """A new session file holding the path to the selected entry (or the leaf); then open it."""
        app = self.app
        if app.session is None or not app.index.leaf_id:
            self.notify("Nothing to fork yet.", severity="warning")
            return
        if not self.can_append():
            return
        target = entry_id or app.session_tree.cursor_entry_id or app.index.leaf_id
        out = self._new_session_path()
        make_private_dirs(out.parent)
        try:
            app.session.fork(target, out)
        except StoreError as e:
            self.notify(str(e), severity="error")
            return
        if app.open_session(out):
            await app.refresh_views()
            self.notify(f"Forked at {target} into {out}.")

    def export(self, path: str | None = None) -> None:
        """Export the active branch: HTML, Markdown or JSONL, by the file's extension."""
        app = self.app
        if app.session is None or not app.index.leaf_id:
            self.notify("Nothing to export yet.", severity="warning")
            return
        # a name is cut to 60 characters; a file's stem (pi's ``<time>_<uuid>``, 61) never is
        name = app.index.name
        stem = "".join(
            c if c.isalnum() or c in "-_" else "-" for c in (name[:60] if name else app.session.path.stem)
        )
        folder = app.config.exports_dir or data_home() / "exports"
        default = str(folder / f"{stem}.html")

        async def done(value: str | None) -> None:
            if not value or app.session is None:
                return
            out = Path(value).expanduser()
            if not out.is_absolute():
                out = app.config.cwd / out
            fmt = {".md": "md", ".jsonl": "jsonl"}.get(out.suffix.lower(), "html")
            try:
                make_private_dirs(out.parent)
                export_session(app.session, out, fmt)
            except (StoreError, OSError) as e:
                self.notify(f"export failed: {e}", severity="error")
                return
            self.notify(f"Exported the active branch ({fmt}) to {out}.", timeout=8)

        if path is not None:
            app.run_worker(done(path), exit_on_error=False)
            return
        app.push_screen(
            PromptScreen(
                "Export the active branch to",
                default,
                hint=".html, .md or .jsonl picks the format; an existing file is never overwritten.",
            ),
            done,
        )

    async def open_subagent(self) -> None:
        """``o`` in the tree: the subagent transcript of the selected task call (its call, its
        result or its record) in the app, with its own rows and panel, where a prompt continues it;
        in a subagent's transcript, with nothing of the kind selected, back to the parent."""
        from agent_tui.projection.subagent_links import linked_file, task_record

        app = self.app
        session = app.session
        if session is None:
            return
        selected = app.selected_id or app.session_tree.cursor_entry_id
        entry = session.index.by_id.get(selected) if selected else None
        path = linked_file(session.index.entries, session.path, entry)
        what = "subagent"
        if path is None:
            parent = session.header.get("parentSession")
            if task_record(session.index.entries) is None or not isinstance(parent, str):
                self.notify(
                    "No subagent here: select a task call, its result or its record.",
                    severity="warning",
                )
                return
            path, what = Path(parent), "parent session"
        if app.busy:
            self.notify("A reply is streaming: stop it first (Esc).", severity="warning")
            return
        if app.open_session(path):
            await app.refresh_views()
            self.notify(f"Opened the {what} {path.name}.", markup=False)

    def resume(self) -> None:
        # the library's search and the pickers: imported when asked for, not before the first frame
        from agent_tui.library.search import Library
        from agent_tui.tui.screens.session_picker import SessionPicker

        app = self.app
        library = Library([app.config.session_dir], db_path=app.config.search_index)

        async def done(path: str | None) -> None:
            if path is None:
                return
            if app.session is not None and Path(path) == app.session.path:
                return
            if app.busy:
                self.notify("A reply is streaming: stop it first (Esc).", severity="warning")
                return
            if app.open_session(Path(path)):
                await app.refresh_views()
                self.notify(f"Opened {path}.")
                if app.index.leaf_id is not None:  # its branch's files, if the disk differs
                    from agent_tui.tui.checkpoint_offer import offer_restore

                    await offer_restore(self, app.index.leaf_id)

        app.push_screen(SessionPicker(library), done)

    async def new_session(self) -> None:
        app = self.app
        if not self.can_append():
            return
        app.set_session(None)
        app.composer.set_text("")
        await app.refresh_views()
        self.notify("New session: the file is created when you send or act.")

    # -- model and thinking ---------------------------------------------------------

    def model_problem(self, provider: str, model_id: str) -> str | None:
        """Why the next send could not use ``provider/model_id`` (None: it can): an unknown provider,
        no key for it, or a model the table does not know on the provider's own API (a local server,
        one with a base URL, may serve any name). Only for the real agent (a test's agent is its own)."""
        app = self.app
        if app.config.agent_factory is not None:
            return None
        choice = app.config.model
        same = provider == (choice.provider or provider)
        wanted = ModelChoice(
            provider=provider,
            model=model_id,
            base_url=choice.base_url if same else None,
            api=choice.api if same else None,
            config_path=choice.config_path,
            thinking=choice.thinking,
        )
        try:
            config = load_agent_config(wanted)
        except AgentUnavailable as e:
            return f"cannot switch to {provider}/{model_id}: {e}"
        known = model_id in MODELS or lookup(model_id, provider).id != model_id  # a dated id: its base
        if not config.base_url and not known:
            names = ", ".join(m.id for m in MODELS.values() if m.provider == provider)[:300]
            return (
                f"unknown model {model_id!r} for {provider}: known models are {names} "
                "(a local server with a base URL may serve any name)"
            )
        return None

    def model(self, spec: str | None = None) -> None:
        app = self.app
        current = app.projection.model or {}
        provider = current.get("provider") or app.config.model.provider

        async def done(value: str | None) -> None:
            if not value:
                return
            name, level = split_level(value.strip())
            prov, _, model_id = name.partition("/")
            if not model_id or prov not in registry.PROVIDERS:  # an id, or an unambiguous part of one
                try:
                    found, _ = choose(local_catalog(app.config.config_path), name)
                except ModelChoiceError as e:
                    self.notify(str(e), title="model", severity="error", timeout=10)
                    return
                if found is not None:
                    prov, model_id = found.provider, found.id
                else:
                    prov = MODELS[name].provider if name in MODELS else provider or registry.fallback().name
                    model_id = name
            problem = self.model_problem(prov, model_id)
            if problem is not None:  # said at once, and nothing appended
                app.set_notice(problem)
                self.notify(problem, title="model", severity="error", timeout=10)
                return

            def switch(session: Session) -> None:
                session.append({"type": "model_change", "provider": prov, "modelId": model_id})
                # before the redraw: the status line and the panel name the model the next send uses
                app.config.model.provider = prov
                app.config.model.model = model_id

            if await self.append(switch):
                app.turns = None
                self.notify(f"Model: {prov}/{model_id}")
                if level is not None:
                    self.thinking(level)

        if spec is not None:
            app.run_worker(done(spec), exit_on_error=False)
            return
        path = app.config.config_path
        models = local_catalog(path)
        mine = app.config.model
        if mine.model and not any(m.id == mine.model for m in models):
            prov = mine.provider or registry.fallback().name
            models.insert(0, CatalogModel(prov, mine.model, None, "configured", True))
        now = f"{current.get('provider')}/{current.get('modelId')}" if current else None
        base_url = mine.base_url
        from agent_tui.tui.screens.model_picker import ModelPickerScreen

        app.push_screen(ModelPickerScreen(models, now, more=lambda: server_catalog(base_url, path)), done)

    def cycle_model(self) -> None:
        """pi's Ctrl+P: the next of the ``--models`` list, else of the current provider's models in
        the table."""
        app = self.app
        current = app.projection.model or {}
        scoped = list(app.config.model.scoped)
        if scoped:
            # a new session's path names no model yet: the one it started with is the current one
            provider = current.get("provider") or app.config.model.provider
            now_spec = f"{provider}/{current.get('modelId') or app.config.model.model}"
            following = (
                scoped[(scoped.index(now_spec) + 1) % len(scoped)] if now_spec in scoped else scoped[0]
            )
            self.model(following)
            return
        provider = current.get("provider") or app.config.model.provider or registry.NAMES[0]
        ids = [m.id for m in MODELS.values() if m.provider == provider]
        if not ids:
            self.notify(
                f"no other {provider} model is known: /model PROVIDER/MODEL picks one", severity="warning"
            )
            return
        now = current.get("modelId") or app.config.model.model
        following = ids[(ids.index(now) + 1) % len(ids)] if now in ids else ids[0]
        self.model(f"{provider}/{following}")

    # -- copying --------------------------------------------------------------------

    def copy_reply(self, arg: str = "") -> None:
        """``/copy``: the last reply's text to the clipboard; ``/copy N``: the N-th last."""
        app = self.app
        try:
            n = int(arg) if arg.strip() else 1
        except ValueError:
            self.notify(f"/copy takes a number (1 is the last reply), not {arg!r}", severity="error")
            return
        replies = [
            text
            for e in app.projection.path
            if e.type == "message" and e.role == "assistant" and (text := reply_text(e.message or {}))
        ]
        if n < 1 or n > len(replies):
            have = f"{len(replies)} {'reply' if len(replies) == 1 else 'replies'}"
            self.notify(f"nothing to copy: the branch has {have}", severity="warning")
            return
        text = replies[-n]
        app.copy_to_clipboard(text)
        which = "the last reply" if n == 1 else f"reply {n} from the end"
        self.notify(f"Copied {which} ({plural(len(text), 'character')}).")

    def cycle_thinking(self) -> None:
        """pi's Shift+Tab: the next thinking level the model supports (after the last, the first)."""
        app = self.app
        _, model_id, _ = app.next_send(app.projection)
        levels = selectable_thinking_levels(lookup(model_id))
        now = app.projection.thinking_level
        following = levels[(levels.index(now) + 1) % len(levels)] if now in levels else levels[0]
        if following == now:
            self.notify(f"{model_id or 'this model'} has one thinking level: {now}", severity="warning")
            return
        self.thinking(following)

    def thinking(self, level: str | None = None) -> None:
        """Choose the thinking level among those the next send's model supports (the request would
        carry another clamped to them, while the status line named it)."""
        app = self.app
        provider, model_id, _ = app.next_send(app.projection)
        supported = selectable_thinking_levels(lookup(model_id, provider))  # every face's rule

        async def done(value: str | None) -> None:
            if not value:
                return
            if value not in THINKING_LEVELS:
                self.notify(f"thinking level must be one of {', '.join(THINKING_LEVELS)}", severity="error")
                return
            if value not in supported:  # said at once, and nothing appended
                self.notify(
                    f"{model_id or 'this model'} has no thinking level {value}: "
                    f"{plural(len(supported), 'level')}, {', '.join(supported)}",
                    title="thinking",
                    severity="error",
                )
                return

            def switch(session: Session) -> None:
                session.append({"type": "thinking_level_change", "thinkingLevel": value})
                if app.config.model.thinking is not None:  # a --thinking flag must not undo this choice
                    app.config.model.thinking = value  # before the redraw, which shows it
                    app.turns = None

            if await self.append(switch):
                self.notify(f"Thinking level: {value}")

        if level is not None:
            app.run_worker(done(level), exit_on_error=False)
            return
        choices = [(level, level) for level in supported]
        app.push_screen(ChoiceScreen("Thinking level", choices, app.projection.thinking_level), done)

    # -- compaction -----------------------------------------------------------------

    def compact(self, focus: str | None = None, *, review: bool = False) -> None:
        """Fold older history into a summary (the model writes it), optionally with focus instructions;
        ``review``: the summary opens in an editor first and applies only when saved."""
        app = self.app
        if not self.can_append():
            return
        if (span := app.session_tree.marked_span()) is not None:
            surgery_actions.compact_span(self, *span, focus)
            return
        preview = self.compaction_preview()
        if preview is None:  # the same notice from the key, /compact and /compact FOCUS (and the CLI's words)
            from agent_tui.agent.compaction import NOTHING_TO_COMPACT

            app.panel.preview_fold(set())
            self.notify(NOTHING_TO_COMPACT, title="compact", markup=False)
            return
        if focus is None and not self._compact_prompted:
            self._compact_prompted = True

            def done(value: str | None) -> None:
                self._compact_prompted = False
                app.panel.preview_fold(set())
                if value is not None:
                    self.compact(value, review=prompt.alternate_chosen)

            prompt = PromptScreen(
                "Compact the context",
                "",
                "optional focus, e.g. keep the parser details",
                hint=preview + "\nEnter compacts (with the focus text, if any) · Escape cancels"
                "\nCtrl+R: the summary opens in an editor first, to review and edit",
                alternate="ctrl+r",
            )
            app.push_screen(prompt, done)
            return
        app.panel.preview_fold(set())
        if review:
            compaction_review.review(self, (focus or "").strip() or None)
            return
        try:
            turns = app.turns_for_session()
        except AgentUnavailable as e:
            self.notify(str(e), title="cannot compact", severity="warning", timeout=10)
            return
        app.busy = True
        app.run_events(turns.compact((focus or "").strip() or None))

    def compaction_preview(self) -> str | None:
        """What a compaction would do now (the panel marks the rows it would fold); None when the
        branch has nothing to compact."""
        app = self.app
        if app.session is None:
            return None
        from agent_tui.agent.compaction import estimated_after, preview
        from agent_tui.projection.compaction import CompactionSettings

        settings = CompactionSettings()
        with contextlib.suppress(AgentUnavailable):
            # the agent's settings for its model, fitted to its window
            settings = app.turns_for_session().compaction_settings()
        plan = preview(app.session, settings)
        if plan is None:
            return None
        app.panel.preview_fold(set(plan.summarized_entry_ids))
        return (
            f"Folds {plural(len(plan.summarized_entry_ids), 'entry', 'entries')} into a summary and keeps "
            f"{len(plan.kept_entry_ids)}: context about {plan.estimated_before:,} → about "
            f"{plural(estimated_after(plan), 'token')}, the summary guessed at {plan.summary_guess:,} "
            "(marked in the panel)."
        )

    async def uncompact(self) -> None:
        """Continue from the entry before the latest compaction (one appended leaf move)."""
        from agent_tui.agent.compaction import CompactionError, undo_compaction

        def undo(session: Session) -> None:
            try:
                undo_compaction(session)
            except CompactionError as e:
                raise StoreError(str(e)) from e

        if await self.append(undo):
            self.notify("Continuing from before the latest compaction.")
