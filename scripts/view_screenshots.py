"""Make the screenshots of docs/view.md: the viewer's test file, served, photographed by headless Chromium.

Run from the repository: ``python scripts/view_screenshots.py`` (needs ``chromium`` on PATH).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from viewer_files import write_probe_file, write_viewer_file  # noqa: E402

from hdmf_zarr3.view.server import ViewServer  # noqa: E402
from hdmf_zarr3.view.viewed_file import ViewedFile  # noqa: E402

SHOTS = {
    "session.png": "",
    "path.png": "#node=/processing/behavior/Position/track",
    "events.png": "#node=/processing/behavior/BehavioralEvents",
    "raster.png": "#node=/units&view=raster&sort=quality",
    "timeline.png": "#node=/intervals/trials&view=timeline&group=score",
    "plot.png": "#node=/acquisition/ElectricalSeries",
    "table.png": "#node=/units&view=table",
    "image.png": "#node=/processing/ophys/ImageSegmentation/cells&view=image",
    "details.png": "#node=/acquisition/ElectricalSeries/data",
}
#: Shots of the 384-channel probe file.
PROBE_SHOTS = {"probe.png": "#node=/acquisition/es&view=series&channels=100-131"}


def main() -> None:
    browser = shutil.which("chromium") or sys.exit("chromium is not installed")
    with tempfile.TemporaryDirectory() as tmp:
        for write, shots in ((write_viewer_file, SHOTS), (write_probe_file, PROBE_SHOTS)):
            path = write(Path(tmp) / f"{write.__name__}.nwb.zarr")
            with ViewServer(ViewedFile(str(path))) as server:
                for name, hash_ in shots.items():
                    shoot(browser, tmp, server.url + hash_, REPO / "docs" / "view" / name)


def shoot(browser: str, tmp: str, url: str, out: Path) -> None:
    argv = [browser, "--headless", "--disable-gpu", "--hide-scrollbars", f"--user-data-dir={tmp}/p"]
    argv += ["--no-sandbox"] if os.geteuid() == 0 else []
    argv += ["--virtual-time-budget=10000", "--window-size=1400,760", f"--screenshot={out}"]
    subprocess.run([*argv, url], check=True, capture_output=True, timeout=180)
    print("wrote", out.relative_to(REPO))


if __name__ == "__main__":
    main()
