"""An extension method, and the custom capability that advertises it through `_meta`.

The agent advertises `{"_meta": {"acme.dev/echo": {"version": 1}}}` in its capabilities and
serves `_acme/echo`; the client checks the capability, then calls the method with typed
params and gets a typed result. Both sides share the extension row.

    python examples/extension_method.py
"""

from __future__ import annotations

import sys

import attrs

from acp_sdk import Agent, AgentContext, Client, Side, run_agent
from acp_sdk.agent import extension
from acp_sdk.methods import TABLE, Method
from acp_sdk.schema import AgentCapabilities


@attrs.frozen(kw_only=True, order=False)
class EchoParams:
    text: str


@attrs.frozen(kw_only=True, order=False)
class EchoResult:
    text: str
    length: int


ECHO = Method.extension(
    "_acme/echo", handled_by=Side.AGENT, params_type=EchoParams, result_type=EchoResult
)
EXTENDED = TABLE.extend([ECHO])
CAPABILITY = "acme.dev/echo"


class AcmeAgent(Agent):
    def capabilities(self) -> AgentCapabilities:
        return attrs.evolve(super().capabilities(), meta={CAPABILITY: {"version": 1}})


async def echo(params: EchoParams, ctx: AgentContext) -> EchoResult:
    return EchoResult(text=params.text.upper(), length=len(params.text))


def run_client_side() -> None:
    with Client.spawn([sys.executable, __file__, "agent"], table=EXTENDED) as client:
        meta = client.agent_capabilities.meta or {}
        if CAPABILITY not in meta:
            print("the agent does not offer acme.dev/echo")
            return
        result = client.request(ECHO, EchoParams(text="hello extensions"))
        print(f"{result.text} ({result.length} characters)")


if __name__ == "__main__":
    if sys.argv[1:] == ["agent"]:
        # The pairing is type-checked: `echo` must take EchoParams and return EchoResult.
        # Rows the agent's table lacks (here ECHO) are added to it.
        run_agent(AcmeAgent(), extensions=[extension(ECHO, echo)])
    else:
        run_client_side()
