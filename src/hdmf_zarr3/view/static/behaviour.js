// hdmf-zarr3 view: behaviour (issue #41, point 5): a SpatialSeries as an x-y path coloured by time, and the
// series of a BehavioralEvents as lines of ticks, both over a time window kept in the URL (start, stop).
// Loaded after panels.js, before app.js, whose helpers (el, getJSON, state, fmt...) it calls.
"use strict";

// the window asked for in the URL, as the API's start and stop
function windowAsked() {
  const params = new URLSearchParams(location.hash.slice(1)), asked = {};
  for (const key of ["start", "stop"]) if (params.get(key)) asked[key] = params.get(key);
  return asked;
}

// from/to boxes (seconds), earlier/later by the window's length, all; `extent`: the whole series' times
function windowControls(view, extent, note) {
  const asked = windowAsked();
  const box = (id, key, at) => el("input", { type: "number", id, step: "any", value: asked[key] || "", placeholder: at === null ? "" : fmt(at) });
  const from = box("window-start", "start", extent[0]), to = box("window-stop", "stop", extent[1]);
  const go = (a, b) => {
    location.hash = "node=" + encodeURIComponent(state.path) + "&view=" + view + (a !== "" ? "&start=" + a : "") + (b !== "" ? "&stop=" + b : "");
  };
  const shift = (k) => {
    const a = Number(from.value || extent[0]), b = Number(to.value || extent[1]), d = (b - a) * k;
    go(a + d, b + d);
  };
  return el("div", { class: "controls" }, el("label", {}, "from ", from), el("label", {}, " to ", to, " s "),
    el("button", { title: "this window", onclick: () => go(from.value, to.value) }, "show"),
    el("button", { title: "earlier", onclick: () => shift(-1) }, "◀"), el("button", { title: "later", onclick: () => shift(1) }, "▶"),
    el("button", { title: "the whole series", onclick: () => go("", "") }, "all"), el("span", { class: "muted" }, note));
}

// ---- a SpatialSeries as an x-y path --------------------------------------------------------------------
async function renderPath(pane) {
  let found;
  try { found = await getJSON("path", Object.assign({ path: state.path }, windowAsked())); } catch (error) { showError(error); return; }
  const canvas = el("canvas", { id: "path", dataset: { points: String(found.x.length) } });
  const end = found.t.length ? found.t[found.t.length - 1] : 0, first = found.t.length ? found.t[0] : 0;
  const note = ` samples ${found.first}–${found.last} of ${found.samples} · ${found.x.length} points · ${fmt(first)}–${fmt(end)} s, colour: time (early blue, late yellow)`;
  pane.append(windowControls("path", found.extent, note), canvas);
  if (found.series && found.series !== state.path) pane.append(el("p", { class: "muted" }, "the path of ", jump(found.series, found.series)));
  drawPath(canvas, found);
}

function drawPath(canvas, found) {
  const { g, w, h } = sharpCanvas(canvas, 11);
  const xs = found.x.filter((v) => v !== null), ys = found.y.filter((v) => v !== null);
  const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const side = Math.min(w - 80, h - 50), span = Math.max(x1 - x0, y1 - y0) || 1;  // one scale on both axes
  const X = (v) => 60 + ((v - x0) / span) * side, Y = (v) => 10 + side - ((v - y0) / span) * side;
  for (let i = 1; i < found.x.length; i++) {
    if ([found.x[i - 1], found.y[i - 1], found.x[i], found.y[i]].includes(null)) continue;
    g.strokeStyle = timeColour(i / Math.max(1, found.x.length - 1));
    g.beginPath(); g.moveTo(X(found.x[i - 1]), Y(found.y[i - 1])); g.lineTo(X(found.x[i]), Y(found.y[i])); g.stroke();
  }
  g.fillStyle = "#444"; g.textAlign = "center";
  g.fillText(`x: ${fmt(x0)} – ${fmt(x0 + span)} ${found.unit || ""}`, 60 + side / 2, side + 34);
  g.textAlign = "left";
  g.fillText(`y: ${fmt(y0)} – ${fmt(y0 + span)}`, 4, 20);
  canvas.dataset.state = "drawn";
}

// viridis, from early (dark blue) to late (yellow)
function timeColour(f) {
  return mixStops(COLOUR_STOPS.viridis, f);
}

// ---- a BehavioralEvents' series as lines of ticks --------------------------------------------------------
async function renderEvents(pane) {
  let found;
  try { found = await getJSON("events", Object.assign({ path: state.path }, windowAsked())); } catch (error) { showError(error); return; }
  const times = found.lines.flatMap((line) => line.t.filter((v) => v !== null));
  const extent = times.length ? [Math.min(...times), Math.max(...times)] : [null, null];
  const cut = found.lines.filter((line) => line.count > line.t.length).length;
  const note = ` ${found.lines.length} of ${found.series} series` + (cut ? ` · ${cut} of them: their first events only` : "");
  const canvas = el("canvas", { id: "events", dataset: { lines: String(found.lines.length), ticks: String(times.length) } });
  canvas.style.height = Math.min(900, 50 + 28 * found.lines.length) + "px";
  pane.append(windowControls("events", extent, note), canvas);
  drawEvents(canvas, found, extent);
}

function drawEvents(canvas, found, extent) {
  const { g, w, h } = sharpCanvas(canvas, 11);
  const m = { left: 140, right: 16, top: 8, bottom: 26 }, pw = w - m.left - m.right, line = (h - m.top - m.bottom) / Math.max(1, found.lines.length);
  const t0 = extent[0] === null ? 0 : extent[0], t1 = extent[1] === null || extent[1] <= t0 ? t0 + 1 : extent[1];
  const x = (t) => m.left + ((t - t0) / (t1 - t0)) * pw;
  found.lines.forEach((entry, i) => {
    const y = m.top + i * line;
    g.fillStyle = "#333";
    g.fillText(`${entry.name} (${entry.count})`.slice(0, 24), 4, y + line / 2 + 4);
    g.strokeStyle = COLORS[i % COLORS.length];
    g.beginPath();
    for (const t of entry.t) if (t !== null) { g.moveTo(x(t), y + 3); g.lineTo(x(t), y + line - 3); }
    g.stroke();
  });
  g.fillStyle = "#444";
  g.fillText(`${fmt(t0)} s`, m.left, h - 8);
  g.textAlign = "right"; g.fillText(`${fmt(t1)} s`, w - m.right, h - 8); g.textAlign = "left";
  canvas.dataset.state = "drawn";
}
