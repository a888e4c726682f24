"""pi's RPC commands that give the agent work: ``prompt``, ``steer``, ``follow_up``, ``abort``,
``clear_queue`` (pi's Prompting), and ``bash``, ``abort_bash`` (pi's Bash).

A message may start with a ``/template`` or ``/skill:name`` (expanded as the app and print mode
expand them) and carry ``images``. ``prompt`` while the agent runs needs ``streamingBehavior``
(``"steer"`` or ``"followUp"``) and is queued; ``bash`` streams its output, redacted, as
``bash_execution_update`` records before its response.
"""

from __future__ import annotations

import asyncio
import contextlib

from agent_tui.agent.skills import SkillError
from agent_tui.cli.rpc_host import RpcHost
from agent_tui.cli.rpc_registry import LATER, CommandError, Handler, text_field
from agent_tui.store.errors import StoreError
from agent_tui.store.record import JSONObject
from agent_tui.store.redact import StreamRedactor


def _content(server: RpcHost, cmd: JSONObject) -> str | list[JSONObject]:
    """The message to send: ``message`` with a ``/template`` or ``/skill:name`` expanded (as the
    app and print mode expand them), and ``images`` after it."""
    message = text_field(cmd, "message")
    assert message is not None
    resources = server.agent.loop.resources
    if resources is not None:
        try:
            expanded = resources.expand(message)
        except SkillError as e:
            raise CommandError(f"{cmd['type']}: {e}") from e
        message = expanded if expanded is not None else message
    images = cmd.get("images")
    if images is None:
        return message
    if not isinstance(images, list) or not all(
        isinstance(i, dict) and isinstance(i.get("data"), str) and isinstance(i.get("mimeType"), str)
        for i in images
    ):
        raise CommandError(f"{cmd['type']}: 'images' must be a list of {{type: image, data, mimeType}}")
    blocks: list[JSONObject] = [{"type": "text", "text": message}]
    blocks += [{"type": "image", "data": i["data"], "mimeType": i["mimeType"]} for i in images]
    return blocks


async def _prompt(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    content = _content(server, cmd)
    text, blocks = _queued(cmd, content)
    if server.busy or server.agent.running:
        behavior = cmd.get("streamingBehavior")
        if behavior == "steer":
            server.agent.loop.queue.steer(text, blocks)
        elif behavior == "followUp":
            server.agent.loop.queue.follow_up(text, blocks)
        else:
            raise CommandError(
                'prompt: the agent is running: set \'streamingBehavior\' to "steer" or "followUp" to queue it'
            )
        return {"disposition": "queued"}
    server.idle("prompt")
    if server.session.read_only:
        raise CommandError(server.session.read_only_reason or "the session is read-only")
    server.start_run(server.agent.prompt(content))
    return {"disposition": "started"}


def _queued(cmd: JSONObject, content: str | list[JSONObject]) -> tuple[str, list[JSONObject] | None]:
    """What the queue holds for a message: its text and, with images, its content blocks."""
    if isinstance(content, str):
        return content, None
    return str(cmd["message"]), content


async def _steer(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    server.agent.loop.queue.steer(*_queued(cmd, _content(server, cmd)))
    return {"disposition": "queued"}


async def _follow_up(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    server.agent.loop.queue.follow_up(*_queued(cmd, _content(server, cmd)))
    return {"disposition": "queued"}


async def _abort(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    async def wait() -> None:
        await server.stop()
        server.respond(cmd, "abort")

    server.later(wait())
    return LATER


async def _clear_queue(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    queued = server.agent.queued()
    server.agent.loop.queue.take_all()
    return queued


async def _bash(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    text = text_field(cmd, "command")
    assert text is not None
    exclude = cmd.get("excludeFromContext", False)
    if not isinstance(exclude, bool):
        raise CommandError("bash: 'excludeFromContext' must be true or false")
    server.idle("bash")
    abort = server.bash_abort = asyncio.Event()
    redactor = StreamRedactor()

    def update(delta: str) -> None:
        record: JSONObject = {"type": "bash_execution_update"}
        if isinstance(cmd.get("id"), str | int):
            record["id"] = cmd["id"]
        record["delta"] = delta
        server.lines.write(record)

    def output(chunk: str) -> None:
        safe = redactor.feed(chunk)
        if safe:
            update(safe)

    async def run() -> None:
        try:
            message = await server.agent.bash(
                text, exclude_from_context=exclude, on_output=output, abort=abort
            )
        except (StoreError, RuntimeError) as e:
            server.fail(cmd, "bash", str(e))
            return
        finally:
            server.bash_abort = None
        rest = redactor.flush()
        if rest:
            update(rest)
        data: JSONObject = {
            "output": message.get("output", ""),
            "exitCode": message.get("exitCode"),
            "cancelled": bool(message.get("cancelled")),
            "truncated": bool(message.get("truncated")),
        }
        if message.get("fullOutputPath"):
            data["fullOutputPath"] = message["fullOutputPath"]
        server.respond(cmd, "bash", data)

    server.bash_task = asyncio.ensure_future(run())
    server.later(server.bash_task)
    return LATER


async def _abort_bash(server: RpcHost, cmd: JSONObject) -> JSONObject | None:
    if server.bash_abort is not None:
        server.bash_abort.set()
    if server.bash_task is not None and not server.bash_task.done():
        with contextlib.suppress(Exception):
            await asyncio.shield(server.bash_task)
    return None


#: This module's commands, pi's name -> handler (:mod:`agent_tui.cli.rpc_commands` joins the tables).
COMMANDS: dict[str, Handler] = {
    "prompt": _prompt,
    "steer": _steer,
    "follow_up": _follow_up,
    "abort": _abort,
    "clear_queue": _clear_queue,
    "bash": _bash,
    "abort_bash": _abort_bash,
}


__all__ = ["COMMANDS"]
