"""Which programming language a path or a Markdown fence names."""

from __future__ import annotations

from pathlib import PurePath

EXTENSIONS: dict[str, str] = {
    ".py": "python", ".pyi": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".java": "java",
    ".go": "go",
    ".rs": "rust",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp",
    ".rb": "ruby", ".sh": "bash", ".bash": "bash", ".ps1": "powershell",
    ".toml": "toml", ".yaml": "yaml", ".yml": "yaml", ".json": "json",
    ".md": "markdown", ".txt": "text", ".cfg": "ini", ".ini": "ini",
}

FENCES: dict[str, str] = {
    "py": "python", "python": "python", "python3": "python",
    "js": "javascript", "javascript": "javascript", "jsx": "javascript", "node": "javascript",
    "ts": "typescript", "typescript": "typescript", "tsx": "tsx",
    "java": "java", "go": "go", "golang": "go", "rs": "rust", "rust": "rust",
    "c": "c", "cpp": "cpp", "c++": "cpp", "rb": "ruby", "ruby": "ruby",
    "sh": "bash", "bash": "bash", "shell": "bash", "console": "bash", "zsh": "bash", "shellsession": "bash",
    "powershell": "powershell", "ps1": "powershell", "pwsh": "powershell", "ps": "powershell",
    "bat": "batch", "batch": "batch", "cmd": "batch",
    "toml": "toml", "yaml": "yaml", "yml": "yaml", "json": "json", "diff": "diff", "text": "text",
}

SHELLS = frozenset({"bash", "powershell", "batch"})
"""Languages of command lines: a fence in one of them inside a call holds the call's commands, not code."""


def language_for_path(path: str | PurePath) -> str | None:
    """Language of a file by its extension, or None when unknown."""
    return EXTENSIONS.get(PurePath(str(path)).suffix.lower())


def language_for_fence(tag: str) -> str | None:
    """Language named by a Markdown fence info string (``python``, ``ts``...), else by a path in it (Cursor's
    ``12:40:pkg/mod.py``, ``python:pkg/mod.py``, ``title=mod.py``), or None."""
    word = tag.strip().split()[0].lower() if tag.strip() else ""
    if word in FENCES:
        return FENCES[word]
    for part in reversed(word.replace("=", ":").split(":")):
        lang = FENCES.get(part) or (language_for_path(part) if "." in part else None)
        if lang:
            return lang
    return None
