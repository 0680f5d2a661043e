// hdmf-zarr3 view: the panels of NWB objects (issue #41): the session overview, interval timelines, and the
// raster and PSTH of units. Loaded before app.js, whose helpers (el, getJSON, jump, value, state...) they call.
"use strict";

// a canvas drawn at the screen's pixel density, in CSS pixels: its context, width and height
function sharpCanvas(canvas, fontSize) {
  const ratio = window.devicePixelRatio || 1, w = canvas.clientWidth, h = canvas.clientHeight;
  canvas.width = Math.round(w * ratio); canvas.height = Math.round(h * ratio);
  const g = canvas.getContext("2d");
  g.setTransform(ratio, 0, 0, ratio, 0, 0);
  g.font = fontSize + "px system-ui, sans-serif";
  return { g, w, h };
}

// ---- the session overview ------------------------------------------------------------------------------
function facts(list) {
  // a list of names (experimenters, keywords) reads as text; names may hold commas: joined by "; "
  const shown = (v) => (Array.isArray(v) && v.every((x) => typeof x === "string") ? v.join("; ") : value(v));
  return el("table", { class: "facts" }, list.map((f) => el("tr", { dataset: { field: f.name } }, el("th", {}, f.label), el("td", {}, shown(f.value)))));
}

function contentsItem(item) {
  const label = [item.path ? jump(item.path, item.name) : item.name, " ", el("span", { class: "type" }, item.type)];
  if (item.rows !== undefined) label.push(el("span", { class: "muted" }, ` ${item.rows} rows`));
  for (const view of item.views || []) label.push(" ", el("a", { class: "view-link", href: "#node=" + encodeURIComponent(item.path) + "&view=" + view }, VIEW_NAMES[view] || view));
  if (item.description) label.push(el("span", { class: "muted" }, " · " + item.description));
  return el("li", { dataset: { path: item.path || "" } }, label);
}

async function renderSession(pane) {
  let found;
  try { found = await getJSON("session"); } catch (error) { showError(error); return; }
  const box = el("div", { id: "session" }, el("h2", {}, "Session"), facts(found.session.fields));
  if (found.subject) box.append(el("h2", {}, "Subject ", found.subject.path ? jump(found.subject.path, "(details)") : ""), facts(found.subject.fields));
  if (found.devices.length) box.append(el("h2", {}, "Devices"), el("ul", { class: "contents" }, found.devices.map(contentsItem)));
  box.append(el("h2", {}, "Contents"));
  for (const section of found.contents) {
    box.append(el("h3", {}, section.section), el("ul", { class: "contents", dataset: { section: section.section } }, section.items.map(contentsItem)));
  }
  pane.append(box);
}

// ---- interval timelines -------------------------------------------------------------------------------
async function renderTimeline(pane) {
  const params = new URLSearchParams(location.hash.slice(1));
  const group = params.get("group") || "";
  let found;
  try { found = await getJSON("timeline", { path: state.path, group }); } catch (error) { showError(error); return; }
  const choose = el("select", { id: "timeline-group", title: "a column to put rows on lines by" },
    el("option", { value: "" }, "(one line)"), found.groupable.map((c) => el("option", { value: c }, c)));
  choose.value = found.group || "";
  choose.addEventListener("change", () => { location.hash = "node=" + encodeURIComponent(state.path) + "&view=timeline" + (choose.value ? "&group=" + encodeURIComponent(choose.value) : ""); });
  const note = found.shown < found.rows ? ` (the first ${found.shown} of ${found.rows} rows)` : ` (${found.rows} rows)`;
  const canvas = el("canvas", { id: "timeline", dataset: { bands: String(found.bands.length), lines: String(found.lines.length) } });
  pane.append(el("div", { class: "controls" }, el("label", {}, "lines by ", choose), el("span", { class: "muted" }, note)), canvas);
  canvas.style.height = Math.min(900, 60 + 22 * found.lines.length) + "px";
  drawTimeline(canvas, found);
}

