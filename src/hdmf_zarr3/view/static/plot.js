// hdmf-zarr3 view: a <canvas> plot of a TimeSeries window, with pan and zoom (wheel, drag, buttons).
// The server decimates: each channel comes as min and max per pixel column (or raw samples when few).
"use strict";

const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"];

class HZPlot {
  // canvas: the <canvas>; fetchWindow(start, stop, width) -> Promise of the server's window JSON
  constructor(canvas, fetchWindow) {
    this.canvas = canvas;
    this.fetchWindow = fetchWindow;
    this.data = null;
    this.view = null; // [t0, t1] shown
    this.extent = null; // [first, last] time of the whole series
    this.sequence = 0;
    this.timer = null;
    this.drag = null;
    canvas.addEventListener("wheel", (e) => this.onWheel(e), { passive: false });
    canvas.addEventListener("mousedown", (e) => this.onDown(e));
    window.addEventListener("mousemove", (e) => this.onMove(e));
    window.addEventListener("mouseup", () => this.onUp());
  }

  // left: the lanes' names (an electrode's id, group and location); right: the scale bar
  margins() { return { left: 130, right: 86, top: 18, bottom: 28 }; }

  plotWidth() {
    const m = this.margins();
    return Math.max(10, Math.round(this.canvas.clientWidth - m.left - m.right));
  }

  // first window: what the server chooses (start/stop null)
  load(start, stop) {
    this.request(start, stop, true);
  }

  request(start, stop, now) {
    clearTimeout(this.timer);
    const go = () => {
      const sequence = ++this.sequence;
      this.canvas.dataset.state = "loading";
      this.fetchWindow(start, stop, this.plotWidth()).then((data) => {
        if (sequence !== this.sequence) return; // a newer window was asked for
        this.data = data;
        // the plot grows with its lanes (at least 26 px each), and the page scrolls: 64 channels stay readable
        this.canvas.style.height = Math.max(440, 40 + 26 * data.channels.length) + "px";
        // times the file leaves out (NaN, infinities) come as null: no extent then, and gaps in the plot
        this.extent = data.extent && data.extent.every((v) => v !== null) ? data.extent : null;
        const t = data.t.filter((v) => v !== null);
        if (start === null || start === undefined) {
          this.view = t.length ? [t[0], t[t.length - 1]] : [0, 1];
        } else {
          this.view = [start, stop];
        }
        if (this.view[1] <= this.view[0]) this.view[1] = this.view[0] + 1e-9;
        this.draw();
      }, () => { this.canvas.dataset.state = "error"; });
    };
    if (now) go(); else this.timer = setTimeout(go, 120);
  }

  // zoom by factor around time `center` (factor < 1: in)
  zoom(factor, center) {
    if (!this.view) return;
    const [t0, t1] = this.view;
    const c = center === undefined ? (t0 + t1) / 2 : center;
    let a = c - (c - t0) * factor, b = c + (t1 - c) * factor;
    [a, b] = this.clamp(a, b);
    this.view = [a, b];
    this.draw();
    this.request(a, b, false);
  }

  pan(fraction) {
    if (!this.view) return;
    const [t0, t1] = this.view;
    const d = (t1 - t0) * fraction;
    const [a, b] = this.clamp(t0 + d, t1 + d);
    this.view = [a, b];
    this.draw();
    this.request(a, b, false);
  }

  all() {
    if (!this.extent) return;
    this.view = [this.extent[0], this.extent[1]];
    this.request(this.extent[0], this.extent[1], true);
  }

  clamp(a, b) {
    if (!this.extent) return [a, b];
    const [lo, hi] = this.extent;
    const span = Math.min(b - a, Math.max(hi - lo, 1e-9));
    if (a < lo) { a = lo; b = lo + span; }
    if (b > hi) { b = hi; a = hi - span; }
    return [a, b];
  }

  timeAt(clientX) {
    const rect = this.canvas.getBoundingClientRect();
    const m = this.margins();
    const x = (clientX - rect.left - m.left) / this.plotWidth();
    return this.view[0] + x * (this.view[1] - this.view[0]);
  }

  onWheel(e) {
    if (!this.view) return;
    e.preventDefault();
    this.zoom(e.deltaY > 0 ? 1.25 : 0.8, this.timeAt(e.clientX));
  }

