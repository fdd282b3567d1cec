// charts.js — the console's two charts, drawn as SVG with no library: a line chart of
// rates over time (consumed capacity, throttle events) and a heat map of keys by time
// (contributor insights' periods). Labels are text nodes, as every value on the page.
// It knows nothing of DynamoDB; it is handed numbers.

const NS = 'http://www.w3.org/2000/svg';

function svg(tag, attrs, text) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = String(text);
  return e;
}

function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

function clock(t) {
  return new Date(t * 1000).toISOString().slice(11, 19);
}

export const SERIES_COLOURS = ['#2b6cb0', '#c05621', '#2f855a', '#9b2c2c', '#6b46c1', '#b7791f', '#2c7a7b', '#97266d'];

// series: [{name, points: [[epochSeconds, value], ...], dashed}]; a chart titled title
// with the unit on its axis.
export function lineChart(title, unit, series, { width = 500, height = 200 } = {}) {
  const legendRows = Math.ceil(series.length / 3);
  height += 14 * Math.max(0, legendRows - 1);
  const pad = { l: 56, r: 16, t: 24, b: 20 + 14 * legendRows };
  const root = svg('svg', { class: 'chart', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img' });
  root.appendChild(svg('title', {}, title));
  root.appendChild(svg('text', { x: pad.l, y: 15, class: 'ctitle' }, title));
  const all = series.flatMap((s) => s.points);
  const w = width - pad.l - pad.r, h = height - pad.t - pad.b;
  let t0 = Math.min(...all.map((p) => p[0])), t1 = Math.max(...all.map((p) => p[0]));
  if (!all.length) {
    root.appendChild(svg('text', { x: pad.l + w / 2, y: pad.t + h / 2, class: 'cempty', 'text-anchor': 'middle' }, 'no samples yet'));
    return root;
  }
  if (t1 - t0 < 1) t1 = t0 + 1;
  const top = Math.max(...all.map((p) => p[1]));
  root.dataset.max = String(top);
  root.dataset.points = String(Math.max(...series.map((x) => x.points.length)));
  const vmax = niceMax(top);
  const x = (t) => pad.l + ((t - t0) / (t1 - t0)) * w;
  const y = (v) => pad.t + h - (v / vmax) * h;
  for (let i = 0; i <= 4; i++) {
    const v = (vmax * i) / 4;
    root.appendChild(svg('line', { x1: pad.l, x2: pad.l + w, y1: y(v), y2: y(v), class: 'grid' }));
    root.appendChild(svg('text', { x: pad.l - 4, y: y(v) + 4, 'text-anchor': 'end', class: 'axis' },
      Number.isInteger(v) ? v : v.toFixed(2)));
  }
  root.appendChild(svg('text', { x: 4, y: pad.t - 8, class: 'axis' }, unit));
  const ticks = [[t0, 'start'], [(t0 + t1) / 2, 'middle'], [t1, 'end']];
  for (const [t, anchor] of ticks)
    root.appendChild(svg('text', { x: x(t), y: pad.t + h + 14, 'text-anchor': anchor, class: 'axis' }, clock(t)));
  series.forEach((s, i) => {
    if (!s.points.length) return;
    const colour = SERIES_COLOURS[i % SERIES_COLOURS.length];
    const d = s.points.map((p, j) => `${j ? 'L' : 'M'}${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join('');
    root.appendChild(svg('path', { d, fill: 'none', stroke: colour, 'stroke-width': 1.8, 'stroke-dasharray': s.dashed ? '5,4' : 'none', class: 'series' }));
    for (const p of s.points)
      root.appendChild(svg('circle', { cx: x(p[0]).toFixed(1), cy: y(p[1]).toFixed(1), r: 2, fill: colour }));
    const lx = pad.l + (i % 3) * (w / 3);
    const ly = pad.t + h + 30 + 14 * Math.floor(i / 3);
    root.appendChild(svg('rect', { x: lx, y: ly - 8, width: 10, height: 4, fill: colour }));
    root.appendChild(svg('text', { x: lx + 14, y: ly - 3, class: 'legendtext' }, s.name));
  });
  return root;
}

// rows: [{label, values: [number per column]}]; columns: epoch seconds of each period.
// Each cell's shade is its value against the largest; its title says the figure.
export function heatMap(title, rows, columns, { cell = 18, labelWidth = 220 } = {}) {
  const width = labelWidth + Math.max(columns.length, 1) * cell + 12;
  const height = 28 + rows.length * cell + 22;
  const root = svg('svg', { class: 'heatmap', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img' });
  root.appendChild(svg('title', {}, title));
  root.appendChild(svg('text', { x: 0, y: 14, class: 'ctitle' }, title));
  const max = Math.max(1, ...rows.flatMap((r) => r.values));
  rows.forEach((r, i) => {
    const y = 24 + i * cell;
    const label = r.label.length > 32 ? r.label.slice(0, 31) + '…' : r.label;
    const t = svg('text', { x: labelWidth - 6, y: y + cell - 5, 'text-anchor': 'end', class: 'hlabel' }, label);
    t.appendChild(svg('title', {}, r.label));
    root.appendChild(t);
    r.values.forEach((v, j) => {
      const shade = v > 0 ? 0.12 + 0.88 * (v / max) : 0;
      const rect = svg('rect', {
        x: labelWidth + j * cell, y, width: cell - 2, height: cell - 2,
        fill: v > 0 ? `rgba(197, 48, 48, ${shade.toFixed(3)})` : '#f1f1f1', class: 'hcell',
      });
      rect.appendChild(svg('title', {}, `${r.label} at ${clock(columns[j])}: ${v}`));
      root.appendChild(rect);
    });
  });
  if (columns.length) {
    const yb = 24 + rows.length * cell + 14;
    root.appendChild(svg('text', { x: labelWidth, y: yb, class: 'axis' }, clock(columns[0])));
    root.appendChild(svg('text', { x: labelWidth + columns.length * cell, y: yb, 'text-anchor': 'end', class: 'axis' },
      clock(columns[columns.length - 1])));
  }
  return root;
}
