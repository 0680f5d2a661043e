"""Benchmark (j): drawing a window of a recording, the viewer's own canvas code against uPlot (issue #41, point 8).

The viewer's server decimates every window to the minimum and maximum of each pixel column and channel, so a
page draws at most two values per pixel column and lane. This part gives both plotters the same decimated
window (made up here: ``--lanes`` lanes of ``--width`` columns) in headless Chromium (``_browser.py``):

- ours: ``HZPlot.draw()`` of ``src/hdmf_zarr3/view/static/plot.js`` (each lane's envelope as one filled path,
  its electrode's name, the time axis, the scale bar),
- uPlot (``uplot`` from the npm registry at :data:`UPLOT`, fetched by ``npm pack`` into ``.cache/``; not
  shipped): the lanes as series offset one above the other, each lane's maximum and minimum a series with a
  band filled between them, as its demos draw min/max envelopes.

Timed, in the same page and alternating, ``--rounds`` times: the first draw (uPlot: making the plot, which
draws it) and a redraw after a zoom (ours: ``draw()`` at a narrower view; uPlot: ``setScale`` of x), each the
median of ``--draws`` draws, with the page forced to finish painting (a pixel read back from the canvas).
Usage::

    python benchmarks/plot_drawing.py [--lanes 64] [--width 1200] [--rounds 5] [--draws 20]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from _browser import Browser
from _common import fmt_spread, table

REPO = Path(__file__).resolve().parents[1]
UPLOT = "1.6.32"
STATIC = REPO / "src" / "hdmf_zarr3" / "view" / "static"

PAGE = """<!doctype html><html><head><meta charset="utf-8">
<link rel="stylesheet" href="uPlot.min.css">
<style>canvas#plot { width: 1400px; height: %(height)dpx; display: block; }</style>
<script src="plot.js"></script><script src="uPlot.iife.min.js"></script><script src="drawing.js"></script>
</head><body><canvas id="plot"></canvas><div id="uplot"></div></body></html>"""

#: The page's measurements: window.measure(lanes, width, draws) -> {ours_first, ours_zoom, uplot_first, uplot_zoom}.
SCRIPT = r"""
function windowData(lanes, width) {
  const t = [], min = [], max = [];
  for (let i = 0; i < width; i++) t.push(i / width);
  for (let c = 0; c < lanes; c++) {
    const low = [], high = [];
    for (let i = 0; i < width; i++) {
      const v = Math.sin(i / 17 + c) * 1e-4 + Math.sin(i * 1.3 + c * 7) * 3e-5;
      low.push(v - 2e-5 - 1e-5 * Math.abs(Math.sin(i * 0.7))); high.push(v + 2e-5);
    }
    min.push(low); max.push(high);
  }
  const channels = Array.from({ length: lanes }, (_, c) => c);
  return { t, min, max, channels, labels: channels.map((c) => "e" + c + " shank0 CA1"), unit: "volts",
           decimation: "minmax", intervals: [] };
}
function painted(canvas) { canvas.getContext("2d").getImageData(0, 0, 1, 1); }
function median(xs) { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; }
// uPlot draws in a microtask it queues: awaiting one more runs it first (ours draws at once)
async function timed(fn, draws, canvasOf) {
  const times = [];
  for (let k = 0; k < draws; k++) {
    const t0 = performance.now();
    fn(k);
    await Promise.resolve();
    painted(canvasOf());
    times.push(performance.now() - t0);
  }
  return median(times);
}
async function ours(data, draws) {
  const canvas = document.getElementById("plot");
  const plot = new HZPlot(canvas, () => Promise.resolve(data));
  plot.data = data;
  const first = await timed(() => { plot.view = [0, 1]; plot.draw(); }, draws, () => canvas);
  const zoom = await timed((k) => { plot.view = [0.1 + k * 1e-3, 0.6]; plot.draw(); }, draws, () => canvas);
  return [first, zoom];
}
function uplotOf(data, height) {
  const lanes = data.channels.length, span = 1.6e-4, xs = data.t, columns = [xs], series = [{}], bands = [];
  for (let c = 0; c < lanes; c++) {
    const offset = (lanes - 1 - c) * span, colour = COLORS[c % COLORS.length];
    columns.push(data.max[c].map((v) => v + offset), data.min[c].map((v) => v + offset));
    series.push({ label: "max " + c, stroke: colour, width: 1, points: { show: false } },
                { label: "min " + c, stroke: colour, width: 1, points: { show: false } });
    bands.push({ series: [2 * c + 1, 2 * c + 2], fill: colour + "8c" });
  }
  const opts = { width: 1400, height, series, bands, legend: { show: false }, cursor: { show: false },
                 scales: { x: { time: false } }, axes: [{}, { show: true }] };
  return [opts, columns];
}
async function uplot(data, draws, height) {
  const box = document.getElementById("uplot");
  const [opts, columns] = uplotOf(data, height);
  let made = null;
  const canvas = () => box.querySelector("canvas");
  const first = await timed(() => { if (made) made.destroy(); made = new uPlot(opts, columns, box); }, draws, canvas);
  const zoom = await timed((k) => made.setScale("x", { min: 0.1 + k * 1e-3, max: 0.6 }), draws, canvas);
  made.destroy();
  return [first, zoom];
}
window.measure = async (lanes, width, draws, uplotFirst) => {
  const data = windowData(lanes, width), height = Math.max(440, 40 + 26 * lanes);
  document.getElementById("plot").style.height = height + "px";
  const a = await (uplotFirst ? uplot(data, draws, height) : ours(data, draws));
  const b = await (uplotFirst ? ours(data, draws) : uplot(data, draws, height));
  const [o, u] = uplotFirst ? [b, a] : [a, b];
  return { ours_first: o[0], ours_zoom: o[1], uplot_first: u[0], uplot_zoom: u[1] };
};
"""


def uplot_package(cache: Path) -> Path:
    """uPlot's ``dist`` directory, its package fetched from the npm registry once (``npm pack``) into ``cache``."""
    target = cache / f"uplot-{UPLOT}"
    if not (target / "package" / "dist" / "uPlot.iife.min.js").exists():
        target.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "pack", f"uplot@{UPLOT}"], cwd=target, check=True, capture_output=True, timeout=300)
        with tarfile.open(target / f"uplot-{UPLOT}.tgz") as archive:
            archive.extractall(target, filter="data")
    return target / "package" / "dist"


