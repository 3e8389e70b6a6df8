"""An agent on acp_sdk's runtime and the unstable table that advertises
`sessionCapabilities.fork`: `session/new` makes `s1`, `s2`, ...; `session/fork` answers
`<id>-fork`; a prompt answers `end_turn` with its usage (an unstable field)."""

from __future__ import annotations

import itertools

from acp_sdk import Agent, AgentContext, run_agent, unstable


class ForkAgent(Agent):
    """The runtime on `unstable.TABLE` hands its methods the unstable classes, hence the
    overrides typed with them."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)

    async def initialize(  # type: ignore[override] # the unstable classes (see above)
        self, params: unstable.InitializeRequest, ctx: AgentContext
    ) -> unstable.InitializeResponse:
        forks = unstable.SessionCapabilities(fork=unstable.SessionForkCapabilities())
        return unstable.InitializeResponse(
            protocol_version=ctx.negotiate_version(params.protocol_version),
            agent_capabilities=unstable.AgentCapabilities(session_capabilities=forks),
            agent_info=unstable.Implementation(name="fork-agent", version="1.0"),
        )

    async def new_session(  # type: ignore[override]
        self, params: unstable.NewSessionRequest, ctx: AgentContext
    ) -> unstable.NewSessionResponse:
        assert params.mcp_servers == []
        return unstable.NewSessionResponse(session_id=f"s{next(self._ids)}")

    async def fork_session(
        self, params: unstable.ForkSessionRequest, ctx: AgentContext
    ) -> unstable.ForkSessionResponse:
        return unstable.ForkSessionResponse(session_id=f"{params.session_id}-fork")

    async def prompt(  # type: ignore[override]
        self, params: unstable.PromptRequest, ctx: AgentContext
    ) -> unstable.PromptResponse:
        usage = unstable.Usage(input_tokens=3, output_tokens=5, total_tokens=8)
        return unstable.PromptResponse(stop_reason="end_turn", usage=usage)


if __name__ == "__main__":
    run_agent(ForkAgent(), table=unstable.TABLE)