function drawTimeline(canvas, found) {
  const { g, w, h } = sharpCanvas(canvas, 11);
  const m = { left: 140, right: 16, top: 8, bottom: 26 }, pw = w - m.left - m.right, ph = h - m.top - m.bottom;
  const t0 = Math.min(...found.bands.map((b) => b[0]), 0), t1 = Math.max(...found.bands.map((b) => b[1]), t0 + 1e-9);
  const x = (t) => m.left + ((t - t0) / (t1 - t0)) * pw, line = ph / Math.max(1, found.lines.length);
  found.lines.forEach((name, i) => {
    g.fillStyle = "#444"; g.textAlign = "right";
    g.fillText(String(name).slice(0, 24), m.left - 6, m.top + (i + 0.5) * line + 4);
  });
  for (const [a, b, i] of found.bands) {
    g.fillStyle = COLORS[i % COLORS.length];
    g.fillRect(x(a), m.top + i * line + line * 0.15, Math.max(1, x(b) - x(a)), line * 0.7);
  }
  g.strokeStyle = "#999"; g.fillStyle = "#444"; g.textAlign = "center";
  g.beginPath(); g.moveTo(m.left, m.top + ph); g.lineTo(m.left + pw, m.top + ph); g.stroke();
  const step = niceStep((t1 - t0) / 8);
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) g.fillText(fmt(t) + " s", x(t), m.top + ph + 16);
  canvas.dataset.state = "drawn";
}

// ---- units: raster and PSTH ----------------------------------------------------------------------------
async function renderRaster(pane) {
  const params = new URLSearchParams(location.hash.slice(1));
  const query = { path: state.path, sort: params.get("sort") || "" };
  if (params.get("start")) Object.assign(query, { start: params.get("start"), stop: params.get("stop") });
  let found;
  try { found = await getJSON("raster", query); } catch (error) { showError(error); return; }
  const sort = el("select", { id: "raster-sort" }, el("option", { value: "" }, "(row)"), found.sortable.map((c) => el("option", { value: c }, c)));
  sort.value = found.sort || "";
  const reload = (extra) => { location.hash = "node=" + encodeURIComponent(state.path) + "&view=raster" + (sort.value ? "&sort=" + encodeURIComponent(sort.value) : "") + (extra || ""); };
  sort.addEventListener("change", () => reload());
  const step = (k) => () => { const span = found.stop - found.start; reload(`&start=${found.start + k * span}&stop=${found.stop + k * span}`); };
  const canvas = el("canvas", { id: "raster", dataset: { units: String(found.rows.length), spikes: String(found.rows.reduce((n, r) => n + r.times.length, 0)) } });
  pane.append(el("div", { class: "controls" }, el("button", { onclick: step(-1) }, "◀"), el("button", { onclick: step(1) }, "▶"),
    el("label", {}, "units by ", sort), el("span", { class: "muted" }, `${fmt(found.start)}–${fmt(found.stop)} s · ${found.rows.length} of ${found.units} units` + (found.capped ? " · spikes capped" : ""))), canvas);
  canvas.style.height = Math.min(900, 60 + 8 * found.rows.length) + "px";
  drawTicks(canvas, found.rows.map((r) => r.times), found.start, found.stop, found.rows.map((r) => "unit " + r.id));
  renderPsthControls(pane, found);
}

function drawTicks(canvas, rows, t0, t1, names) {
  const { g, w, h } = sharpCanvas(canvas, 10);
  const m = { left: 70, right: 12, top: 6, bottom: 24 }, pw = w - m.left - m.right, ph = h - m.top - m.bottom;
  const x = (t) => m.left + ((t - t0) / (t1 - t0 || 1)) * pw, row = ph / Math.max(1, rows.length);
  g.fillStyle = "#222";
  rows.forEach((times, i) => { for (const t of times) g.fillRect(x(t), m.top + i * row, 1, Math.max(1, row * 0.8)); });
  g.fillStyle = "#666"; g.textAlign = "right";
  const every = Math.ceil(12 / row);
  names.forEach((name, i) => { if (i % every === 0) g.fillText(name, m.left - 4, m.top + (i + 0.8) * row); });
  g.textAlign = "center";
  const step = niceStep((t1 - t0) / 8);
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) g.fillText(fmt(t) + " s", x(t), m.top + ph + 14);
  canvas.dataset.state = "drawn";
}

