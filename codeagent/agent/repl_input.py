"""Reading the repl's input: prompt_toolkit in a terminal (line editing, history under ``$CODEAGENT_HOME``,
multi-line input, completion of slash commands and paths), plain lines from a pipe.

A line ending in ``\\`` continues on the next one (in both modes); in a terminal, Esc then Enter
(or Alt+Enter) also inserts a new line.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterable, TextIO

from prompt_toolkit.completion import CompleteEvent, Completer, Completion, PathCompleter
from prompt_toolkit.document import Document

PROMPT = "› "


def history_path() -> Path:
    """Where the repl's input history is kept: ``$CODEAGENT_HOME/repl_history``."""
    from codeagent.kvcache.models import home

    return home() / "repl_history"


class ReplCompleter(Completer):
    """Slash commands at the start of the input; paths under ``root`` for the word being typed elsewhere."""

    def __init__(self, commands: Iterable[str], root: Path) -> None:
        self.commands = sorted(commands)
        self.paths = PathCompleter(get_paths=lambda: [str(root)], expanduser=True)

    def get_completions(self, document: Document, complete_event: CompleteEvent):
        text = document.text_before_cursor
        if text.startswith("/") and " " not in text:
            for name in self.commands:
                if name.startswith(text):
                    yield Completion(name, start_position=-len(text))
            return
        word = document.get_word_before_cursor(WORD=True)
        yield from self.paths.get_completions(Document(word, len(word)), complete_event)


def _bindings():
    from prompt_toolkit.key_binding import KeyBindings

    kb = KeyBindings()

    @kb.add("enter")
    def _enter(event) -> None:
        buf = event.current_buffer
        if buf.document.text_before_cursor.endswith("\\"):
            buf.delete_before_cursor(1)
            buf.insert_text("\n")
        else:
            buf.validate_and_handle()

    @kb.add("escape", "enter")
    def _newline(event) -> None:
        event.current_buffer.insert_text("\n")

    return kb


class LineReader:
    """One request at a time; None at the end of input. Ctrl-C while typing raises KeyboardInterrupt."""

    def __init__(self, completer: Completer | None = None, history: Path | None = None, stdin: TextIO | None = None,
                 pt_input=None, pt_output=None) -> None:
        self.stdin = stdin or sys.stdin
        self.session = None
        if pt_input is not None or (self.stdin.isatty() and sys.stdout.isatty()):
            from prompt_toolkit import PromptSession
            from prompt_toolkit.history import FileHistory, InMemoryHistory

            if history is not None:
                history.parent.mkdir(parents=True, exist_ok=True)
            self.session = PromptSession(
                history=FileHistory(str(history)) if history is not None else InMemoryHistory(),
                completer=completer, complete_while_typing=False, key_bindings=_bindings(), multiline=False,
                prompt_continuation=lambda width, line, wrap: "… ".rjust(width), input=pt_input, output=pt_output)

    @property
    def interactive(self) -> bool:
        """Whether input comes through prompt_toolkit (a terminal)."""
        return self.session is not None

    def read(self) -> str | None:
        """The next request (continuation lines joined), or None at the end of input."""
        if self.session is not None:
            try:
                return self.session.prompt(PROMPT)
            except EOFError:
                return None
        lines: list[str] = []
        while True:
            line = self.stdin.readline()
            if not line:
                return "\n".join(lines) if lines else None
            line = line.rstrip("\n")
            if line.endswith("\\"):
                lines.append(line[:-1])
                continue
            lines.append(line)
            return "\n".join(lines)
