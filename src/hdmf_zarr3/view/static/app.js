// hdmf-zarr3 view: the page. The tree on the left; the selected node's details, table, plot or image on the
// right. Every request carries the token of the page's URL. State lives in the URL's hash (#node=...&view=...).
"use strict";

const TOKEN = new URLSearchParams(location.search).get("token") || "";
const VIEW_NAMES = { session: "Session", details: "Details", table: "Table", timeline: "Timeline", raster: "Raster", path: "Path", events: "Events", series: "Plot", image: "Image" };
const state = { path: "/", view: "details", node: null, plot: null, table: { start: 0, sort: "", desc: false, where: "", equals: "" } };

function api(route, params) {
  const query = new URLSearchParams(Object.assign({ token: TOKEN }, params || {}));
  return "api/" + route + "?" + query.toString();
}

// the requests under way are counted on <body data-fetching>: a page is settled when it is 0
async function getJSON(route, params) {
  const count = (step) => { document.body.dataset.fetching = String(Number(document.body.dataset.fetching || 0) + step); };
  count(1);
  try {
    const answer = await fetch(api(route, params), { headers: { Accept: "application/json" } });
    const body = await answer.json();
    if (!answer.ok) throw body;
    return body;
  } finally {
    count(-1);
  }
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(node.dataset, v);
    else node.setAttribute(k, v);
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function jump(path, label) {
  return el("a", { class: "jump", href: "#node=" + encodeURIComponent(path), title: "go to " + path }, label || path);
}

function showError(error) {
  const box = document.getElementById("error");
  if (!error) { box.hidden = true; box.textContent = ""; return; }
  box.hidden = false;
  box.dataset.error = error.error || "Error";
  box.textContent = (error.error || "Error") + (error.path ? " at " + error.path : "") + "\n" + (error.message || error);
}

// ---- the tree ------------------------------------------------------------------------------------------
function treeNode(entry) {
  const label = [el("span", { class: "node-name" }, entry.name)];
  if (entry.type) label.push(el("span", { class: "type" }, entry.type.split(":").pop()));
  if (entry.kind === "dataset") label.push(el("span", { class: "shape" }, (entry.shape.length ? "(" + entry.shape.join("×") + ") " : "") + entry.dtype));
  if (entry.kind === "link") label.push(el("span", { class: "link-arrow" }, " → " + entry.target));
  if (entry.kind === "group") {
    const details = el("details", { dataset: { path: entry.path } });
    // a click on the name selects the group (and opens it); a click on the arrow only opens or closes it
    const summary = el("summary", { dataset: { path: entry.path }, onclick: (e) => {
      if (e.offsetX > 14) { e.preventDefault(); details.open = true; go(entry.path); }
    } }, label);
    details.append(summary, el("div", { class: "children" }, entry.children.map(treeNode)));
    if (entry.path === "/" || entry.path.split("/").length <= 2) details.open = true;
    return details;
  }
  return el("div", { class: "leaf", dataset: { path: entry.path }, onclick: () => go(entry.kind === "link" ? entry.target : entry.path) }, label);
}

// the tree with only the nodes whose name or type holds `text`, and the groups leading to them
function filtered(entry, text) {
  if (!text) return entry;
  const own = (entry.name + " " + (entry.type || "")).toLowerCase().includes(text);
  const children = (entry.children || []).map((c) => filtered(c, text)).filter(Boolean);
  if (!own && !children.length) return null;
  return entry.children ? Object.assign({}, entry, { children: own ? entry.children : children }) : entry;
}

function highlight(path) {
  document.querySelectorAll("#tree .selected").forEach((n) => n.classList.remove("selected"));
  let target = document.querySelector(`#tree summary[data-path="${CSS.escape(path)}"], #tree .leaf[data-path="${CSS.escape(path)}"]`);
  if (!target) return;
  target.classList.add("selected");
  for (let d = target.parentElement; d && d.id !== "tree"; d = d.parentElement) if (d.tagName === "DETAILS") d.open = true;
  target.scrollIntoView({ block: "nearest" });
}

// ---- navigation ------------------------------------------------------------------------------------------
function go(path, view) {
  const hash = "node=" + encodeURIComponent(path) + (view ? "&view=" + view : "");
  if (location.hash.slice(1) === hash) route(); else location.hash = hash;
}

async function route() {
  const params = new URLSearchParams(location.hash.slice(1));
  const path = params.get("node") || "/";
  const asked = params.get("view");
  if (path !== state.path || !state.node) {
    state.path = path;
    state.table = { start: 0, sort: "", desc: false, where: params.get("where") || "", equals: params.get("equals") || "" };
    state.node = null;
    showError(null);
    document.getElementById("node-path").textContent = path;
    document.getElementById("node-type").textContent = "";
    highlight(path);
    try {
      state.node = await getJSON("node", { path });
    } catch (error) {
      showError(error);
      document.getElementById("pane").replaceChildren();
      document.getElementById("tabs").replaceChildren();
      return;
    }
    document.getElementById("node-type").textContent = state.node.type || state.node.kind;
  }
  const own = state.node.views || [];  // the session overview before the details: the page opens on it
  const views = [...own.filter((v) => v === "session"), "details", ...own.filter((v) => v !== "session")];
  state.view = views.includes(asked) ? asked : (state.node.views && state.node.views[0]) || "details";
  renderTabs(views);
  showError(null);
  const pane = document.getElementById("pane");
  pane.replaceChildren();
  ({ session: renderSession, details: renderDetails, table: renderTable, timeline: renderTimeline, raster: renderRaster, path: renderPath, events: renderEvents, series: renderSeries, image: renderImage })[state.view](pane);
}

function renderTabs(views) {
  document.getElementById("tabs").replaceChildren(...views.map((v) => el("button", {
    class: v === state.view ? "active" : "", role: "tab", dataset: { view: v }, onclick: () => go(state.path, v),
  }, VIEW_NAMES[v])));
}

// ---- details -------------------------------------------------------------------------------------------
function value(v) {
  if (v && typeof v === "object" && !Array.isArray(v)) {
    if (v.ref) return jump(v.ref);
    if (v.error) return el("span", { class: "error-inline" }, v.error + ": " + v.message);
    return JSON.stringify(v);
  }
  if (Array.isArray(v)) {
    if (v.some((x) => x && typeof x === "object" && x.ref)) return el("span", {}, v.map((x, i) => [i ? ", " : "", value(x)]));
    return JSON.stringify(v);
  }
  return v === null ? "null" : String(v);
}

function size(n) {
  if (n === null || n === undefined) return "?";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < 4) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n) + " " + units[i];
}