def run(lanes: int = 64, width: int = 1200, rounds: int = 5, draws: int = 20) -> dict[str, Any]:
    """The draw times of both plotters (ms, one median of ``draws`` per round)."""
    dist = uplot_package(REPO / ".cache")
    found: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="hdmf_zarr3_plots_") as tmp, Browser(width=1500, height=1000) as browser:
        page = Path(tmp)
        shutil.copy(STATIC / "plot.js", page / "plot.js")
        for name in ("uPlot.iife.min.js", "uPlot.min.css"):
            shutil.copy(dist / name, page / name)
        (page / "drawing.js").write_text(SCRIPT)
        (page / "index.html").write_text(PAGE % {"height": max(440, 40 + 26 * lanes)})
        browser.first_paint((page / "index.html").as_uri(), "#uplot")
        for r in range(rounds):
            expression = f"window.measure({lanes}, {width}, {draws}, {json.dumps(r % 2 == 1)}).then(JSON.stringify)"
            answer = browser.call(
                "Runtime.evaluate", session=True, expression=expression, returnByValue=True, awaitPromise=True
            )
            for key, value in json.loads(answer["result"]["value"]).items():
                found.setdefault(key, []).append(value)
    return {"lanes": lanes, "width": width, "ms": found}


def report(res: dict[str, Any]) -> None:
    ms = res["ms"]
    rows = [
        [what, fmt_spread(ms[f"ours_{key}"]), fmt_spread(ms[f"uplot_{key}"]), f"{_ratio(ms, key):.2f}"]
        for what, key in (("first draw", "first"), ("redraw after a zoom", "zoom"))
    ]
    print(f"  {res['lanes']} lanes x {res['width']} pixel columns (min and max each), headless Chromium:")
    print(table(["ms", "ours", f"uPlot {UPLOT}", "uPlot / ours"], rows))


def _ratio(ms: dict[str, list[float]], key: str) -> float:
    return statistics.median(u / o for u, o in zip(ms[f"uplot_{key}"], ms[f"ours_{key}"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lanes", type=int, default=64)
    parser.add_argument("--width", type=int, default=1200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--draws", type=int, default=20)
    args = parser.parse_args()
    report(run(args.lanes, args.width, args.rounds, args.draws))


if __name__ == "__main__":
    main()