function renderPsthControls(pane, found) {
  const params = new URLSearchParams(location.hash.slice(1));
  const units = el("input", { type: "text", id: "psth-units", value: params.get("units") || String(found.rows.length ? found.rows[0].row : 0), title: "unit rows, e.g. 0,3" });
  const align = el("input", { type: "text", id: "psth-align", value: params.get("align") || "/intervals/trials", title: "an interval table" });
  const group = el("input", { type: "text", id: "psth-group", value: params.get("group") || "", placeholder: "a column", title: "lines by a column of that table" });
  const out = el("div", { id: "psth" });
  const draw = async () => {
    let got;
    try { got = await getJSON("psth", { path: state.path, units: units.value, align: align.value, group: group.value }); } catch (error) { showError(error); return; }
    out.replaceChildren(...got.units.map((unit) => {
      const curves = el("canvas", { class: "psth", dataset: { unit: String(unit.id), groups: String(Object.keys(unit.rates).length) } });
      const trials = el("canvas", { class: "psth-trials" });
      const box = el("div", { class: "psth-unit" }, el("h4", {}, `unit ${unit.id} · aligned to ${got.events} rows of ${got.align}`), curves, trials);
      queueMicrotask(() => { drawCurves(curves, got.edges, unit.rates); drawTicks(trials, unit.trials, got.edges[0], got.edges[got.edges.length - 1], unit.trials.map((_, i) => "row " + i)); });
      return box;
    }));
    if (found.waveforms) await addWaveforms(out, units.value);
    out.dataset.state = "drawn";
  };
  pane.append(el("h3", {}, "PSTH and trial-aligned raster"), el("div", { class: "controls" },
    el("label", {}, "units ", units), el("label", {}, "aligned to ", align), el("label", {}, "lines by ", group),
    el("button", { onclick: draw }, "draw")), out);
  draw();
}

// each unit's mean waveform (waveform_mean), its channels overlaid, under its PSTH
async function addWaveforms(out, rows) {
  let got;
  try { got = await getJSON("waveforms", { path: state.path, units: rows }); } catch (error) { showError(error); return; }
  const boxes = out.querySelectorAll(".psth-unit");
  got.units.forEach((unit, k) => {
    const canvas = el("canvas", { class: "waveform", dataset: { unit: String(unit.id), channels: String(unit.channels.length) } });
    const span = got.rate ? ` · ${fmt(1000 * unit.channels[0].length / got.rate)} ms` : ` · ${unit.channels[0].length} samples`;
    if (boxes[k]) boxes[k].append(el("h4", {}, `mean waveform (${unit.channels.length} of ${got.channels} channels${span}${got.unit ? ", " + got.unit : ""})`), canvas);
    queueMicrotask(() => drawWaveform(canvas, unit.channels));
  });
}

function drawWaveform(canvas, channels) {
  const { g, w, h } = sharpCanvas(canvas, 10);
  const values = channels.flat().filter((v) => v !== null);
  const lo = Math.min(...values, 0), hi = Math.max(...values, 0), span = hi - lo || 1;
  const m = { left: 70, right: 12, top: 6, bottom: 6 }, pw = w - m.left - m.right, ph = h - m.top - m.bottom;
  const y = (v) => m.top + ph - ((v - lo) / span) * ph;
  channels.forEach((samples, c) => {
    g.strokeStyle = COLORS[c % COLORS.length];
    g.beginPath();
    samples.forEach((v, i) => { if (v === null) return; const x = m.left + (i / Math.max(1, samples.length - 1)) * pw; if (i) g.lineTo(x, y(v)); else g.moveTo(x, y(v)); });
    g.stroke();
  });
  g.fillStyle = "#666"; g.textAlign = "right";
  g.fillText(fmt(hi), m.left - 4, m.top + 8); g.fillText(fmt(lo), m.left - 4, m.top + ph);
  canvas.dataset.state = "drawn";
}

