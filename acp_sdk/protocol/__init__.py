"""The sans-IO protocol core: models and codec (generated), the method table, framing,
JSON-RPC envelopes, the lifecycle table, capability gates and the `Connection`.

No threads, no asyncio, no I/O. Public names are re-exported by `acp_sdk`, `acp_sdk.schema`,
`acp_sdk.methods`, `acp_sdk.connection`, `acp_sdk.events`, `acp_sdk.errors` and `acp_sdk.codec`.
"""