  onDown(e) {
    if (!this.view) return;
    this.drag = { x: e.clientX, view: this.view.slice() };
    this.canvas.classList.add("dragging");
  }

  onMove(e) {
    if (!this.drag) return;
    const dt = ((this.drag.x - e.clientX) / this.plotWidth()) * (this.drag.view[1] - this.drag.view[0]);
    this.view = this.clamp(this.drag.view[0] + dt, this.drag.view[1] + dt);
    this.draw();
  }

  onUp() {
    if (!this.drag) return;
    this.drag = null;
    this.canvas.classList.remove("dragging");
    this.request(this.view[0], this.view[1], false);
  }

  draw() {
    const canvas = this.canvas, data = this.data;
    const ratio = window.devicePixelRatio || 1;
    const w = canvas.clientWidth, h = canvas.clientHeight;
    canvas.width = Math.round(w * ratio);
    canvas.height = Math.round(h * ratio);
    const g = canvas.getContext("2d");
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, w, h);
    g.font = "11px system-ui, sans-serif";
    if (!data || !this.view) return;
    const m = this.margins(), pw = this.plotWidth(), ph = h - m.top - m.bottom;
    const [t0, t1] = this.view;
    const frame = { g, m, pw, ph, x: (t) => m.left + ((t - t0) / (t1 - t0)) * pw };
    const bands = this.drawBands(frame, data.intervals || []);
    // one amplitude scale for every lane (a scale bar means the same in each): the largest peak-to-peak
    const ranges = data.channels.map((_, c) => laneRange(data.min[c], data.max[c]));
    const span = Math.max(...ranges.map(([lo, hi]) => hi - lo), 0) || 1;
    const unit = prefixed(data.unit, span);
    let points = 0;
    for (let c = 0; c < data.channels.length; c++) points += this.drawLane(frame, data, c, ranges[c], span, unit);
    this.drawTimeAxis(frame, t0, t1);
    const scale = this.drawScaleBar(frame, span, unit, data.channels.length);
    canvas.dataset.points = String(points);
    canvas.dataset.decimation = data.decimation;
    canvas.dataset.window = t0 + " " + t1;
    canvas.dataset.lanes = data.channels.map((ch, c) => laneName(data, c)).join("|");
    canvas.dataset.scale = scale;
    canvas.dataset.bands = String(bands);
    canvas.dataset.state = "drawn";
    if (this.onDrawn) this.onDrawn(data, this.view);
  }

  // the file's intervals (trials, epochs...) as shaded bands behind the lanes, a legend at the top right
  drawBands({ g, m, pw, ph, x }, tables) {
    let drawn = 0, legend = m.left + pw;
    g.textAlign = "right";
    tables.forEach((table, i) => {
      if (!table.bands.length) return;
      const color = BAND_COLORS[i % BAND_COLORS.length];
      g.fillStyle = color;
      g.globalAlpha = 0.13;
      for (const [a, b] of table.bands) {
        const left = Math.max(m.left, x(a)), right = Math.min(m.left + pw, x(b));
        if (right > left) { g.fillRect(left, m.top, Math.max(1, right - left), ph); drawn++; }
      }
      g.globalAlpha = 1;
      g.fillText(table.name, legend, m.top - 4);
      legend -= g.measureText(table.name).width + 10;
    });
    return drawn;
  }

  drawLane({ g, m, pw, ph, x }, data, c, [lo, hi], span, unit) {
    const lanes = data.channels.length, lane = ph / Math.max(lanes, 1), low = data.min[c], high = data.max[c];
    const top = m.top + c * lane, pad = lane * 0.08, center = (lo + hi) / 2;
    const y = (v) => top + lane / 2 - ((v - center) / span) * (lane - 2 * pad);
    const color = COLORS[c % COLORS.length];
    g.strokeStyle = color;
    g.fillStyle = color;
    g.lineWidth = 1;
    let points = 0;
    for (const r of runsOf(data, low, high)) {
      g.beginPath();
      if (data.decimation === "none") {
        r.forEach((i, j) => (j ? g.lineTo(x(data.t[i]), y(low[i])) : g.moveTo(x(data.t[i]), y(low[i]))));
        g.stroke();
        points += r.length;
      } else {
        // the envelope: the maxima left to right, the minima back; each column at least a pixel tall
        r.forEach((i, j) => (j ? g.lineTo(x(data.t[i]), y(high[i]) - 0.5) : g.moveTo(x(data.t[i]), y(high[i]) - 0.5)));
        for (let j = r.length - 1; j >= 0; j--) g.lineTo(x(data.t[r[j]]), y(low[r[j]]) + 0.5);
        g.closePath();
        g.globalAlpha = 0.55;
        g.fill();
        g.globalAlpha = 1;
        g.stroke();
        points += 2 * r.length;
      }
    }
    g.fillStyle = "#444";
    g.textAlign = "right";
    if (lane >= 11 || c % Math.ceil(11 / lane) === 0) g.fillText(laneName(data, c), m.left - 6, top + lane / 2 + 4);
    g.strokeStyle = "#eee";
    g.beginPath(); g.moveTo(m.left, top + lane); g.lineTo(m.left + pw, top + lane); g.stroke();
    return points;
  }

  drawTimeAxis({ g, m, pw, ph, x }, t0, t1) {
    g.strokeStyle = "#999";
    g.fillStyle = "#444";
    g.textAlign = "center";
    g.beginPath(); g.moveTo(m.left, m.top + ph); g.lineTo(m.left + pw, m.top + ph); g.stroke();
    const step = niceStep((t1 - t0) / 8);
    for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
      g.beginPath(); g.moveTo(x(t), m.top + ph); g.lineTo(x(t), m.top + ph + 4); g.stroke();
      g.fillText(fmt(t) + " s", x(t), m.top + ph + 16);
    }
  }

  // a vertical bar of a round amplitude at the right, in the unit's natural prefix (97 µV, not 9.7e-5 V)
  drawScaleBar({ g, m, pw, ph }, span, unit, lanes) {
    const lane = ph / Math.max(lanes, 1), usable = lane * 0.84;
    const value = niceStep(span / 2), length = (value / span) * usable;
    const left = m.left + pw + 10, bottom = m.top + ph - 4;
    g.strokeStyle = "#222";
    g.lineWidth = 2;
    g.beginPath(); g.moveTo(left, bottom); g.lineTo(left, bottom - length); g.stroke();
    g.lineWidth = 1;
    const label = fmt(value * unit.factor) + (unit.label ? " " + unit.label : "");
    g.fillStyle = "#222";
    g.textAlign = "left";
    g.fillText(label, left + 5, bottom - length / 2 + 4);
    return label;
  }
}

