"""Build the docker image commands run in: pulled where a registry answers, else debootstrapped."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Callable

from codeagent.errors import InputError

PULL_IMAGE = "python:3.11-slim"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
SUITE = "bookworm"
PACKAGES = "python3,python3-pip,python3-venv,python3-pytest,python-is-python3,git,ca-certificates,procps,coreutils,make"

Log = Callable[[str], None]


def _client():  # noqa: ANN202 - docker is imported lazily
    import docker

    return docker.from_env(version="auto", timeout=600)


def image_exists(client, name: str) -> bool:  # noqa: ANN001
    """Whether the daemon already has ``name``."""
    import docker.errors

    try:
        client.images.get(name)
        return True
    except docker.errors.ImageNotFound:
        return False


def apt_mirror(sources_dir: Path = Path("/etc/apt")) -> str:
    """The Debian mirror apt uses (sources.list or a deb822 ``.sources`` file), else the default."""
    files = [sources_dir / "sources.list", *sorted((sources_dir / "sources.list.d").glob("*"))]
    for f in files:
        if not f.is_file() or f.suffix not in {".list", ".sources"}:
            continue
        text = f.read_text(errors="replace")
        for m in re.finditer(r"^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)", text, re.M):
            if "security" not in m.group(1) and "security" not in m.group(2):
                return m.group(1)
        for block in text.split("\n\n"):
            uris = re.search(r"^URIs:\s*(\S+)", block, re.M)
            suites = re.search(r"^Suites:\s*(.+)$", block, re.M)
            if uris and "security" not in uris.group(1) and not (suites and "security" in suites.group(1)):
                return uris.group(1)
    return DEFAULT_MIRROR


def _try_pull(client, name: str, log: Log) -> bool:  # noqa: ANN001
    """Pull :data:`PULL_IMAGE` and tag it ``name``; False when no registry answers."""
    import docker.errors

    try:
        img = client.images.pull(PULL_IMAGE)
    except (docker.errors.APIError, OSError) as e:
        log(f"pull {PULL_IMAGE} failed ({str(e).splitlines()[0][:120]}); building locally")
        return False
    repo, _, tag = name.partition(":")
    img.tag(repo, tag or "latest")
    return True


def _ensure_debootstrap(log: Log) -> None:
    if shutil.which("debootstrap"):
        return
    log("installing debootstrap")
    subprocess.run(["apt-get", "update", "-qq"], check=False)
    r = subprocess.run(["apt-get", "install", "-y", "-qq", "debootstrap"], check=False)
    if r.returncode != 0 or not shutil.which("debootstrap"):
        raise InputError("debootstrap is missing and could not be installed with apt-get")


def _debootstrap_import(name: str, log: Log) -> None:
    """debootstrap a minimal bookworm with python3 and git, then ``docker import`` it as ``name``."""
    _ensure_debootstrap(log)
    mirror = apt_mirror()
    with tempfile.TemporaryDirectory(prefix="codeagent-rootfs-") as tmp:
        root = Path(tmp) / "root"
        log(f"debootstrap {SUITE} from {mirror} (a few minutes)")
        cmd = ["debootstrap", "--variant=minbase", f"--include={PACKAGES}", SUITE, str(root), mirror]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            tail = (r.stdout + r.stderr).strip().splitlines()[-3:]
            raise InputError(f"debootstrap failed: {' | '.join(tail)}")
        subprocess.run(["chroot", str(root), "apt-get", "clean"], check=False, capture_output=True)
        log(f"docker import {name}")
        tar = subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
        imp = subprocess.run(
            ["docker", "import", "--change", "CMD [\"bash\"]", "-", name],
            stdin=tar.stdout, capture_output=True, text=True,
        )
        assert tar.stdout is not None
        tar.stdout.close()
        tar.wait()
        if imp.returncode != 0 or tar.returncode != 0:
            raise InputError(f"docker import failed: {imp.stderr.strip()[:200]}")


def build_image(name: str, *, pull: bool = True, force: bool = False, log: Log = print) -> str:
    """Make sure the daemon has image ``name``; returns how it got there (exists, pulled, built)."""
    try:
        client = _client()
        client.ping()
    except Exception as e:  # noqa: BLE001 - any failure here means "no daemon"
        raise InputError(f"no docker daemon: {str(e).splitlines()[0][:160]}") from None
    if not force and image_exists(client, name):
        log(f"image {name} exists")
        return "exists"
    if pull and _try_pull(client, name, log):
        log(f"image {name} pulled from {PULL_IMAGE}")
        return "pulled"
    _debootstrap_import(name, log)
    log(f"image {name} built")
    return "built"
