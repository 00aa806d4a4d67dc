"""The per-run copy the agent works on: a git worktree on its own branch, or a copy of a plain folder.

The user's working tree, index and uncommitted changes are never touched. A worktree starts from
HEAD, not from the dirty state, so ``dirty`` records whether the user had uncommitted changes.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from codeagent.errors import InputError
from codeagent.tools.gitdiff import GitError, diff_worktree, git

COPY_IGNORE = shutil.ignore_patterns(".codeagent-runs", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache",
                                     ".pytest_cache", ".ruff_cache", ".tox", "*.pyc", ".DS_Store")
IDENTITY = ("-c", "user.name=codeagent", "-c", "user.email=codeagent@localhost", "-c", "commit.gpgsign=false")


def _is_git_repo(path: Path) -> bool:
    r = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=path, capture_output=True, text=True)
    return r.returncode == 0 and Path(r.stdout.strip()).resolve() == path.resolve()


@dataclass
class Workspace:
    """Where a run edits: ``path`` (the work tree), its ``base`` commit and ``branch``."""

    repo: Path  # the user's folder
    path: Path  # the run's work tree
    base: str  # commit the run started from
    branch: str | None  # codeagent/<run_id> for a worktree; None for a copy
    is_worktree: bool
    dirty: bool  # the user's tree had uncommitted changes (not carried into the worktree)

    @classmethod
    def create(cls, repo: Path, runs_dir: Path, run_id: str) -> Workspace:
        """A worktree of ``repo`` (a git repository) or a copy of it (a plain folder) under ``runs_dir``."""
        repo = Path(repo).expanduser()
        if not repo.exists():
            raise InputError(f"repository path does not exist: {repo}")
        if not repo.is_dir():
            raise InputError(f"repository path is not a directory: {repo}")
        repo = repo.resolve()
        dest = Path(runs_dir).expanduser().resolve() / run_id / "work"
        if dest.exists():
            raise InputError(f"run folder already exists: {dest}")
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            if _is_git_repo(repo):
                return cls._worktree(repo, dest, run_id)
            return cls._copy(repo, dest)
        except GitError as e:
            raise InputError(f"cannot set up the run's workspace: {e}") from None

    @classmethod
    def _worktree(cls, repo: Path, dest: Path, run_id: str) -> Workspace:
        try:
            head = git(repo, "rev-parse", "--verify", "HEAD^{commit}").strip()
        except GitError:
            raise InputError(f"{repo} is a git repository with no commit yet; commit once first") from None
        dirty = bool(git(repo, "status", "--porcelain", "--untracked-files=normal").strip())
        branch = f"codeagent/{run_id}"
        git(repo, "worktree", "add", "--quiet", "-b", branch, str(dest), head)
        return cls(repo=repo, path=dest, base=head, branch=branch, is_worktree=True, dirty=dirty)

    @classmethod
    def _copy(cls, repo: Path, dest: Path) -> Workspace:
        shutil.copytree(repo, dest, symlinks=True, ignore=COPY_IGNORE)
        if (dest / ".git").exists():  # a nested repo's .git file/dir would point elsewhere
            shutil.rmtree(dest / ".git", ignore_errors=True) if (dest / ".git").is_dir() else (dest / ".git").unlink()
        git(dest, "init", "--quiet")
        git(dest, "add", "-A")
        git(dest, *IDENTITY, "commit", "--quiet", "--allow-empty", "--no-verify", "-m", "codeagent: initial copy")
        base = git(dest, "rev-parse", "HEAD").strip()
        return cls(repo=repo, path=dest, base=base, branch=None, is_worktree=False, dirty=False)

    def git_dirs(self) -> list[Path]:
        """Git directories outside ``path`` that git inside the work tree needs (for sandbox mounts)."""
        common = Path(git(self.path, "rev-parse", "--git-common-dir").strip())
        common = (self.path / common).resolve() if not common.is_absolute() else common
        return [] if self.path in common.parents else [common]

    def diff(self) -> str:
        """The patch of the work tree against ``base``, new and deleted files included."""
        return diff_worktree(self.path, self.base)

    def write_patch(self, path: Path) -> Path:
        """Write :meth:`diff` to ``path``; returns it."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.diff())
        return path

    def apply_to_user_tree(self) -> str:
        """``git apply`` the patch onto the user's folder; refuses (changing nothing) if it does not apply."""
        patch = self.diff()
        if not patch.strip():
            return "no changes to apply"
        if not _is_git_repo(self.repo):
            raise InputError(f"{self.repo} is not a git repository; write the patch with write_patch instead")
        try:
            git(self.repo, "apply", "--check", "--whitespace=nowarn", "-", input=patch)
            git(self.repo, "apply", "--whitespace=nowarn", "-", input=patch)
        except GitError as e:
            raise InputError(f"patch does not apply to {self.repo}: {e}") from None
        files = sum(1 for line in patch.splitlines() if line.startswith("diff --git "))
        return f"applied changes to {files} file(s) in {self.repo}"

    def commit(self, message: str) -> str:
        """Commit everything in the work tree on the run's branch; returns the commit sha."""
        import git as gitpython

        repo = gitpython.Repo(self.path)
        repo.git.add("-A", "--", ".", ":(exclude,glob)**/__pycache__/**", ":(exclude,glob)**/*.pyc")
        repo.git.execute(["git", *IDENTITY, "commit", "--quiet", "--allow-empty", "--no-verify", "-m", message])
        return repo.head.commit.hexsha

    def remove(self) -> None:
        """Delete the work tree (and prune it from the user's repository); the branch is kept."""
        if self.is_worktree:
            try:
                git(self.repo, "worktree", "remove", "--force", str(self.path))
            except GitError:
                shutil.rmtree(self.path, ignore_errors=True)
            subprocess.run(["git", "worktree", "prune"], cwd=self.repo, capture_output=True)
        else:
            shutil.rmtree(self.path, ignore_errors=True)
