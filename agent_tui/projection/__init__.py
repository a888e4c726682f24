"""What the model sees: pure functions from session entries to messages and requests.

No I/O and no UI or SDK imports (an import-linter contract checks it).
``context.project`` builds the projection of a branch, ``request`` turns it
into a provider request that is always valid, ``tokens`` estimates its size.
"""
