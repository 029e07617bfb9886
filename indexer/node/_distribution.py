"""A node's distribution: find the archive (or unpacked folder) and its plugins, unpack it once, atomically,
and install the plugins with the distribution's own tool."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from base import DistributionNotFoundError, EngineError
from indexer.node._java import JavaRuntime
from indexer.node.flavours import DEFAULT_ENGINE, EngineFlavour, PluginSpec, get_engine

#: in an unpacked distribution's folder: written last, so a folder without it is a partial unpack
UNPACKED_MARKER = ".unpacked"


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
    """``--distribution``, else the flavour's variable, else the first archive the fetch script leaves."""
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


def _extract_zip(dist: Path, dest: Path) -> None:
    with zipfile.ZipFile(dist) as zf:
        bad = zf.testzip()
        if bad is not None:
            raise DistributionNotFoundError(f"{dist} is corrupt (bad CRC in {bad}); fetch it again")
        for info in zf.infolist():
            zf.extract(info, dest)
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                os.chmod(dest / info.filename, mode)


def _extract(dist: Path, dest: Path) -> None:
    try:
        if dist.suffix == ".zip":
            _extract_zip(dist, dest)
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


def _unpacked_folder(dist: Path, flavour: EngineFlavour, plugins: Sequence[tuple[PluginSpec, Path]]) -> Path:
    """An unpacked distribution given as is: it must already hold the plugins."""
    exe = flavour.executable
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


def _stage(
    dist: Path,
    tmp: Path,
    flavour: EngineFlavour,
    plugins: Sequence[tuple[PluginSpec, Path]],
    java: JavaRuntime | None,
) -> None:
    """Unpack ``dist`` into ``tmp`` and install ``plugins`` there."""
    _extract(dist, tmp)
    staged = _home_in(tmp, flavour.executable)
    if staged is None:
        raise DistributionNotFoundError(f"{dist} unpacked but holds no bin/{flavour.executable}")
    for plugin, zip_path in plugins:
        if java is None:
            raise EngineError(f"installing {plugin.name} needs a Java runtime")
        install_plugin(staged, flavour, plugin, zip_path, java)


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
    if dist.is_dir():
        return _unpacked_folder(dist, flavour, plugins)
    stem = dist.name.removesuffix(".zip").removesuffix(".tar.gz")
    # no "+" in the name: the plugin tool reads its own path as a URL, where "+" is a space
    target = state_dir / "dist" / (stem + "".join(f"-with-{p.name}" for p, _ in plugins))
    if not (target / UNPACKED_MARKER).is_file():
        tmp = target.with_name(target.name + ".partial")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        try:
            _stage(dist, tmp, flavour, plugins, java)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        shutil.rmtree(target, ignore_errors=True)
        tmp.rename(target)
        marker = {"archive": str(dist), "plugins": [p.name for p, _ in plugins]}
        (target / UNPACKED_MARKER).write_text(json.dumps(marker))
    home = _home_in(target, flavour.executable)
    if home is None:
        raise DistributionNotFoundError(f"{dist} unpacked but holds no bin/{flavour.executable}")
    return home