function drawCurves(canvas, edges, rates) {
  const { g, w, h } = sharpCanvas(canvas, 10);
  // the margins of the trial raster below (drawTicks), so that both share their time axis
  const m = { left: 70, right: 12, top: 8, bottom: 20 }, pw = w - m.left - m.right, ph = h - m.top - m.bottom;
  const t0 = edges[0], t1 = edges[edges.length - 1];
  const top = Math.max(1e-9, ...Object.values(rates).flat());
  const x = (t) => m.left + ((t - t0) / (t1 - t0)) * pw, y = (v) => m.top + ph - (v / top) * ph;
  Object.entries(rates).forEach(([name, values], k) => {
    g.strokeStyle = COLORS[k % COLORS.length];
    g.beginPath();
    values.forEach((v, i) => { const a = x(edges[i]), b = x(edges[i + 1]); if (i) g.lineTo(a, y(v)); else g.moveTo(a, y(v)); g.lineTo(b, y(v)); });
    g.stroke();
    g.fillStyle = g.strokeStyle; g.textAlign = "right";
    g.fillText(String(name).slice(0, 18), m.left + pw - 4, m.top + 10 + 12 * k);
  });
  g.fillStyle = "#666"; g.textAlign = "right";
  g.fillText(fmt(top) + " /s", m.left - 4, m.top + 8);
  g.strokeStyle = "#bbb"; g.beginPath(); g.moveTo(x(0), m.top); g.lineTo(x(0), m.top + ph); g.stroke();
  canvas.dataset.state = "drawn";
}


// ---- ophys: the trace of the ROI clicked ----------------------------------------------------------------
async function renderRoiTraces(pane, img) {
  let found;
  try { found = await getJSON("traces", { path: state.path }); } catch (error) { showError(error); return; }
  const box = el("div", { id: "roi-traces", dataset: { traces: String(found.traces.length) } });
  pane.append(box);
  if (!found.traces.length) { box.append(el("p", { class: "muted" }, "no RoiResponseSeries in the file holds traces of these ROIs")); return; }
  const pick = el("select", { id: "roi-pick" }, Array.from({ length: Math.min(found.rows, 2000) }, (_, r) => el("option", { value: String(r) }, "ROI " + r)));
  const label = el("span", { class: "muted", id: "roi-label" }, "click a mask, or choose a ROI");
  const plots = el("div", {});
  box.append(el("div", { class: "controls" }, el("label", {}, "ROI ", pick), label), plots);
  const plotRoi = (row) => {
    pick.value = String(row);
    box.dataset.roi = String(row);
    plots.replaceChildren();
    for (const trace of found.traces) {
      const column = trace.columns[row];
      if (column === null || column === undefined) { plots.append(el("p", { class: "muted" }, `${trace.name}: no trace of ROI ${row}`)); continue; }
      const canvas = el("canvas", { class: "roi-trace", dataset: { series: trace.path, column: String(column) } });
      plots.append(el("h4", {}, `${trace.name} · ROI ${row} (its column ${column})`), canvas);
      const plot = new HZPlot(canvas, (start, stop, width) => {
        const params = { path: trace.path, channels: String(column), width };
        if (start !== null && start !== undefined) Object.assign(params, { start, stop });
        return getJSON("series", params);
      });
      plot.load(null, null);
    }
  };
  pick.addEventListener("change", () => plotRoi(Number(pick.value)));
  img.addEventListener("click", async (e) => {
    if (!found.mask_shape || !img.naturalWidth) return;
    const row = Math.floor((e.offsetY / img.clientHeight) * found.mask_shape[0]);
    const column = Math.floor((e.offsetX / img.clientWidth) * found.mask_shape[1]);
    let hit;
    try { hit = await getJSON("roi", { path: state.path, row, column }); } catch (error) { showError(error); return; }
    label.textContent = hit.rois.length ? `pixel (${row}, ${column}): ROI ${hit.rois.join(", ")}` : `pixel (${row}, ${column}): no ROI`;
    if (hit.rois.length) plotRoi(hit.rois[0]);
  });
  const first = found.traces[0].columns.findIndex((c) => c !== null);
  plotRoi(first < 0 ? 0 : first);
}

