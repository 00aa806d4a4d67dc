"""The patch of a work tree against a base commit, untracked files included, index left alone."""

from __future__ import annotations

import tempfile
from pathlib import Path

from codeagent.hostgit import GitError, git

__all__ = ["GitError", "diff_worktree", "git"]

JUNK = (":(exclude,glob)**/__pycache__/**", ":(exclude,glob)**/*.pyc", ":(exclude,glob)**/.pytest_cache/**")


def diff_worktree(worktree: Path, base: str | None = None) -> str:
    """``git diff`` of everything in ``worktree`` (tracked, new and deleted files) against ``base``.

    A throw-away index is used, so the work tree's own index is never changed; ``.gitignore`` is
    respected and Python caches are left out. Git runs through :mod:`codeagent.hostgit`: the
    recorded git directory, no repository-controlled programs, no external diff or textconv.
    """
    base = base or "HEAD"
    with tempfile.TemporaryDirectory(prefix="codeagent-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git(worktree, "read-tree", base, env=env)
        git(worktree, "add", "-A", "--", ".", *JUNK, env=env)
        return git(worktree, "diff", "--cached", "--binary", "--no-ext-diff", "--no-textconv", base, "--", ".",
                   *JUNK, env=env)
