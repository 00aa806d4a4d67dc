"""The repl's terminal input on prompt_toolkit, driven by key presses through a pipe: line editing,
history kept in a file across sessions, multi-line input, completion of slash commands and paths."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from codeagent.agent.repl import COMMANDS
from codeagent.agent.repl_input import LineReader, ReplCompleter

LEFT, UP, TAB, ESC_ENTER = "\x1b[D", "\x1b[A", "\t", "\x1b\r"


def read_keys(keys: str | list[str], history: Path, root: Path | None = None) -> list[str | None]:
    """Every request a terminal session reads from ``keys`` (None at Ctrl-D); a list of chunks is typed
    with pauses between them (completion runs as a task that the next keys must wait for)."""
    out: list[str | None] = []
    chunks = [keys] if isinstance(keys, str) else keys
    with create_pipe_input() as inp, create_app_session(input=inp, output=DummyOutput()):
        def typist() -> None:
            for chunk in chunks:
                inp.send_text(chunk)
                time.sleep(0.5)

        threading.Thread(target=typist, daemon=True).start()
        reader = LineReader(ReplCompleter(COMMANDS, root or history.parent), history, pt_input=inp,
                            pt_output=DummyOutput())
        assert reader.interactive
        while True:
            line = reader.read()
            out.append(line)
            if line is None:
                return out


def test_line_editing_history_and_multiline(tmp_path: Path) -> None:
    hist = tmp_path / "home" / "repl_history"
    assert read_keys(f"fix te{LEFT}h\rfirst\\\rsecond\rone{ESC_ENTER}two\r\x04", hist) == [
        "fix the", "first\nsecond", "one\ntwo", None]
    assert "fix the" in hist.read_text()
    assert read_keys(f"{UP}\r\x04", hist) == ["one\ntwo", None]  # a new session recalls the last one's lines


def test_tab_completes_slash_commands_and_paths(tmp_path: Path) -> None:
    (tmp_path / "calc").mkdir()
    (tmp_path / "calc" / "operations.py").write_text("")
    assert read_keys(["/comm", TAB, " msg\rview calc/oper", TAB, "\r\x04"], tmp_path / "h", tmp_path) == [
        "/commit msg", "view calc/operations.py", None]


@pytest.mark.parametrize("text,want", [("/u", ["/undo"]), ("/", sorted(COMMANDS)), ("/zz", [])])
def test_completer_offers_commands_only_at_the_start(tmp_path: Path, text: str, want: list[str]) -> None:
    got = [c.text for c in ReplCompleter(COMMANDS, tmp_path).get_completions(Document(text), CompleteEvent())]
    assert got == want
