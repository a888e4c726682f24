"""The main screen: the session tree, the chat with the composer, the "what the model sees" panel.

It owns the layout (``main.tcss`` beside it) and gives the app typed getters for
its panes, which stay reachable while a dialog is on top of it. The ``#status``
slot, docked above the footer, holds the status line (``widgets/status_line``).

The chat and the composer are the app: they always get the width left over. The
tree is shown beside them from :data:`TREE_BESIDE` columns, the panel from
:data:`PANEL_BESIDE` (as fractions of the width, see ``main.tcss``), unless the
user hid them; otherwise F1 / F3 open them as a drawer over the chat, and Esc
closes it. A resize re-flows at once (:meth:`MainScreen.apply_layout`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import ClassVar, Literal

from textual import events, getters
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.geometry import Size
from textual.screen import UPDATE_PERIOD, Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Input, Static, TextArea

from agent_tui.tui.frame_timer import FrameTimer
from agent_tui.tui.region_compositor import RegionCompositor
from agent_tui.tui.widgets.agent_work import AgentWork
from agent_tui.tui.widgets.chat_view import ChatView
from agent_tui.tui.widgets.completion_menu import CompletionMenu
from agent_tui.tui.widgets.composer import Composer
from agent_tui.tui.widgets.context_panel import ContextPanel
from agent_tui.tui.widgets.key_footer import KeyFooter
from agent_tui.tui.widgets.queue_view import QueueView
from agent_tui.tui.widgets.session_tree import SessionTree
from agent_tui.tui.widgets.status_line import StatusLine
from agent_tui.tui.widgets.tree_bar import TreeBar, TreePane, TreeSearch

TREE_BESIDE = 110  # columns from which the tree fits beside a chat of about 80
PANEL_BESIDE = 150  # columns from which the panel fits too (the chat keeps about 60)

#: What the empty composer says (a new user's first screen).
#: The composer's placeholder, longest first: it shows the longest that fits its width.
PLACEHOLDERS = (
    "Type a message · Enter sends · ? help · F1 tree · F3 what the model sees",
    "Type a message · Enter sends · ? help · F1 tree · F3 context",
    "Type a message · Enter sends · ? help",
)

Pane = Literal["tree", "panel"]
Placement = Literal["beside", "drawer", "hidden"]


class MainScreen(Screen[None]):
    CSS_PATH = Path(__file__).parent / "main.tcss"
    AUTO_FOCUS = "#composer"

    # Priority: a key typed right after F2 must already reach the composer, and the composer would
    # take PageUp/PageDown for its own cursor.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f1", "toggle_pane('tree')", "Tree: show, focus, hide", show=False, priority=True, id="tree"),
        Binding("f2", "focus_composer", "Composer", show=False, priority=True, id="composer"),
        Binding(
            "f3", "toggle_pane('panel')", "Panel: show, focus, hide", show=False, priority=True, id="panel"
        ),
        Binding(
            "pageup", "scroll_chat('page_up')", "Scroll the chat up", show=False, priority=True, id="chat_up"
        ),
        Binding(
            "pagedown",
            "scroll_chat('page_down')",
            "Scroll the chat down",
            show=False,
            priority=True,
            id="chat_down",
        ),
        Binding(
            "ctrl+home", "scroll_chat('home')", "Chat: the top", show=False, priority=True, id="chat_top"
        ),
        Binding("ctrl+end", "scroll_chat('end')", "Chat: the end", show=False, priority=True, id="chat_end"),
        Binding("f5", "expand_tools", "Expand / collapse tool output", show=False, id="expand_tools"),
    ]

    def __init__(
        self,
        history: list[str] | None = None,
        on_ready: Callable[[], Awaitable[None]] | None = None,
        on_wanted: Callable[[Pane, bool], None] | None = None,
    ) -> None:
        super().__init__(id="main-screen")
        self._compositor = RegionCompositor()  # a frame renders what changed, not a box around it
        self._history = history
        self._on_ready = on_ready  # run once the panes are mounted (the app opens its session)
        self._on_wanted = on_wanted  # the user showed or hid a pane that fits (the app saves it)
        #: Whether the user wants each pane beside the chat when it fits (the config remembers it).
        self.wanted: dict[Pane, bool] = {"tree": True, "panel": True}
        self.drawer: Pane | None = None  # the pane open over the chat, if any
        self._frame_timer: FrameTimer | None = None
        self._resumed = False  # (_on_screen_resume)
        self._drawn = False  # whether a frame of this screen has been written (_compositor_refresh)

    @property
    def _update_timer(self) -> Timer:
        """Textual's screen draws from this timer: ours begins a frame as soon as one is needed
        (``frame_timer``), so a key typed after a long frame is not left for two more intervals."""
        if self._frame_timer is None:
            timer = FrameTimer(
                self, UPDATE_PERIOD, name="screen_update", callback=self._on_timer_update, pause=True
            )
            timer._start()
            self._timers.add(timer)
            self._frame_timer = timer
        return self._frame_timer

    def compose(self) -> ComposeResult:
        with Horizontal(id="main"):
            with TreePane(id="sidebar"):  # the tree with pi's search box and its keys' bar
                yield Static("Session", id="sidebar-title", markup=False)
                yield TreeSearch(placeholder="search the tree (Enter: back, Esc: clear)", id="tree-search")
                yield SessionTree(id="tree")
                yield TreeBar(id="tree-bar", markup=False)
            with Vertical(id="center"):
                yield ChatView(id="chat")
                yield Static(id="notice", markup=False)
                yield QueueView(id="queue")
                yield AgentWork(id="agent-work")
                yield CompletionMenu(id="completion")
                composer = Composer(id="composer", history=self._history)
                composer.placeholders = PLACEHOLDERS
                yield composer
            with Vertical(id="context"):
                yield Static("What the model sees", id="context-title", markup=False)
                yield ContextPanel(id="panel")
        with Vertical(id="status"):
            yield StatusLine(id="status-line")
        yield KeyFooter()

    def _on_screen_resume(self, event: events.ScreenResume) -> None:
        """The first resume (the app's start) does not restyle the whole screen: every widget was
        styled as it mounted, with the same stylesheet, and a class or focus change since restyled
        its own nodes (Textual's restyle of the 104 widgets cost 25-30 ms of the first frame).
        Textual's own handler runs after this one (a handler per class of the MRO)."""
        if not self._resumed:
            self._resumed = True
            event.refresh_styles = False

    def _compositor_refresh(self) -> None:
        """Before the first frame is written, no frame is rendered inside the app's start batch:
        Textual would render the whole screen there and throw it away (its ``_display`` writes
        nothing while a batch is open; 50-90 ms at 200x50), then render it again for the terminal's
        first ``Resize``. The compositor's dirty regions are kept for that render."""
        if not self._drawn and self.app._batch_count:
            return
        super()._compositor_refresh()
        self._drawn = self._drawn or self is self.app.screen

    def _screen_resized(self, size: Size) -> None:
        """Inside the start's batch, the screen's own first ``Resize`` (its first layout made it
        this size) does not lay it out again: the terminal's first ``Resize`` comes right after
        the batch and lays it out, with every change asked for meanwhile (20-30 ms a layout)."""
        if not self._drawn and self.app._batch_count and size == self._compositor.size:
            return
        super()._screen_resized(size)

    async def on_mount(self) -> None:
        self.apply_layout()
        if self._on_ready is not None:
            await self._on_ready()

    # -- the layout ---------------------------------------------------------------

    def fits(self, pane: Pane) -> bool:
        """Whether ``pane`` fits beside the chat at the current width."""
        return self.size.width >= (TREE_BESIDE if pane == "tree" else PANEL_BESIDE)

    def placement(self, pane: Pane) -> Placement:
        if self.fits(pane) and self.wanted[pane]:
            return "beside"
        return "drawer" if self.drawer == pane else "hidden"

    def apply_layout(self) -> None:
        """Show each pane beside the chat, as a drawer, or not at all, for the current width."""
        if self.drawer is not None and self.placement(self.drawer) != "drawer":
            self.drawer = None  # it fits now: beside, not over the chat
        for pane, widget_id in (("tree", "#sidebar"), ("panel", "#context")):
            where = self.placement(pane)  # type: ignore[arg-type]
            widget = self.query_one(widget_id)
            widget.set_class(where == "beside", "-beside")
            widget.set_class(where == "drawer", "-drawer")

    def on_resize(self, event: events.Resize) -> None:
        self.apply_layout()
        self.call_after_refresh(self._focus_if_lost)

    def _focus_if_lost(self) -> None:
        """A pane the resize hid took the focus with it (Textual leaves none): the composer has it."""
        if self.focused is None and self.is_current:
            self.set_focus(self.composer)

    # -- the panes' keys --------------------------------------------------------------
    # Focus at once (``Widget.focus`` is deferred, so keys typed right after would go elsewhere).

    def action_toggle_pane(self, pane: Pane) -> None:
        """F1 / F3: show the pane and focus it; pressed again while it has the focus, hide it.
        Where the pane fits beside the chat, showing or hiding it is remembered (``on_wanted``)."""
        self.toggle_pane(pane)

    def toggle_pane(self, pane: Pane) -> None:
        widget: Widget = self.session_tree if pane == "tree" else self.panel.rows_list
        where = self.placement(pane)
        if where == "hidden":
            if self.fits(pane):
                self._want(pane, True)
            else:
                self.open_drawer(pane)
            self.set_focus(widget)
        elif self.focused is widget:
            if where == "drawer":
                self.close_drawer()
            else:
                self._want(pane, False)
            self.set_focus(self.composer)
        else:
            self.set_focus(widget)

    def _want(self, pane: Pane, shown: bool) -> None:
        self.set_wanted(pane, shown)
        if self._on_wanted is not None:
            self._on_wanted(pane, shown)

    def action_focus_composer(self) -> None:
        self.focus_composer()

    def focus_composer(self) -> None:
        """Focus the composer, closing a drawer that covers the chat."""
        self.close_drawer()
        self.set_focus(self.composer)

    def action_scroll_chat(self, where: str) -> None:
        chat = self.chat
        if where == "page_up":
            chat.scroll_page_up(animate=False)
        elif where == "page_down":
            chat.scroll_page_down(animate=False)
        elif where == "home":
            chat.scroll_home(animate=False)
        else:
            chat.scroll_end(animate=False)

    def action_expand_tools(self) -> None:
        self.chat.toggle_tools()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """A drawer closes when the focus goes elsewhere (a click in the chat, Tab)."""
        if self.drawer is None:
            return
        pane = self.query_one("#sidebar" if self.drawer == "tree" else "#context")
        if event.widget is not pane and pane not in event.widget.ancestors:
            self.close_drawer()

    def on_key(self, event: events.Key) -> None:
        """Text typed where nothing takes text (the tree, the panel, a collapsible in the chat)
        goes to the composer: nothing typed is lost."""
        focused = self.focused
        if not (event.is_printable and event.character) or event.key == "space":
            return
        if isinstance(focused, TextArea | Input):
            return
        event.stop()
        event.prevent_default()
        self.close_drawer()
        composer = self.composer
        self.set_focus(composer)
        composer.insert(event.character)

    def is_shown(self, pane: Pane) -> bool:
        return self.placement(pane) != "hidden"

    def open_drawer(self, pane: Pane) -> None:
        self.drawer = pane
        self.apply_layout()

    def close_drawer(self) -> bool:
        """Close the open drawer (False if none was open)."""
        if self.drawer is None:
            return False
        self.drawer = None
        self.apply_layout()
        return True

    def set_wanted(self, pane: Pane, wanted: bool) -> None:
        self.wanted[pane] = wanted
        if wanted and self.drawer == pane:
            self.drawer = None
        self.apply_layout()

    # -- the panes (typed getters: each a query_one when read) ------------------------

    session_tree = getters.query_one(SessionTree)
    chat = getters.query_one(ChatView)
    panel = getters.query_one(ContextPanel)
    composer = getters.query_one(Composer)
    notice = getters.query_one("#notice", Static)
    agent_work = getters.query_one(AgentWork)
    status_line = getters.query_one(StatusLine)
    sidebar_title = getters.query_one("#sidebar-title", Static)
