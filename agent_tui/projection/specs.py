"""The shapes of the provider registry's data: a provider, a model, a price, a call's usage (pure
data, no tables).

The tables themselves are the registry's (:mod:`agent_tui.projection.registry`), one entry
per provider; :mod:`agent_tui.projection.models` and :mod:`agent_tui.projection.pricing`
read them and let the config file add to them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

#: The thinking levels a user picks (flag, config file, /thinking, Ctrl+T), pi 1.6's THINKING_LEVELS.
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")
#: pi 1.6's EXTENDED_THINKING_LEVELS in order ("max" exists on a few models); clamping walks this list.
THINKING_LEVEL_ORDER = (*THINKING_LEVELS, "max")


@dataclass(frozen=True, slots=True)
class ModelInfo:
    provider: str
    id: str
    context_window: int
    max_output: int
    reasoning: bool = False
    images: bool = True
    adaptive_thinking: bool = False  # thinking is {"type": "adaptive"} with an effort, not a token budget
    # pi's thinkingLevelMap: the value sent for a level (reasoning_effort for Chat Completions);
    # None marks a level unsupported; a level left out sends its own name (xhigh and max: unsupported).
    thinking_level_map: Mapping[str, str | None] | None = field(default=None, hash=False)
    # pi's compat.supportsReasoningEffort for Chat Completions (pi detects it from the base URL; here
    # it is per model, true unless the config says otherwise).
    supports_reasoning_effort: bool = True
    #: the API this model is called through when nothing else says (``[models."id"] api``): a name
    #: from its provider's ``apis`` ("chat", "responses"); None: the provider's rule
    api: str | None = None


@dataclass(frozen=True, slots=True)
class Rates:
    input: float
    output: float
    cache_read: float = 0.0
    cache_write: float = 0.0


@dataclass(frozen=True, slots=True)
class Usage:
    """The tokens of one model call (``pricing.usage_of`` reads pi's usage object into one)."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    @property
    def total(self) -> int:
        return self.input + self.output + self.cache_read + self.cache_write

    @property
    def prompt(self) -> int:
        """Tokens sent: input, cache read and cache write."""
        return self.input + self.cache_read + self.cache_write


@dataclass(frozen=True, slots=True)
class Price:
    """Dollars per million tokens, with optional tiers ``(input tokens above, rates)``."""

    base: Rates
    tiers: tuple[tuple[int, Rates], ...] = ()

    def rates(self, input_tokens: int) -> Rates:
        chosen, threshold = self.base, -1
        for above, rates in self.tiers:
            if input_tokens > above and above > threshold:
                chosen, threshold = rates, above
        return chosen

    def cost(self, usage: Usage) -> float:
        return sum(self.cost_parts(usage))

    def cost_parts(self, usage: Usage) -> tuple[float, float, float, float]:
        """Dollars for (input, output, cache read, cache write), pi's calculateCost."""
        r = self.rates(usage.input + usage.cache_read + usage.cache_write)
        return (
            r.input * usage.input / 1_000_000,
            r.output * usage.output / 1_000_000,
            r.cache_read * usage.cache_read / 1_000_000,
            r.cache_write * usage.cache_write / 1_000_000,
        )


def price(
    i: float, o: float, cr: float, cw: float, tier: tuple[int, float, float, float, float] | None = None
) -> Price:
    """A price written as the tables write it: input, output, cache read, cache write (and one tier)."""
    tiers = ((tier[0], Rates(*tier[1:])),) if tier else ()
    return Price(Rates(i, o, cr, cw), tiers)


@dataclass(frozen=True, slots=True)
class ApiRoute:
    """One API a provider can be called through: pi's api name (recorded in sessions), the SDK
    adapter that streams it, the wire module that writes its body, the SDK it imports."""

    api: str
    adapter: str
    wire: str
    sdk_module: str


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    """One provider: everything the config, the CLI, the app and the SDK loading need to know.

    Adding a provider is one of these (a module under ``projection/registry``) and its adapter
    (a class under ``agent_tui.providers`` taking ``api_key``, ``base_url``, ``timeout``,
    ``request_log`` and ``name``); a new API also gets its wire format under ``projection/wire``.
    """

    name: str  # the provider recorded in sessions (pi's provider id)
    label: str  # for people: "Anthropic"
    api: str  # pi's api name, e.g. "anthropic-messages"
    adapter: str  # "module:Class" of the SDK adapter (imported only when a model is called)
    sdk_module: str  # the SDK the adapter streams through (the app preloads it)
    wire: str  # the module under agent_tui.projection.wire that writes this API's request body
    key_env: tuple[str, ...]  # environment variables holding the key, first wins
    base_url_env: tuple[str, ...]  # environment variables holding the base URL, first wins
    default_base_url: str
    default_model: str
    models: tuple[ModelInfo, ...] = ()
    prices: Mapping[str, Price] = field(default_factory=dict, hash=False)
    #: model ids starting with one of these belong to this provider even when the table lacks them
    model_prefixes: tuple[str, ...] = ()
    #: the provider for a bare base URL and for models nobody's table knows (OpenAI-compatible servers)
    serves_any_model: bool = False
    #: the API merges consecutive messages of one role into one (the panel shows the merge)
    merges_roles: bool = False
    #: the name ``--api`` gives the API above ("chat", "messages"), and the other APIs this provider
    #: speaks, by the name ``--api`` gives them
    api_name: str = ""
    other_apis: Mapping[str, ApiRoute] = field(default_factory=dict, hash=False)
    #: the ``other_apis`` name used for this provider's own reasoning models at its default base URL
    #: (OpenAI: "responses"); a compatible server (another base URL) gets the API above
    reasoning_api: str | None = None
    #: headers every request carries (a gateway's attribution headers)
    headers: Mapping[str, str] = field(default_factory=dict, hash=False)
    #: environment variables any of which means the SDK finds credentials itself when no key is
    #: given (an AWS profile or keys, Google's application default credentials): no key is required
    ambient_credentials: tuple[str, ...] = ()
    #: reached through another service's account (a gateway, a cloud): setup messages name it
    #: after the providers one signs up with directly
    gateway: bool = False
    #: how its API prices an image (``image_tokens.RULES``: "area" is Anthropic's pixels / 750,
    #: "tiles-512" OpenAI's, "tiles-768" Gemini's); a gateway's model id naming another provider
    #: ("google/gemini-…") takes that provider's rule
    images: str = "area"

    @property
    def default_route(self) -> ApiRoute:
        return ApiRoute(self.api, self.adapter, self.wire, self.sdk_module)

    @property
    def routes(self) -> dict[str, ApiRoute]:
        """Every API this provider speaks, by its ``--api`` name."""
        return {self.api_name or self.api: self.default_route, **self.other_apis}

    @property
    def key_env_name(self) -> str:
        """The variable named in messages ("set ANTHROPIC_API_KEY")."""
        return self.key_env[0]
