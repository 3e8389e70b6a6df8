"""Once our output is closed (a write failed: the peer closed its input), a notification
raises `ConnectionClosed` instead of being dropped in silence: an agent streaming
updates that never waits (each `send_update` returning at once) would otherwise spin
on the event loop, and never see the end of input that would stop it (found with the
pipe feed, which made the writer see the failure first)."""

from __future__ import annotations

import threading

import pytest

from acp_sdk._driver.engine import Engine
from acp_sdk._driver.vocabulary import Limits
from acp_sdk.methods import SESSION_CANCEL
from acp_sdk.protocol._errors import ConnectionClosed
from acp_sdk.schema import CancelNotification
from acp_sdk.testing import ConnectionPair


class _Signal:
    def notify(self) -> None:
        return None


def _engine() -> Engine[_Signal]:
    pair = ConnectionPair()
    pair.initialize()

    def no_handlers(request_id: object, row: object, params: object) -> object:
        raise AssertionError("no request expected")

    return Engine(
        pair.client,
        limits=Limits(),
        new_signal=_Signal,
        new_waiter=threading.Event,  # type: ignore[arg-type] # never used here
        start_handler=no_handlers,  # type: ignore[arg-type] # never called
        notification_callbacks=lambda row, params: (),
    )


def test_a_notification_is_queued_while_the_output_is_open() -> None:
    engine = _engine()
    engine.send_notification(SESSION_CANCEL, CancelNotification(session_id="s"))
    assert engine.queued_bytes > 0


@pytest.mark.parametrize("flush", [False, True])
def test_a_notification_after_the_output_closed_raises_connection_closed(flush: bool) -> None:
    engine = _engine()
    engine.close_output(flush=flush)
    with pytest.raises(ConnectionClosed):
        engine.send_notification(SESSION_CANCEL, CancelNotification(session_id="s"))
