"""``python -m build`` makes a wheel and an sdist that install into a fresh venv and work there."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SMOKE = textwrap.dedent("""
    import datetime, pathlib, subprocess, sys
    import numpy as np
    import hdmf_zarr3
    from pynwb import NWBFile, NWBHDF5IO, TimeSeries
    from hdmf_zarr3 import NWBZarrIO, convert

    assert "site-packages" in hdmf_zarr3.__file__, hdmf_zarr3.__file__  # the installed copy, not src/
    f = NWBFile(session_description="smoke", identifier="smoke",
                session_start_time=datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC))
    f.add_acquisition(TimeSeries(name="ts", data=np.arange(100.0), unit="m", rate=1.0))
    with NWBZarrIO("smoke.nwb.zarr", mode="w") as io:
        io.write(f)
    convert("smoke.nwb.zarr", "smoke.nwb")
    with NWBHDF5IO("smoke.nwb", mode="r") as io:
        assert io.read().acquisition["ts"].data[:].sum() == 4950.0
    script = pathlib.Path(sys.executable).with_name("hdmf-zarr3")
    for argv in (["--help"], ["info", "smoke.nwb.zarr"], ["validate", "smoke.nwb.zarr"], ["view", "--help"],
                 ["convert", "--no-progress", "smoke.nwb", "again.nwb.zarr", "--codec", "zstd"]):
        out = subprocess.run([str(script), *argv], capture_output=True, text=True)
        assert out.returncode == 0, (argv, out.stdout, out.stderr)
    print("smoke ok", hdmf_zarr3.__version__)
""")


def _run(*argv: str | Path, cwd: Path | None = None) -> str:
    # (bytecode written as modules are first imported: the venv's installs are not compiled, see below)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    proc = subprocess.run([str(a) for a in argv], capture_output=True, text=True, cwd=cwd, timeout=900, env=env)
    assert proc.returncode == 0, f"{argv}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def test_wheel_and_sdist_install_and_work_in_a_fresh_venv(tmp_path):
    dist = tmp_path / "dist"
    _run(sys.executable, "-m", "build", "--outdir", dist, REPO)
    (wheel,) = dist.glob("*.whl")
    (sdist,) = dist.glob("*.tar.gz")
    names = zipfile.ZipFile(wheel).namelist()
    assert "hdmf_zarr3/format/layout/relayout.py" in names and "hdmf_zarr3/cli/__main__.py" in names
    assert "hdmf_zarr3/py.typed" in names  # type checkers read the package's annotations (PEP 561)
    assert {"hdmf_zarr3/view/static/index.html", "hdmf_zarr3/view/static/app.js"} <= set(names)  # the viewer's page
    assert not any(n.startswith(("tests/", "docs/")) for n in names)
    with tarfile.open(sdist) as tar:
        members = {m.split("/", 1)[1] for m in tar.getnames() if "/" in m}
    expected = {
        "src/hdmf_zarr3/backend/zarrio/zarr_io.py",
        "tests/conftest.py",
        "docs/conf.py",
        "LICENSE",
        "CHANGELOG.md",
    }
    assert expected <= members
    assert not any(m.startswith((".cache", ".venv", ".hypothesis", "benchmarks/results")) for m in members)

    venv = tmp_path / "venv"
    # a venv without pip of its own, filled by this environment's pip pointed at it, without compiling bytecode
    # at install (as tests/peer_venvs.py: the smoke runs compile what they import, once; the install is pip's
    # all the same)
    _run(sys.executable, "-m", "venv", "--without-pip", venv)
    python = venv / "bin" / "python"
    pip = (sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-compile")
    (tmp_path / "smoke.py").write_text(SMOKE)
    _run(*pip, wheel)
    assert "smoke ok" in _run(python, tmp_path / "smoke.py", cwd=tmp_path)
    _run(*pip, "--no-deps", "--force-reinstall", sdist)
    work = tmp_path / "from-sdist"
    work.mkdir()
    assert "smoke ok" in _run(python, tmp_path / "smoke.py", cwd=work)
