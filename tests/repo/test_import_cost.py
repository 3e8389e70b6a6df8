"""What importing the client costs: which modules `from acp_sdk import Client` loads.

Building the ~140 model classes and the method table is most of the import's time, so
they load on first use (a client's construction, its first call, `decode`), not on
import. These tests pin that down by module, never by the clock (these machines are
noisy), and check that first use, in a process that imported nothing else, still works.
Each runs in a fresh interpreter: in this one, other tests have loaded everything.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

# Loaded on first use only: the models (stable and unstable), their codec, the method
# rows, the handlers and session state (which use the models), cattrs, and what only
# type checkers read.
DEFERRED = (
    "acp_sdk.protocol._generated.models",
    "acp_sdk.protocol._generated.unstable_models",
    "acp_sdk.protocol._generated.codec",
    "acp_sdk.protocol._generated.methods",
    "acp_sdk.methods",
    "acp_sdk.schema",
    "acp_sdk.handlers",
    "acp_sdk.protocol._session_state",
    "cattrs",
    "typing_extensions",
)


def _run(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def _loaded_after(statement: str) -> set[str]:
    out = _run(f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))")
    return set(json.loads(out.splitlines()[-1]))


@pytest.mark.parametrize(
    "statement",
    ["import acp_sdk", "from acp_sdk import Client", "from acp_sdk import AsyncClient"],
)
def test_importing_the_clients_builds_no_model(statement: str) -> None:
    loaded = _loaded_after(statement)
    assert sorted(loaded.intersection(DEFERRED)) == []


def test_the_blocking_client_imports_neither_asyncio_nor_subprocess() -> None:
    # subprocess loads when an agent is started (spawn), asyncio only for AsyncClient.
    # Measured against what our dependencies load themselves: on Python 3.10, attrs
    # imports `platform`, which imports subprocess; that is not ours to defer.
    baseline = _loaded_after("import attrs, cattrs, orjson")
    loaded = _loaded_after("from acp_sdk import Client")
    assert sorted(loaded.intersection({"asyncio", "subprocess"}) - baseline) == []


def test_first_use_of_the_blocking_client_in_a_fresh_process() -> None:
    out = _run(
        """
        import json, sys
        from acp_sdk import Client

        agent = [sys.executable, "-m", "acp_sdk", "agent"]
        with Client.spawn(agent, track_state=True) as client:
            assert client.agent_info is not None
            session = client.new_session(cwd="/")
            turn = session.prompt("echo lazy hello")
            updates = list(turn)
            print(json.dumps([turn.stop_reason, turn.text, len(updates), session.state.text]))
        """
    )
    stop, text, count, state_text = json.loads(out.splitlines()[-1])
    assert stop == "end_turn"
    assert "lazy hello" in text
    assert count > 0
    assert state_text == text


def test_first_use_of_the_async_client_in_a_fresh_process() -> None:
    out = _run(
        """
        import asyncio, sys
        from acp_sdk import AsyncClient

        async def main():
            agent = [sys.executable, "-m", "acp_sdk", "agent"]
            async with AsyncClient.spawn(agent, track_state=True) as client:
                session = await client.new_session(cwd="/")
                turn = session.prompt("echo lazy hello")
                response = await turn
                print(response.stop_reason, repr(turn.text))

        asyncio.run(main())
        """
    )
    assert out.startswith("end_turn ")
    assert "lazy hello" in out


def test_first_decode_in_a_fresh_process() -> None:
    out = _run(
        """
        from acp_sdk import decode, encode
        from acp_sdk.schema import SessionNotification

        raw = (
            b'{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk",'
            b'"content":{"type":"text","text":"hi"}}}'
        )
        note = decode(raw, SessionNotification)
        print(type(note.update).__name__, note.update.content.text, encode(note) == raw)
        """
    )
    assert out.split() == ["AgentMessageChunk", "hi", "True"]
