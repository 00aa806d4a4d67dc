"""The environment commands see: a short allow-list, never anything that looks like a secret."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping

KEEP = ("PATH", "LANG", "LANGUAGE", "TERM", "TZ")
SECRET = re.compile(
    r"TOKEN|KEY|SECRET|PASSW|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|CERT"
    r"|^AWS_|^AZURE_|^GCP_|^GOOGLE_|^GH_|^GITHUB_|^HF_|^OPENAI|^ANTHROPIC|^DOCKER_|^SSH_|^NPM_|^PYPI",
    re.I,
)
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def absolute_path(value: str | None) -> str:
    """``value`` (a PATH) with only its absolute entries: an empty, ``.`` or relative entry would make a
    program started with the workspace as its working folder run a file the model planted there."""
    keep = [d for d in (value or "").split(os.pathsep) if d.startswith("/")]
    return os.pathsep.join(dict.fromkeys(keep)) or DEFAULT_PATH


def host_program(name: str) -> str:
    """The absolute path of host program ``name`` on the absolute part of PATH (``name`` when not found)."""
    return shutil.which(name, path=absolute_path(os.environ.get("PATH"))) or name


def is_secret(name: str) -> bool:
    """Whether a variable name looks like it holds a credential."""
    return bool(SECRET.search(name))


def sandbox_env(home: str, extra: Mapping[str, str] | None = None, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """PATH, locale and terminal from ``base`` (default ``os.environ``), HOME=``home``, plus ``extra``."""
    base = os.environ if base is None else base
    env = {k: v for k, v in base.items() if (k in KEEP or k.startswith("LC_")) and not is_secret(k)}
    env["PATH"] = absolute_path(env.get("PATH"))
    env.setdefault("LANG", "C.UTF-8")
    env.update(
        HOME=home,
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONUNBUFFERED="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_CONFIG_COUNT="1",
        GIT_CONFIG_KEY_0="safe.directory",
        GIT_CONFIG_VALUE_0="*",
    )
    env.update({k: v for k, v in (extra or {}).items() if not is_secret(k)})
    return env
