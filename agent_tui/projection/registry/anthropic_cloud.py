"""Claude on Amazon Bedrock and on Google Vertex AI, through the ``anthropic`` SDK's
``AsyncAnthropicBedrock`` / ``AsyncAnthropicVertex`` clients: the Messages API and its wire format,
with the cloud's own credentials (the SDKs find them: an AWS profile, keys or role, or
``AWS_BEARER_TOKEN_BEDROCK``; Google's application default credentials or an access token)."""

from __future__ import annotations

from agent_tui.projection.registry.anthropic import MODELS as ANTHROPIC_MODELS
from agent_tui.projection.registry.anthropic import PRICES as ANTHROPIC_PRICES
from agent_tui.projection.specs import ModelInfo, ProviderSpec

BEDROCK = "amazon-bedrock"  # pi's provider id
VERTEX = "anthropic-vertex"

# Bedrock names models anthropic.<id> (in a region) or us./eu./global.anthropic.<id> (cross-region).
_BEDROCK_MODELS = tuple(
    ModelInfo(
        BEDROCK,
        f"{prefix}anthropic.{m.id}",
        m.context_window,
        m.max_output,
        reasoning=m.reasoning,
        images=m.images,
        adaptive_thinking=m.adaptive_thinking,
    )
    for m in ANTHROPIC_MODELS
    for prefix in ("", "us.", "eu.", "global.")
)
_BEDROCK_PRICES = {
    f"{prefix}anthropic.{model}": value
    for model, value in ANTHROPIC_PRICES.items()
    for prefix in ("", "us.", "eu.", "global.")
}

BEDROCK_SPEC = ProviderSpec(
    name=BEDROCK,
    label="Amazon Bedrock",
    api="anthropic-messages",
    adapter="agent_tui.providers.anthropic_cloud_provider:AnthropicBedrockProvider",
    sdk_module="anthropic",
    wire="anthropic_messages",
    key_env=("AWS_BEARER_TOKEN_BEDROCK",),
    base_url_env=("ANTHROPIC_BEDROCK_BASE_URL",),
    default_base_url="",  # https://bedrock-runtime.{AWS_REGION}.amazonaws.com, the SDK's
    default_model="us.anthropic.claude-opus-5-5",  # pi 1.6's default
    models=_BEDROCK_MODELS,
    prices=_BEDROCK_PRICES,
    merges_roles=True,
    gateway=True,
    api_name="messages",
    ambient_credentials=(
        "AWS_PROFILE",
        "AWS_ACCESS_KEY_ID",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
    ),
)

VERTEX_SPEC = ProviderSpec(
    name=VERTEX,
    label="Claude on Vertex AI",
    api="anthropic-messages",
    adapter="agent_tui.providers.anthropic_cloud_provider:AnthropicVertexProvider",
    sdk_module="anthropic",
    wire="anthropic_messages",
    key_env=("ANTHROPIC_VERTEX_ACCESS_TOKEN",),
    base_url_env=("ANTHROPIC_VERTEX_BASE_URL",),
    default_base_url="",  # https://{CLOUD_ML_REGION}-aiplatform.googleapis.com/v1, the SDK's
    default_model="claude-opus-5-5",
    merges_roles=True,
    gateway=True,
    api_name="messages",
    ambient_credentials=("GOOGLE_APPLICATION_CREDENTIALS", "ANTHROPIC_VERTEX_PROJECT_ID"),
)
