"""Model providers: adapters over the official anthropic and openai SDKs.

The openai and anthropic SDKs import their optional aiohttp transport (``DefaultAioHttpClient``)
whenever aiohttp is installed (``agent-tui serve`` brings it): 0.25 s of aiohttp's modules and an
SSL context built at import, for a transport the adapters never use (they take the SDK's default
httpx client). Marking the vendored module as absent makes the SDK take its own fallback for a
missing extra; aiohttp itself stays importable for what does use it.
"""

from __future__ import annotations

import sys

for _unused in ("openai._vendor.httpx_aiohttp", "anthropic._vendor.httpx_aiohttp"):
    sys.modules.setdefault(_unused, None)  # type: ignore[arg-type]
