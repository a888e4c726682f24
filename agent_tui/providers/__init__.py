"""Model providers: adapters over the official anthropic and openai SDKs."""