// ---- the probe's minimap: every channel's peak-to-peak amplitude over the plot's window, deepest at the top
// as the lanes; a click plots the channels around the one clicked, as many as are plotted ------------------
const DEFAULT_LANES = 8;

function probeMinimap(onChoose) {
  const canvas = el("canvas", { id: "minimap", title: "every channel, deepest at the top: click to plot the channels around one" });
  const box = el("div", { id: "minimap-box", hidden: true }, canvas);
  const m = { left: 130, right: 86, top: 4, bottom: 4 };  // the plot's margins: the same time axis
  let found = null, plotted = [], asked = "", sequence = 0;
  canvas.addEventListener("click", (e) => {
    if (!found || !found.channels.length) return;
    const rows = found.channels.length, at = (e.offsetY - m.top) / (canvas.clientHeight - m.top - m.bottom);
    const row = Math.min(rows - 1, Math.max(0, Math.floor(at * rows)));
    const n = Math.min(rows, Math.max(plotted.length, DEFAULT_LANES));
    const first = Math.min(rows - n, Math.max(0, row - Math.floor(n / 2)));
    onChoose(found.channels.slice(first, first + n));
  });
  const update = (view, channels) => {
    plotted = channels;
    box.hidden = false;
    const key = view[0] + " " + view[1];
    if (key === asked) { if (found) drawMinimap(canvas, m, found, plotted); return; }
    asked = key;
    const mine = ++sequence;
    canvas.dataset.state = "loading";
    getJSON("minimap", { path: state.path, start: view[0], stop: view[1], bins: 200 }).then((answer) => {
      if (mine !== sequence) return;  // a newer window was asked for
      found = answer;
      drawMinimap(canvas, m, found, plotted);
    }, (error) => { canvas.dataset.state = "error"; showError(error); });
  };
  return { box, update };
}

function drawMinimap(canvas, m, found, plotted) {
  const { g, w, h } = sharpCanvas(canvas, 11);
  const rows = found.channels.length, bins = found.t.length, pw = w - m.left - m.right, ph = h - m.top - m.bottom;
  // colours up to the 99th percentile: one noisy channel does not darken the rest
  const known = found.spread.flat().filter((v) => v !== null).sort((a, b) => a - b);
  const top = known.length ? known[Math.floor(0.99 * (known.length - 1))] || known[known.length - 1] || 1 : 1;
  const image = new ImageData(Math.max(1, bins), Math.max(1, rows));
  found.spread.forEach((row, r) => row.forEach((v, b) => {
    const [red, green, blue] = v === null ? [255, 255, 255] : mixed(COLOUR_STOPS.viridis, v / top);
    image.data.set([red, green, blue, 255], 4 * (r * bins + b));
  }));
  const off = document.createElement("canvas");
  off.width = image.width; off.height = image.height;
  off.getContext("2d").putImageData(image, 0, 0);
  g.imageSmoothingEnabled = false;
  g.drawImage(off, m.left, m.top, pw, ph);
  const rowOf = new Map(found.channels.map((c, r) => [c, r])), shown = plotted.map((c) => rowOf.get(c)).filter((r) => r !== undefined);
  g.fillStyle = "#d62728";  // the plotted channels, marked beside their rows
  for (const r of shown) g.fillRect(m.left - 7, m.top + (r * ph) / rows, 5, Math.max(1, ph / rows));
  g.fillStyle = "#333";
  g.fillText(`${rows} channels`, 4, m.top + 10);
  g.fillText("deepest at the top", 4, m.top + 24);
  const unit = prefixed(found.unit, top);
  g.fillText(`p-p ${fmt(top * unit.factor)} ${unit.label}`, w - m.right + 6, m.top + 10);
  Object.assign(canvas.dataset, { rows: String(rows), bins: String(bins), plotted: String(shown.length), state: "drawn" });
}
