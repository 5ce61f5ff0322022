// A stacked bar chart in SVG for totals over time buckets (the Usage screen): one bar per bucket,
// one colour per series, a legend below. Values are written on the container for tests.
import { h } from './dom.js';

const SVG = 'http://www.w3.org/2000/svg';
const PALETTE = ['#2f5bd3', '#d9480f', '#2b8a3e', '#ae3ec9', '#e67700', '#0c8599', '#c2255c', '#5c940d'];
const WIDTH = 640;
const HEIGHT = 160;
const LEFT = 56;
const BOTTOM = 20;

function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  el.append(...children);
  return el;
}

// title; starts: bucket starts (unix ms); series: names; value(name, start) → number;
// label(start) → axis text; format(number) → text; key: what the chart shows, for data-chart.
export function barChart({ title, starts, series, value, label, format, key }) {
  const totals = starts.map((t) => series.reduce((sum, s) => sum + (value(s, t) ?? 0), 0));
  const max = Math.max(0, ...totals);
  const plotW = WIDTH - LEFT;
  const plotH = HEIGHT - BOTTOM;
  const slot = plotW / Math.max(1, starts.length);
  const bar = Math.max(2, slot * 0.7);
  const chart = svg('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: 'bars', role: 'img', 'aria-label': title });
  chart.append(svg('line', { x1: LEFT, y1: plotH, x2: WIDTH, y2: plotH, class: 'axis' }));
  chart.append(svg('text', { x: LEFT - 6, y: 10, 'text-anchor': 'end', class: 'tick' }, format(max)));
  chart.append(svg('text', { x: LEFT - 6, y: plotH, 'text-anchor': 'end', class: 'tick' }, format(0)));
  const every = Math.max(1, Math.ceil(starts.length / 8));
  starts.forEach((t, i) => {
    let y = plotH;
    const x = LEFT + i * slot + (slot - bar) / 2;
    series.forEach((s, j) => {
      const v = value(s, t) ?? 0;
      if (!(v > 0) || !(max > 0)) return;
      const height = (v / max) * (plotH - 12);
      y -= height;
      const rect = svg('rect', { x, y, width: bar, height, fill: PALETTE[j % PALETTE.length] });
      rect.append(svg('title', {}, `${s} · ${label(t)}: ${format(v)}`));
      chart.append(rect);
    });
    if (i % every === 0) {
      chart.append(svg('text', { x: x + bar / 2, y: HEIGHT - 4, 'text-anchor': 'middle', class: 'tick' }, label(t)));
    }
  });
  const legend = h('div', { class: 'legend' }, series.map((s, j) => {
    const item = h('span', { class: 'series', dataset: { series: s } }, s);
    item.style.color = PALETTE[j % PALETTE.length];
    return item;
  }));
  const total = totals.reduce((a, b) => a + b, 0);
  return h('div', { class: 'chart bar-chart', dataset: { chart: key, total: String(total) } },
    h('h4', {}, h('span', {}, title), h('span', { class: 'last' }, format(total))), chart, legend);
}
