"""The patch of a work tree against a base commit, untracked files included, index left alone."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from codeagent.hostgit import GitError, git

__all__ = ["GitError", "diff_worktree", "git"]

LARGE_FILE_BYTES = 8 * 1024 * 1024
"""New files bigger than this stay out of the patch (a planted 500 MB blob must not become a 650 MB diff)."""

JUNK = (":(exclude,glob)**/__pycache__/**", ":(exclude,glob)**/*.pyc", ":(exclude,glob)**/.pytest_cache/**")


def diff_worktree(worktree: Path, base: str | None = None) -> str:
    """``git diff`` of everything in ``worktree`` (tracked, new and deleted files) against ``base``.

    A throw-away index is used, so the work tree's own index is never changed; ``.gitignore`` is
    respected, Python caches and new files over :data:`LARGE_FILE_BYTES` are left out. Git runs through :mod:`codeagent.hostgit`: the
    recorded git directory, no repository-controlled programs, no external diff or textconv.
    """
    base = base or "HEAD"
    with tempfile.TemporaryDirectory(prefix="codeagent-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git(worktree, "read-tree", base, env=env)
        skip = [f":(exclude,literal){p}" for p in _large_new_files(worktree, env)]
        git(worktree, "add", "-A", "--", ".", *JUNK, *skip, env=env)
        return git(worktree, "diff", "--cached", "--binary", "--no-ext-diff", "--no-textconv", base, "--", ".",
                   *JUNK, env=env)


def _large_new_files(worktree: Path, env: dict[str, str]) -> list[str]:
    """Untracked, not ignored files over :data:`LARGE_FILE_BYTES` (paths relative to the work tree root)."""
    root = Path(git(worktree, "rev-parse", "--show-toplevel").strip())
    out = git(worktree, "ls-files", "-z", "--others", "--exclude-standard", "--", ".", env=env)
    large = []
    for rel in filter(None, out.split("\0")):
        try:
            if os.lstat(root / rel).st_size > LARGE_FILE_BYTES:
                large.append(rel)
        except OSError:
            continue
    return large