const BAND_COLORS = ["#e69f00", "#56b4e9", "#009e73", "#cc79a7", "#0072b2"];

function laneName(data, c) {
  return data.labels ? data.labels[c] : "ch " + data.channels[c];
}

function laneRange(low, high) {
  let lo = Infinity, hi = -Infinity;
  for (let i = 0; i < low.length; i++) {
    if (low[i] !== null && low[i] < lo) lo = low[i];
    if (high[i] !== null && high[i] > hi) hi = high[i];
  }
  if (!isFinite(lo)) return [0, 1];
  return hi === lo ? [lo - 1, hi + 1] : [lo, hi];
}

// runs of consecutive values (a null, i.e. no finite value, breaks the line)
function runsOf(data, low, high) {
  const runs = [];
  let run = [];
  for (let i = 0; i < data.t.length; i++) {
    if (low[i] === null || high[i] === null || data.t[i] === null) { if (run.length) runs.push(run); run = []; continue; }
    run.push(i);
  }
  if (run.length) runs.push(run);
  return runs;
}

// the SI prefix that writes a span of `unit` with a leading digit (volts: V, mV, µV, nV)
function prefixed(unit, span) {
  const base = { volts: "V", volt: "V", V: "V", amperes: "A", amps: "A", A: "A", meters: "m", m: "m", seconds: "s", s: "s" }[unit];
  if (!base) return { factor: 1, label: unit || "" };
  for (const [factor, prefix] of [[1, ""], [1e3, "m"], [1e6, "µ"], [1e9, "n"]]) {
    if (span * factor >= 1) return { factor, label: prefix + base };
  }
  return { factor: 1e12, label: "p" + base };
}

function niceStep(raw) {
  if (!(raw > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const f = raw / p;
  return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

function fmt(v) {
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a >= 1e5 || a < 1e-3) return v.toExponential(2);
  return String(Number(v.toPrecision(5)));
}

window.HZPlot = HZPlot;
