"""Every worker's failure is shown: one handler, the app's, for the workers of every owner.

Textual posts ``Worker.StateChanged`` to the node that started the worker only (the message does
not bubble), so a worker a screen or a widget starts (``@work`` on its method, ``self.run_worker``)
would fail unseen; and a worker started with ``exit_on_error=True`` (Textual's default) ends the
app. So every worker runs with ``exit_on_error=False``, and each screen or widget owning one
forwards its failures with :func:`forward_failure` from its ``on_worker_state_changed``; the app
shows its own and the forwarded ones with :func:`failure_text` as an error notice.
"""

from __future__ import annotations

from typing import Any

from textual.dom import DOMNode
from textual.message import Message
from textual.worker import Worker, WorkerState


class WorkerFailed(Message):
    """A worker of a screen or a widget failed: posted to the app, which shows it."""

    def __init__(self, worker: Worker[Any]) -> None:
        super().__init__()
        self.worker = worker


def failure_text(worker: Worker[Any]) -> str:
    """One line naming what went wrong: the exception's type and message."""
    error = worker.error
    return f"{type(error).__name__}: {error}" if error is not None else "unknown error"


def forward_failure(owner: DOMNode, event: Worker.StateChanged) -> None:
    """From ``owner``'s ``on_worker_state_changed``: a failed worker's error goes to the app."""
    if event.state is WorkerState.ERROR:
        owner.app.post_message(WorkerFailed(event.worker))


__all__ = ["WorkerFailed", "failure_text", "forward_failure"]
