// A small time-series chart on uPlot (served at /ui/vendor/uplot.js, global uPlot): keeps the
// last points, redraws on push, rebuilds when its series change, follows its container's width,
// and writes the latest plotted values on the container for tests and tooling.
import { h } from './dom.js';

const PALETTE = ['#2f5bd3', '#d9480f', '#2b8a3e', '#ae3ec9', '#e67700', '#0c8599', '#c2255c', '#5c940d'];
const KEEP = 90;

// title; unit (shown by the last value); dataKey: the data-last-* suffix for single-series
// charts (e.g. 'rps' gives data-last-rps); seriesKeys: per series, data-last-<key>.
export function timeChart({ title, format = (v) => String(v), seriesKeys = [] }) {
  const last = h('span', { class: 'last' });
  const plotBox = h('div', { class: 'plot' });
  const container = h('div', { class: 'chart' }, h('h4', {}, h('span', {}, title), last), plotBox);
  let labels = [];
  let times = [];
  let columns = [];
  let plot = null;

  function build() {
    plot?.destroy();
    plot = null;
    const width = Math.max(260, plotBox.clientWidth || 320);
    // Canvas strokes take no CSS variables: read the page's text colour once per build.
    const ink = getComputedStyle(container).color || '#666';
    const opts = {
      width,
      height: 130,
      legend: { show: false },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true }, y: { range: (u, min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [
        { stroke: ink, grid: { stroke: 'rgba(128,128,128,.15)' }, space: 60,
          values: (u, ticks) => ticks.map((t) => new Date(t * 1000).toTimeString().slice(0, 8)) },
        { stroke: ink, grid: { stroke: 'rgba(128,128,128,.15)' }, size: 56, values: (u, ticks) => ticks.map(format) },
      ],
      series: [{}, ...labels.map((label, i) => ({
        label, stroke: PALETTE[i % PALETTE.length], width: 1.6, points: { show: false }, spanGaps: true,
        value: (u, v) => (v === null || v === undefined ? '—' : format(v)),
      }))],
    };
    if (typeof globalThis.uPlot !== 'function') return;
    plot = new globalThis.uPlot(opts, [times, ...columns], plotBox);
  }

  // Only a real change of width redraws (a resize that feeds itself would loop).
  let lastWidth = 0;
  const resize = () => {
    const width = Math.max(260, plotBox.clientWidth);
    if (!plot || width === lastWidth) return;
    lastWidth = width;
    plot.setSize({ width, height: 130 });
  };
  const observer = new ResizeObserver(resize);
  observer.observe(plotBox);

  return {
    element: container,
    // t: unix seconds; values: { label: number|null } in the series' order.
    push(t, values) {
      const nextLabels = Object.keys(values);
      if (nextLabels.join('\u0000') !== labels.join('\u0000')) {
        // A series that appears starts with gaps; one that goes away is dropped.
        columns = nextLabels.map((l) => {
          const i = labels.indexOf(l);
          return i >= 0 ? columns[i] : times.map(() => null);
        });
        labels = nextLabels;
        plot?.destroy();
        plot = null;
      }
      times.push(t);
      labels.forEach((l, i) => columns[i].push(values[l]));
      if (times.length > KEEP) {
        times = times.slice(-KEEP);
        columns = columns.map((c) => c.slice(-KEEP));
      }
      if (!plot) build();
      else plot.setData([times, ...columns]);
      // The latest values, each in its series' colour (the chart has no legend).
      last.replaceChildren(...labels.map((l, i) => {
        const item = h('span', { class: 'series' }, labels.length > 1 ? `${l} ${format(values[l])}` : format(values[l]));
        if (labels.length > 1) item.style.color = PALETTE[i % PALETTE.length];
        return item;
      }));
      labels.forEach((l, i) => {
        const key = seriesKeys[i];
        if (key) container.dataset[key] = values[l] === null || values[l] === undefined ? '' : String(values[l]);
      });
    },
    setData(key, value) { container.dataset[key] = value; },
    destroy() { observer.disconnect(); plot?.destroy(); },
  };
}
