"""A node's process: launch it in its own session, probe ports and pids, stop its whole process group,
and (as root) the unprivileged user it runs as, since both engines refuse to run as root."""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from base import EngineError, is_root

DEFAULT_RUN_USER = "r2med-es"


def port_open(port: int) -> bool:
    """Whether something accepts connections on ``127.0.0.1:port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def health_ok(url: str) -> bool:
    """Whether ``url`` (a ``_cluster/health`` URL) answers yellow or green."""
    try:
        with urllib.request.urlopen(url, timeout=3) as resp:
            body = json.loads(resp.read())
    except (urllib.error.URLError, OSError, ValueError):
        return False
    return body.get("status") in {"yellow", "green"}


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie is not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return False
    return True


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _environ_has(pid: int, needle: str) -> bool:
    try:
        return needle.encode() in Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return True  # cannot read another user's environ: the cmdline check decides


def process_mentions(pid: int, marker: str) -> bool:
    """Whether process ``pid`` names ``marker`` on its command line or in its environment."""
    return marker in _cmdline(pid) or _environ_has(pid, marker)


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def _group_alive(pgid: int) -> bool:
    """Whether any process of group ``pgid`` other than a zombie is left."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, sig)


def _wait_group(pgid: int, timeout_s: float, poll_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while _group_alive(pgid) and time.monotonic() < deadline:
        _reap(pgid)
        time.sleep(poll_s)


def stop_group(pgid: int, timeout_s: float) -> None:
    """SIGTERM the process group ``pgid``; SIGKILL what is left after ``timeout_s``."""
    _signal_group(pgid, signal.SIGTERM)
    _wait_group(pgid, timeout_s, 0.2)
    if _group_alive(pgid):
        _signal_group(pgid, signal.SIGKILL)
        time.sleep(0.5)
    _reap(pgid)


def kill_group(pgid: int) -> None:
    """SIGKILL the process group ``pgid`` and wait (up to 30 s) until it is gone."""
    _signal_group(pgid, signal.SIGKILL)
    _wait_group(pgid, 30.0, 0.1)


def launch(
    argv: list[str], cwd: Path, env: Mapping[str, str], log_file: Path, **popen: Any
) -> subprocess.Popen[bytes]:
    """Start ``argv`` in a session of its own (so its group can be stopped whole), output to ``log_file``."""
    with log_file.open("wb") as log:
        return subprocess.Popen(
            argv,
            cwd=str(cwd),
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            **popen,
        )


def ensure_run_user(name: str) -> pwd.struct_passwd:
    """The unprivileged system user ``name``, created (without a home or a shell) if missing."""
    try:
        return pwd.getpwnam(name)
    except KeyError:
        pass
    useradd = shutil.which("useradd")
    if useradd is None:
        raise EngineError(
            f"running as root needs an unprivileged user {name!r} and useradd is missing; create it"
        )
    proc = subprocess.run(
        [useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
        capture_output=True,
        text=True,
    )
    if proc.returncode not in (0, 9):
        raise EngineError(f"could not create user {name!r}: {proc.stderr.strip()}")
    return pwd.getpwnam(name)


def _chown_tree(path: Path, uid: int, gid: int) -> None:
    for root, dirs, files in os.walk(path):
        os.chown(root, uid, gid)
        for n in dirs + files:
            with contextlib.suppress(FileNotFoundError):
                os.chown(os.path.join(root, n), uid, gid, follow_symlinks=False)


def _check_traversable(state_dir: Path, user: str) -> None:
    for parent in [state_dir, *state_dir.parents]:
        if parent == Path("/"):
            return
        if not os.stat(parent).st_mode & 0o001:
            raise EngineError(
                f"the node's user {user!r} cannot reach {state_dir} ({parent} is not traversable); "
                "choose another folder with R2MED_HARNESS_STATE"
            )


def run_as(user_name: str, state_dir: Path, owned: list[Path]) -> dict[str, Any]:
    """Popen arguments that run the node as ``user_name`` when we are root (who owns ``owned``); else none."""
    if not is_root():
        return {}
    user = ensure_run_user(user_name)
    for path in owned:
        _chown_tree(path, user.pw_uid, user.pw_gid)
    _check_traversable(state_dir, user_name)
    return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}


def tail(path: Path, lines: int) -> str:
    """The last ``lines`` lines of ``path`` (read from its end; empty when unreadable)."""
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - max(64, lines) * 1024))
            data = fh.read().decode(errors="replace")
    except OSError:
        return ""
    return "\n".join(data.splitlines()[-lines:])


def first_error(log: str) -> str:
    """The most telling line of a failed start (the fatal exception), or a pointer to the log."""
    for line in log.splitlines():
        if "fatal exception" in line or "][ERROR]" in line:
            message = line.split("] ", 2)[-1][:500]
            after = log.split(line, 1)[-1].splitlines()[:40]
            causes = [c.strip() for c in after if c.strip().startswith("Caused by:")]
            return message + (" " + " ".join(causes[:2]) if causes else "")
    return "see the log lines below"
