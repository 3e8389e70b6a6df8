"""An answer typed before the permission question appears still answers it.

In a terminal chat, `input("> ")` reads through GNU readline, which gathers type-ahead
into its own buffer; the question must read through readline too (a read of the file
descriptor would find it empty, hang, and lose the typed answer).
"""

from __future__ import annotations

import os
import sys

import pytest

from tests.tools.test_interactive import AGENT, terminal

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(sys.platform == "win32", reason="a POSIX pty"),
]


def test_an_answer_typed_ahead_of_the_permission_question_answers_it() -> None:
    pytest.importorskip("readline")
    process, out, master = terminal("chat", "--", *AGENT)
    try:
        out.expect("> ")
        # The prompt and its answer in one go: the answer is typed before the
        # question is shown (a fast typist, or a paste).
        os.write(master, b"permission\r1\r")
        mark = out.expect("choose a number")
        mark = out.expect("Permission for Delete build/: Allow once", after=mark, timeout=10)
        out.expect("> ", after=mark)
    finally:
        process.kill()
        process.wait()
        out.thread.join(5)
        os.close(master)