function renderDetails(pane) {
  const n = state.node;
  const facts = [["path", n.path], ["kind", n.kind]];
  if (n.type) facts.push(["neurodata type", n.type]);
  if (n.kind === "link") facts.push(["target", jump(n.target)]);
  if (n.kind === "dataset") {
    facts.push(["shape", "(" + n.shape.join(", ") + ")"], ["dtype", n.dtype]);
    if ("value" in n) facts.push(["value", value(n.value)]);
    if (n.chunks) facts.push(["chunks", "(" + n.chunks.join(", ") + ")"], ["shards", n.shards ? "(" + n.shards.join(", ") + ")" : "none"],
      ["codecs", n.codecs.join(" → ")], ["size", size(n.logical_bytes) + " → " + size(n.stored_bytes) + " stored"]);
    if (n.storage_error) facts.push(["storage", n.storage_error]);
  }
  pane.append(el("table", { class: "facts" }, facts.map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", {}, v)))));
  const attrs = Object.entries(n.attributes || {});
  if (attrs.length) {
    pane.append(el("h3", {}, "Attributes"), el("table", { class: "facts" }, attrs.map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", {}, value(v))))));
  }
  if (n.links && Object.keys(n.links).length) {
    pane.append(el("h3", {}, "Links"), el("ul", {}, Object.entries(n.links).map(([k, v]) => el("li", {}, k + " → ", jump(v)))));
  }
  if (n.preview !== undefined) {
    const p = n.preview;
    let shown;
    if (p && typeof p === "object" && p.error) shown = p.error + ": " + p.message;
    else if (Array.isArray(p) && p.some(Array.isArray)) shown = p.map((row) => JSON.stringify(row)).join("\n");
    else shown = value(p);
    pane.append(el("h3", {}, "First values"), el("pre", { id: "preview" }, shown));
  }
}

// ---- tables --------------------------------------------------------------------------------------------
function cell(v) {
  if (v && typeof v === "object" && !Array.isArray(v)) {
    if (v.items) {
      const items = v.items.map((x, i) => [i ? ", " : "", cell(x)]);
      return el("span", { title: v.count + " values" }, "[", items, v.count > v.items.length ? ", … +" + (v.count - v.items.length) : "", "]");
    }
    if (v.ref) return jump(v.ref, v.text);
    if (v.text !== undefined) return v.text;
    return JSON.stringify(v);
  }
  return v === null ? "" : typeof v === "number" ? String(Number(v.toPrecision(6))) : String(v);
}

async function renderTable(pane) {
  const t = state.table, count = 50;
  let page;
  try {
    page = await getJSON("table", { path: state.path, start: t.start, count, sort: t.sort, desc: t.desc ? "1" : "0", where: t.where || "", equals: t.equals || "" });
  } catch (error) { showError(error); return; }
  const head = el("tr", {}, page.columns.map((c) => el("th", {
    title: c.kind + (c.target ? " → " + c.target : "") + " (click to sort)",
    onclick: () => { t.desc = t.sort === c.name ? !t.desc : false; t.sort = c.name; t.start = 0; pane.replaceChildren(); renderTable(pane); },
  }, c.name, t.sort === c.name ? (t.desc ? " ▼" : " ▲") : "")));
  const rows = page.data.map((row) => el("tr", {}, row.map((v) => el("td", {}, cell(v)))));
  // the server may send fewer rows than asked (a page holds at most 10,000 cells) and the first 200 columns
  const shown = page.row_numbers.length || count;
  const total = page.matched === null ? page.rows : page.matched;
  const last = Math.min(total, t.start + shown);
  const columns = page.column_count > page.columns.length ? ` (the first ${page.columns.length} of ${page.column_count} columns)` : "";
  const matched = page.matched === null ? "" : ` matching (of ${page.rows})`;
  const again = () => { pane.replaceChildren(); renderTable(pane); };
  const controls = el("div", { class: "controls" },
    el("button", { onclick: () => { t.start = Math.max(0, t.start - shown); again(); } }, "◀ previous"),
    el("span", {}, `rows ${total ? t.start + 1 : 0}–${last} of ${total}${matched}${columns}`),
    el("button", { onclick: () => { if (last < total) { t.start += shown; again(); } } }, "next ▶"));
  // a filter: the rows whose value in a column contains a text (numbers: equal to it)
  const where = el("select", { id: "filter-column" }, page.columns.map((c) => el("option", { value: c.name }, c.name)));
  where.value = t.where || page.columns[0].name;
  const equals = el("input", { type: "text", id: "filter-text", value: t.equals || "", placeholder: "contains…" });
  const apply = () => { t.where = equals.value ? where.value : ""; t.equals = equals.value; t.start = 0; again(); };
  equals.addEventListener("keydown", (e) => { if (e.key === "Enter") apply(); });
  controls.append(el("label", {}, " filter ", where), equals, el("button", { onclick: apply }, "filter"),
    t.where ? el("button", { onclick: () => { t.where = ""; t.equals = ""; t.start = 0; again(); } }, "clear") : "");
  pane.replaceChildren(controls, el("table", { class: "rows", id: "rows", dataset: { rows: String(page.rows), matched: String(total) } }, el("thead", {}, head), el("tbody", {}, rows)));
}

// ---- time series ---------------------------------------------------------------------------------------
function renderSeries(pane) {
  const asked = new URLSearchParams(location.hash.slice(1)).get("channels") || "";
  const channels = el("input", { type: "text", id: "channels", placeholder: "e.g. 0-7,12", title: "channels to plot", value: asked });
  const info = el("span", { class: "muted", id: "window-info" });
  const canvas = el("canvas", { id: "plot" });
  const plot = new HZPlot(canvas, (start, stop, width) => {
    const params = { path: state.path, width };
    if (start !== null && start !== undefined) Object.assign(params, { start, stop });
    if (channels.value.trim()) params.channels = channels.value.trim();
    return getJSON("series", params).then((data) => { showError(null); return data; }, (error) => { showError(error); throw error; });
  });
  const replot = () => plot.load(plot.view ? plot.view[0] : null, plot.view ? plot.view[1] : null);
  // a probe of more channels than plotted: the minimap of all of them chooses which (kept in the URL)
  const minimap = probeMinimap((chosen) => {
    channels.value = channelText(chosen);
    history.replaceState(null, "", "#node=" + encodeURIComponent(state.path) + "&view=series&channels=" + channels.value);
    replot();
  });
  plot.onDrawn = (data, view) => {
    info.textContent = `${view[0].toPrecision(6)}–${view[1].toPrecision(6)} s · samples ${data.first}–${data.last} of ${data.samples} · ` +
      `${data.channel_count} channel(s) · ${data.decimation === "none" ? "all samples" : data.decimation + " per pixel"}`;
    if (!channels.value) channels.placeholder = data.channels.length < data.channel_count ? `${data.channels[0]}-${data.channels[data.channels.length - 1]} of 0-${data.channel_count - 1}` : "all";
    if (data.channel_count > DEFAULT_LANES) minimap.update(view, data.channels);
  };
  state.plot = plot;
  const button = (label, title, fn) => el("button", { title, onclick: fn }, label);
  pane.append(el("div", { class: "controls" },
    button("◀", "pan left", () => plot.pan(-0.5)), button("▶", "pan right", () => plot.pan(0.5)),
    button("+", "zoom in", () => plot.zoom(0.5)), button("−", "zoom out", () => plot.zoom(2)),
    button("all", "the whole series", () => plot.all()),
    el("label", {}, "channels ", channels), button("plot", "plot these channels", replot),
    info), minimap.box, canvas, el("p", { class: "muted" }, "wheel: zoom · drag: pan"));
  // at once: the canvas is laid out (clientWidth forces it); waiting for an animation frame left the plot
  // unloaded in a tab in the background, and in headless Chromium on a busy machine
  plot.load(null, null);
}

// channel numbers as the channels field writes them: runs as ranges ("0-7,12")
function channelText(chosen) {
  const sorted = [...chosen].sort((a, b) => a - b), parts = [];
  for (let i = 0; i < sorted.length; i++) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    parts.push(j > i ? `${sorted[i]}-${sorted[j]}` : String(sorted[i]));
    i = j;
  }
  return parts.join(",");
}

// ---- images --------------------------------------------------------------------------------------------
async function renderImage(pane) {
  let info;
  try { info = await getJSON("image", { path: state.path }); } catch (error) { showError(error); return; }
  const img = el("img", { id: "frame", alt: "frame of " + state.path });
  const label = el("span", { class: "muted", id: "frame-label" });
  const look = pictureControls(() => show(current));
  let current = 0;
  const show = (i) => {
    current = i;
    img.src = api("frame", Object.assign({ path: state.path, index: i }, look.params()));
    label.textContent = `frame ${i + 1} of ${info.frames}` + (info.names ? " · " + info.names[i] : "") + frameTime(info, i);
  };
  img.addEventListener("error", () => fetch(img.src).then((r) => r.json()).then(showError, () => {}));
  img.addEventListener("load", () => { img.dataset.loaded = "1"; img.width = Math.max(256, img.naturalWidth); });
  const controls = el("div", { class: "controls" }, label);
  if (info.frames > 1) {
    const slider = el("input", { type: "range", min: "0", max: String(info.frames - 1), value: "0", id: "frame-slider" });
    slider.addEventListener("input", () => show(Number(slider.value)));
    controls.prepend(el("label", {}, "frame ", slider));
  }
  if (info.kind === "segmentation") controls.append(info.background ? " · masks over " + info.background : " · masks (the file has no mean image to draw them over)");
  pane.append(controls, look.box, img);
  show(0);
  if (info.kind === "segmentation") renderRoiTraces(pane, img);
}

// the time of frame i: from the series' rate, or its timestamps (the first ones are sent)
function frameTime(info, i) {
  if (info.times && i < info.times.length) return ` · ${fmt(info.times[i])} s`;
  if (info.rate) return ` · ${fmt(info.starting_time + i / info.rate)} s`;
  return "";
}

// contrast (the percentiles shown as the ends of the colour map), the colour map and its colour bar
function pictureControls(onChange) {
  const low = el("input", { type: "number", id: "contrast-low", min: "0", max: "100", step: "0.5", value: "0.5", title: "percentile shown as the lowest colour" });
  const high = el("input", { type: "number", id: "contrast-high", min: "0", max: "100", step: "0.5", value: "99.5", title: "percentile shown as the highest colour" });
  const colours = el("select", { id: "colours" }, ["gray", "viridis", "magma"].map((c) => el("option", { value: c }, c)));
  const bar = el("canvas", { id: "colour-bar", width: "160", height: "12" });
  const paint = () => {
    const g = bar.getContext("2d"), stops = COLOUR_STOPS[colours.value];
    for (let i = 0; i < 160; i++) { g.fillStyle = stops ? mixStops(stops, i / 159) : `rgb(${Math.round(i * 255 / 159)},${Math.round(i * 255 / 159)},${Math.round(i * 255 / 159)})`; g.fillRect(i, 0, 1, 12); }
    bar.dataset.colours = colours.value;
  };
  for (const input of [low, high, colours]) input.addEventListener("change", () => { paint(); onChange(); });
  paint();
  const box = el("div", { class: "controls" }, el("label", {}, "contrast ", low, "–", high, " percentile"), el("label", {}, " colours ", colours), bar);
  const params = () => ({ low: low.value || "0.5", high: high.value || "99.5", colours: colours.value });
  return { box, params };
}

const COLOUR_STOPS = {
  viridis: [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]],
  magma: [[0, 0, 4], [81, 18, 124], [183, 55, 121], [252, 137, 97], [252, 253, 191]],
};

// the colour at `f` (0 to 1) between the stops, as [r, g, b]; mixStops: as CSS
function mixed(stops, f) {
  const at = Math.min(stops.length - 1.001, Math.max(0, f || 0) * (stops.length - 1)), i = Math.floor(at), k = at - i;
  return stops[i].map((v, j) => Math.round(v + (stops[i + 1][j] - v) * k));
}

function mixStops(stops, f) {
  const mix = mixed(stops, f);
  return `rgb(${mix[0]},${mix[1]},${mix[2]})`;
}

// ---- start ---------------------------------------------------------------------------------------------
async function start() {
  let found;
  try { found = await getJSON("tree"); } catch (error) { showError(error); return; }
  document.getElementById("location").textContent = found.location;
  document.title = "hdmf-zarr3 view · " + found.location;
  const tree = document.getElementById("tree");
  const search = el("input", { type: "search", id: "tree-filter", placeholder: "filter by name or type…" });
  search.value = new URLSearchParams(location.hash.slice(1)).get("find") || "";
  const holder = el("div", { id: "tree-nodes" });
  const show = () => {
    const shown = filtered(found.root, search.value.trim().toLowerCase());
    holder.replaceChildren(shown ? treeNode(shown) : el("p", { class: "muted" }, "no node matches"));
    tree.dataset.nodes = String(holder.querySelectorAll("[data-path]").length);
    if (search.value.trim()) holder.querySelectorAll("details").forEach((d) => { d.open = true; });
    highlight(state.path);
  };
  search.addEventListener("input", show);
  tree.replaceChildren(search, holder);
  show();
  window.addEventListener("hashchange", route);
  window.addEventListener("resize", () => state.plot && state.plot.draw());
  await route();
}

start();
