"""The patch of a work tree against a base commit, untracked files included, index left alone."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

JUNK = (":(exclude,glob)**/__pycache__/**", ":(exclude,glob)**/*.pyc", ":(exclude,glob)**/.pytest_cache/**")


class GitError(Exception):
    """A git command failed; the message is git's own last line."""


def git(cwd: Path, *args: str, env: dict[str, str] | None = None, input: str | None = None) -> str:
    """Run git in ``cwd``; stdout, or :class:`GitError` with git's message."""
    r = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env, input=input)
    if r.returncode != 0:
        msg = (r.stderr.strip() or r.stdout.strip() or f"git {args[0]} failed").splitlines()[-1]
        raise GitError(msg)
    return r.stdout


def diff_worktree(worktree: Path, base: str | None = None) -> str:
    """``git diff`` of everything in ``worktree`` (tracked, new and deleted files) against ``base``.

    A throw-away index is used, so the work tree's own index is never changed; ``.gitignore`` is
    respected and Python caches are left out.
    """
    base = base or "HEAD"
    with tempfile.TemporaryDirectory(prefix="codeagent-index-") as tmp:
        env = {**os.environ, "GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git(worktree, "read-tree", base, env=env)
        git(worktree, "add", "-A", "--", ".", *JUNK, env=env)
        return git(worktree, "diff", "--cached", "--binary", base, "--", ".", *JUNK, env=env)
