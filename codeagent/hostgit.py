"""Git run on the host over a tree the model writes: no repository-controlled program ever runs.

The model's commands can rewrite anything in the workspace, including a ``.git`` file or folder
there, so host-side git never trusts it:

- a work tree registered with :func:`trust` is always run as ``--git-dir=<recorded> --work-tree=<tree>``,
  the git directory chosen when the workspace was made (kept outside the workspace, where the
  sandbox cannot write); the workspace's own ``.git`` is ignored;
- every call passes ``-c`` overrides that switch off the settings that start programs (fsmonitor,
  hooks, pager, credential and ssh helpers, signing), and diff-showing commands get
  ``--no-ext-diff --no-textconv``, so even an unregistered or planted repository gets no say;
- the environment is rebuilt from scratch: no system or global config, no inherited ``GIT_*``,
  no secrets, no terminal prompts; and every call has a timeout that kills git's process group.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from pathlib import Path

from codeagent.errors import CodeagentError
from codeagent.sandbox.env import absolute_path, host_program

TIMEOUT_S = 120.0
MAX_OUTPUT_BYTES = 64 * 1024 * 1024

SAFE_CONFIG: tuple[str, ...] = (
    "core.fsmonitor=",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.editor=true",
    "core.askPass=",
    "core.sshCommand=",
    "core.gitProxy=",
    "core.attributesFile=/dev/null",
    "core.untrackedCache=false",
    "credential.helper=",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "protocol.allow=never",
    "safe.directory=*",
)
"""``-c`` overrides on every host git call: command-line config outranks the repository's."""

DIFF_COMMANDS = frozenset({"diff", "log", "show", "whatchanged", "format-patch"})
NO_PROGRAMS = ("--no-ext-diff", "--no-textconv")
"""Added to commands that can show diffs: ``diff.external`` and textconv drivers run programs
(an empty ``diff.external`` cannot switch it off: git then tries to run "")."""

_TRUSTED: dict[Path, Path] = {}


class GitError(CodeagentError):
    """A git command failed or timed out; the message is git's own last line."""


def trust(work_tree: Path, git_dir: Path) -> None:
    """Record that git calls in ``work_tree`` use ``git_dir``, whatever ``work_tree/.git`` says later."""
    _TRUSTED[Path(work_tree).resolve()] = Path(git_dir).resolve()


def forget(work_tree: Path) -> None:
    """Drop the record made by :func:`trust`."""
    _TRUSTED.pop(Path(work_tree).resolve(), None)


def trusted_git_dir(path: Path) -> tuple[Path, Path] | None:
    """``(work_tree, git_dir)`` when ``path`` lies in a registered work tree, else None."""
    path = Path(path).resolve()
    for tree, gdir in _TRUSTED.items():
        if path == tree or tree in path.parents:
            return tree, gdir
    return None


def git_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """A clean environment for git: PATH and locale only, no system/global config, no prompts, no locks."""
    env = {
        "PATH": absolute_path(os.environ.get("PATH")),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": "/nonexistent",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_PAGER": "cat",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_NO_REPLACE_OBJECTS": "1",
    }
    env.update(extra or {})
    return env


def git_argv(cwd: Path, args: tuple[str, ...] | list[str]) -> list[str]:
    """The full command line for ``git args`` run in ``cwd`` (with the recorded git dir when registered)."""
    argv = [host_program("git")]  # absolute: git runs with the workspace as its working folder
    for item in SAFE_CONFIG:
        argv += ["-c", item]
    found = trusted_git_dir(cwd)
    if found is not None:
        tree, gdir = found
        argv += [f"--git-dir={gdir}", f"--work-tree={tree}"]
    args = list(args)
    if args and args[0] in DIFF_COMMANDS:
        args[1:1] = [flag for flag in NO_PROGRAMS if flag not in args]
    return [*argv, *args]


def run_git(cwd: Path, *args: str, env: dict[str, str] | None = None, input: str | None = None,
            timeout: float = TIMEOUT_S, check: bool = True, max_output: int = MAX_OUTPUT_BYTES,
            ) -> subprocess.CompletedProcess[str]:
    """Run git safely in ``cwd``; ``env`` adds variables (e.g. ``GIT_INDEX_FILE``) to the clean environment.

    Output goes to temporary files, so a huge diff costs disk, not memory; more than
    ``max_output`` bytes of stdout is an error. Raises :class:`GitError` on a timeout, on too much
    output, or when ``check`` and git exits non-zero.
    """
    extra = {k: v for k, v in (env or {}).items() if k in ("GIT_INDEX_FILE",)}
    name = args[0] if args else ""
    with tempfile.TemporaryFile() as out_f, tempfile.TemporaryFile() as err_f:
        try:
            proc = subprocess.Popen(
                git_argv(cwd, args), cwd=cwd, env=git_env(extra), start_new_session=True,
                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL, stdout=out_f, stderr=err_f,
            )
        except OSError as e:
            raise GitError(f"cannot run git: {e}") from None
        try:
            proc.communicate(input=input.encode() if input is not None else None, timeout=timeout)
        except BaseException as e:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
            if isinstance(e, subprocess.TimeoutExpired):
                raise GitError(f"git {name} timed out after {timeout:g} s") from None
            raise
        size = out_f.seek(0, os.SEEK_END)
        if size > max_output:
            raise GitError(f"git {name} wrote {size} bytes, over the {max_output}-byte limit")
        out_f.seek(0)
        err_f.seek(0)
        out = out_f.read().decode("utf-8", errors="replace")
        err = err_f.read(1 << 16).decode("utf-8", errors="replace")
    r = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    if check and r.returncode != 0:
        msg = (err.strip() or out.strip() or f"git {name} failed").splitlines()[-1]
        raise GitError(msg)
    return r


def git(cwd: Path, *args: str, env: dict[str, str] | None = None, input: str | None = None,
        timeout: float = TIMEOUT_S) -> str:
    """Run git safely in ``cwd``; its stdout, or :class:`GitError` with git's message."""
    return run_git(cwd, *args, env=env, input=input, timeout=timeout).stdout
