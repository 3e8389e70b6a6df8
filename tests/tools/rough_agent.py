"""A raw JSON-RPC agent for the rough-edge tests: `python rough_agent.py MODE`.

explained-error  the prompt writes why to its stderr, then answers with an error
stray-stdout     writes a usage line (not JSON-RPC) to stdout and exits 0, as the
                 published entry point of one real agent does
env-auth         advertises codex-acp's auth methods (an `env_var` one carrying the
                 variable to set); session/new answers -32000
"""

from __future__ import annotations

import json
import sys
from typing import Any

MODE = sys.argv[1] if len(sys.argv) > 1 else "explained-error"

ENV_AUTH = [
    {"id": "chatgpt", "name": "Login with ChatGPT", "description": "Use your ChatGPT login"},
    {
        "id": "codex-api-key",
        "name": "Use CODEX_API_KEY",
        "description": "Requires setting the `CODEX_API_KEY` environment variable.",
        "type": "env_var",
        "vars": [{"name": "CODEX_API_KEY"}],
    },
    {
        "id": "openai-api-key",
        "name": "Use OPENAI_API_KEY",
        "type": "env_var",
        "varName": "OPENAI_API_KEY",
    },
]


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def main() -> None:
    if MODE == "stray-stdout":
        print("Usage: some-agent [--acp]  (run with --acp to speak ACP)", flush=True)
        print("see https://example.invalid/docs", flush=True)
        return
    for line in sys.stdin:
        message = json.loads(line)
        method, rid = message.get("method"), message.get("id")
        if method == "initialize":
            methods = ENV_AUTH if MODE == "env-auth" else []
            result = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": methods}
            send({"id": rid, "result": result})
        elif method == "authenticate":  # as codex-acp: the variable is not set
            error = {"code": -32000, "message": "Authentication required"}
            send({"id": rid, "error": error})
        elif method == "session/new":
            if MODE == "env-auth":
                send({"id": rid, "error": {"code": -32000, "message": "Authentication required"}})
            else:
                send({"id": rid, "result": {"sessionId": "s1"}})
        elif method == "session/prompt":
            print("rough: OPENAI_API_KEY is not set", file=sys.stderr, flush=True)
            send({"id": rid, "error": {"code": -32603, "message": "Internal error"}})


if __name__ == "__main__":
    main()
