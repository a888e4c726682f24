"""What a configured server says about its models: their ids, and a model's context window.

``GET /v1/models`` lists an OpenAI-compatible server's models (vLLM adds ``max_model_len``);
Anthropic's ``GET /v1/models`` lists its models when a key is set. A model the table does not
know gets its window from the server when it says: llama.cpp's ``GET /props``
(``default_generation_settings.n_ctx``), Ollama's ``POST /api/show`` (``model_info``'s
``*.context_length``, or ``num_ctx`` in ``parameters``), vLLM's ``max_model_len``. Plain HTTP
from the standard library, a few seconds at most; any failure is "the server did not say"
(None or an empty list), never an error: these are conveniences around the real calls.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from agent_tui.projection.specs import ProviderSpec

TIMEOUT = 3.0
#: Server roots whose ``GET /props`` answered as llama.cpp's does: they count tokens (``/tokenize``),
#: and only they are asked to (an endpoint is never tried on a server that did not say it has it).
_LLAMA_SERVERS: set[str] = set()
ANTHROPIC_VERSION = "2023-06-01"


@dataclass(frozen=True, slots=True)
class ServerModel:
    id: str
    context_window: int | None = None


def _request(
    url: str, headers: dict[str, str], body: dict[str, Any] | None = None, timeout: float = TIMEOUT
) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"accept": "application/json", **headers})
    if data is not None:
        request.add_header("content-type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read(4_000_000))
    except (OSError, ValueError, urllib.error.URLError):
        return None


def _headers(spec: ProviderSpec, api_key: str | None) -> dict[str, str]:
    if spec.api == "anthropic-messages":
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        return headers
    return {"authorization": f"Bearer {api_key}"} if api_key else {}


def _api_base(spec: ProviderSpec, base_url: str | None) -> str:
    """The URL ``/models`` hangs off: ``.../v1`` (the Anthropic SDK's base URL has no ``/v1``)."""
    base = (base_url or spec.default_base_url).rstrip("/")
    if spec.api == "anthropic-messages" and not base.endswith("/v1"):
        base += "/v1"
    return base


def _server_root(base_url: str) -> str:
    base = base_url.rstrip("/")
    return base[: -len("/v1")] if base.endswith("/v1") else base


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def list_models(
    spec: ProviderSpec, base_url: str | None, api_key: str | None, timeout: float = TIMEOUT
) -> list[ServerModel]:
    """The models the server lists (empty when it lists none, cannot be reached, or is not asked:
    a provider's own service without a key)."""
    if spec.api not in ("anthropic-messages", "openai-completions", "openai-responses"):
        return []
    if not api_key and not base_url:
        return []
    data = _request(_api_base(spec, base_url) + "/models", _headers(spec, api_key), timeout=timeout)
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return []
    out: list[ServerModel] = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("id"), str) and item["id"]:
            out.append(ServerModel(item["id"], _positive_int(item.get("max_model_len"))))
    return out


def context_window(
    spec: ProviderSpec, base_url: str, model_id: str, api_key: str | None, timeout: float = TIMEOUT
) -> int | None:
    """The context window the server at ``base_url`` runs ``model_id`` with, when it says."""
    headers = _headers(spec, api_key)
    root = _server_root(base_url)
    props = _request(root + "/props", headers, timeout=timeout)  # llama.cpp
    if isinstance(props, dict):
        settings = props.get("default_generation_settings")
        if isinstance(settings, dict):
            _LLAMA_SERVERS.add(root)
        n_ctx = _positive_int(settings.get("n_ctx")) if isinstance(settings, dict) else None
        if n_ctx := n_ctx or _positive_int(props.get("n_ctx")):
            return n_ctx
    shown = _request(root + "/api/show", headers, {"model": model_id}, timeout=timeout)  # Ollama
    if isinstance(shown, dict):
        for line in str(shown.get("parameters") or "").splitlines():
            name, _, value = line.partition(" ")
            if name == "num_ctx" and value.strip().isdigit():
                return int(value.strip())
        info = shown.get("model_info")
        if isinstance(info, dict):
            for key, value in info.items():
                if str(key).endswith(".context_length") and (n := _positive_int(value)):
                    return n
    for model in list_models(spec, base_url, api_key, timeout):  # vLLM
        if model.id == model_id and model.context_window:
            return model.context_window
    return None


def llama_server_root(base_url: str | None) -> str | None:
    """The root of the llama.cpp server at ``base_url`` when its ``/props`` said it is one, else None."""
    root = _server_root(base_url) if base_url else None
    return root if root in _LLAMA_SERVERS else None


__all__ = ["ServerModel", "context_window", "list_models", "llama_server_root"]
