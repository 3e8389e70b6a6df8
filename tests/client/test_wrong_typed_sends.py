"""A wrong-typed send from either client raises `EncodeError` and the connection goes on
(issue 28): a request's params reach the caller as the error, with the field's path,
before anything is written; a handler's wrong-typed answer goes to the agent as an
internal error (-32603), never as schema-invalid JSON."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from acp_sdk import EncodeError
from acp_sdk.handlers import LocalFileSystem
from acp_sdk.schema import (
    AgentMessageChunk,
    ReadTextFileRequest,
    ReadTextFileResponse,
    TextContent,
)
from tests.client.facades import FACADES, Facade

pytestmark = pytest.mark.timeout(60)
MakeDriver = Callable[..., Facade]


@pytest.fixture(params=sorted(FACADES))
def make(request: pytest.FixtureRequest) -> Iterator[MakeDriver]:
    opened: list[Facade] = []
    cls = FACADES[request.param]

    def factory(*args: Any, **kwargs: Any) -> Facade:
        driver = cls(*args, **kwargs)
        driver.__enter__()
        opened.append(driver)
        return driver

    yield factory
    for driver in opened:
        driver.__exit__(None, None, None)


def texts(updates: list[Any]) -> str:
    return "".join(
        u.content.text
        for u in updates
        if isinstance(u, AgentMessageChunk) and isinstance(u.content, TextContent)
    )


def test_a_wrong_typed_prompt_raises_and_the_session_goes_on(make: MakeDriver) -> None:
    driver = make()
    session = driver.new_session()
    with pytest.raises(EncodeError) as caught:
        driver.prompt(session, [TextContent(text="ok"), TextContent(text=7)])  # type: ignore[arg-type]
    assert str(caught.value) == "prompt[1].text: expected a string, got an integer"
    updates, response = driver.prompt(session, "echo still here")
    assert texts(updates) == "still here"
    assert response.stop_reason == "end_turn"


def test_a_wrong_typed_request_raises_and_the_client_goes_on(make: MakeDriver) -> None:
    driver = make()
    with pytest.raises(EncodeError) as caught:
        driver.call("new_session", cwd=5)
    assert caught.value.path == ("cwd",)
    updates, _ = driver.prompt(driver.new_session(), "echo fine")
    assert texts(updates) == "fine"


class WrongReader(LocalFileSystem):
    """Answers `fs/read_text_file` with a number for the file's content."""

    def read_text_file(self, params: ReadTextFileRequest) -> ReadTextFileResponse:
        return ReadTextFileResponse(content=5)  # type: ignore[arg-type]


def test_a_handlers_wrong_typed_answer_is_an_internal_error(
    make: MakeDriver, tmp_path: Path
) -> None:
    target = tmp_path / "note.txt"
    target.write_text("hello")
    driver = make(handlers=[WrongReader(tmp_path)])
    session = driver.new_session(str(tmp_path))
    updates, _ = driver.prompt(session, f"read {target}")
    assert texts(updates) == "The client refused: Internal error (-32603)."
    updates, _ = driver.prompt(session, "echo after")
    assert texts(updates) == "after"
