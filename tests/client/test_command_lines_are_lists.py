"""A command line is a list of arguments everywhere one is taken; a lone string (which a
type checker accepts as a `Sequence[str]`) is refused at once with a clear error."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from acp_sdk import AsyncClient, Client
from acp_sdk.remote import asgi_app

TAKERS: dict[str, Callable[[Any], object]] = {
    "Client.spawn": Client.spawn,
    "AsyncClient.spawn": AsyncClient.spawn,
    "asgi_app(command=)": lambda command: asgi_app(command=command),
}


@pytest.mark.parametrize("taker", sorted(TAKERS))
def test_a_string_is_not_a_command_line(taker: str) -> None:
    with pytest.raises(TypeError, match="list of arguments"):
        TAKERS[taker]("my-agent --acp")


@pytest.mark.parametrize("taker", sorted(TAKERS))
def test_an_empty_command_line_is_refused(taker: str) -> None:
    with pytest.raises(ValueError, match="empty"):
        TAKERS[taker]([])


@pytest.mark.parametrize("taker", sorted(TAKERS))
def test_a_list_of_arguments_is_taken(taker: str) -> None:
    assert TAKERS[taker](["my-agent", "--acp"]) is not None
