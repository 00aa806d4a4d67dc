"""The per-run copy the agent works on: a git worktree on its own branch, or a copy of a plain folder.

The user's working tree, index and uncommitted changes are never touched. A worktree starts from
HEAD, not from the dirty state, so ``dirty`` records whether the user had uncommitted changes.

The run's git directory lives outside the work tree (the user's ``.git/worktrees/<name>``, or
``<run>/git`` beside ``<run>/work`` for a copy), where the sandbox cannot write; host-side git is
told to use it (:func:`codeagent.hostgit.trust`) and never reads the work tree's own ``.git``.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from codeagent import hostgit
from codeagent.errors import InputError
from codeagent.hostgit import GitError, git
from codeagent.tools.gitdiff import diff_worktree

COPY_IGNORE = shutil.ignore_patterns(".codeagent-runs", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache",
                                     ".pytest_cache", ".ruff_cache", ".tox", "*.pyc", ".DS_Store")
IDENTITY = ("-c", "user.name=codeagent", "-c", "user.email=codeagent@localhost", "-c", "commit.gpgsign=false")
EXCLUDE_JUNK = (":(exclude,glob)**/__pycache__/**", ":(exclude,glob)**/*.pyc")


def _is_git_repo(path: Path) -> bool:
    r = hostgit.run_git(path, "rev-parse", "--show-toplevel", check=False)
    return r.returncode == 0 and Path(r.stdout.strip()).resolve() == path.resolve()


def _common_dir(repo: Path) -> Path:
    """The user's repository's git directory (``--git-common-dir``), absolute."""
    return Path(git(repo, "rev-parse", "--path-format=absolute", "--git-common-dir").strip()).resolve()


def _worktree_git_dir(repo: Path, tree: Path) -> Path | None:
    """The admin folder ``<common>/worktrees/<name>`` whose ``gitdir`` file points at ``tree/.git``."""
    try:
        admin = _common_dir(repo) / "worktrees"
    except GitError:
        return None
    want = (tree / ".git").resolve()
    for d in sorted(admin.glob("*")) if admin.is_dir() else []:
        try:
            if Path((d / "gitdir").read_text().strip()).resolve() == want:
                return d.resolve()
        except OSError:
            continue
    return None


@dataclass
class Workspace:
    """Where a run edits: ``path`` (the work tree), its ``base`` commit and ``branch``."""

    repo: Path  # the user's folder
    path: Path  # the run's work tree
    base: str  # commit the run started from
    branch: str | None  # codeagent/<run_id> for a worktree; None for a copy
    is_worktree: bool
    dirty: bool  # the user's tree had uncommitted changes (not carried into the worktree)
    git_dir: Path | None = None  # the run's git directory, outside ``path``; found when not given

    def __post_init__(self) -> None:
        self.repo, self.path = Path(self.repo), Path(self.path)
        if self.git_dir is None:
            if self.is_worktree:
                self.git_dir = _worktree_git_dir(self.repo, self.path)
            elif (self.path.parent / "git").is_dir():
                self.git_dir = (self.path.parent / "git").resolve()
        if self.git_dir is not None:
            hostgit.trust(self.path, self.git_dir)

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
        gdir = _worktree_git_dir(repo, dest)
        if gdir is None:
            raise GitError(f"git worktree add left no admin folder for {dest}")
        return cls(repo=repo, path=dest, base=head, branch=branch, is_worktree=True, dirty=dirty, git_dir=gdir)

    @classmethod
    def _copy(cls, repo: Path, dest: Path) -> Workspace:
        shutil.copytree(repo, dest, symlinks=True, ignore=COPY_IGNORE)
        nested = dest / ".git"  # a nested repo's .git file/dir would point elsewhere
        if nested.is_dir() and not nested.is_symlink():
            shutil.rmtree(nested, ignore_errors=True)
        elif nested.exists() or nested.is_symlink():
            nested.unlink()
        gdir = dest.parent / "git"
        git(dest.parent, "init", "--quiet", f"--separate-git-dir={gdir}", str(dest))
        hostgit.trust(dest, gdir)
        git(dest, "add", "-A")
        git(dest, *IDENTITY, "commit", "--quiet", "--allow-empty", "--no-verify", "-m", "codeagent: initial copy")
        base = git(dest, "rev-parse", "HEAD").strip()
        return cls(repo=repo, path=dest, base=base, branch=None, is_worktree=False, dirty=False, git_dir=gdir)

    def git_dirs(self) -> list[Path]:
        """Git directories outside ``path`` that git inside the work tree needs (mounted read-only for docker)."""
        if self.git_dir is None:
            return []
        gdir = Path(self.git_dir)
        common = (gdir / "commondir")
        if common.is_file():
            raw = Path(common.read_text().strip())
            gdir = (raw if raw.is_absolute() else gdir / raw).resolve()
        return [] if self.path.resolve() in gdir.parents else [gdir]

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
        """Commit everything in the work tree on the run's branch (no hooks run); returns the commit sha."""
        try:
            git(self.path, "add", "-A", "--", ".", *EXCLUDE_JUNK)
            git(self.path, *IDENTITY, "commit", "--quiet", "--allow-empty", "--no-verify", "-m", message)
            return git(self.path, "rev-parse", "HEAD").strip()
        except GitError as e:
            raise InputError(f"cannot commit the run's changes: {e}") from None

    def remove(self) -> None:
        """Delete the work tree (and prune it from the user's repository); the branch is kept."""
        if self.is_worktree:
            try:
                git(self.repo, "worktree", "remove", "--force", str(self.path))
            except GitError:
                shutil.rmtree(self.path, ignore_errors=True)
            hostgit.run_git(self.repo, "worktree", "prune", check=False)
        else:
            shutil.rmtree(self.path, ignore_errors=True)
            if self.git_dir is not None and Path(self.git_dir) == self.path.parent / "git":
                shutil.rmtree(self.git_dir, ignore_errors=True)
        hostgit.forget(self.path)

    def drop(self) -> None:
        """Delete the work tree and the run's branch; the run folder (trajectory, patch) stays."""
        self.remove()
        if self.branch:
            hostgit.run_git(self.repo, "branch", "-D", "--quiet", self.branch, check=False)

    def discard(self) -> None:
        """Undo :meth:`create` for a run that never started: work tree, branch and run folder all go."""
        self.drop()
        run_dir = self.path.parent
        shutil.rmtree(run_dir, ignore_errors=True)
