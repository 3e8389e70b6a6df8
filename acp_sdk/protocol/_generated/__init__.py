"""Code generated from the pinned ACP schema. See `acp_sdk._codegen`."""
