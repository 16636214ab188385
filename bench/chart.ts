/**
 * A hand-written SVG chart (no dependency) of durable orders/s and p99
 * latency against the number of connections, for bench/throughput.svg.
 * Connections go on a log2 axis; orders/s (left axis) is a solid line
 * through the mean of the runs, p99 (right axis) a dashed one; every run is
 * a small dot, so the spread between runs is visible. Optional horizontal
 * lines mark targets and the load generator's ceiling.
 */

export interface ChartPoint {
  connections: number;
  ordersPerS: number;
  p99Ms: number;
}

export interface ChartOptions {
  title: string;
  subtitle?: string;
  /** Dotted reference line on the orders/s axis, e.g. the target. */
  targetOrdersPerS?: number;
  /** Dotted reference line on the p99 axis. */
  targetP99Ms?: number;
  width?: number;
  height?: number;
}

const ORDERS_COLOUR = '#1f6feb';
const P99_COLOUR = '#d9480f';
const GRID = '#e5e7eb';
const TEXT = '#24292f';
const MUTED = '#6e7781';

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** The smallest 1, 2, 2.5 or 5 × 10^k at least `rough`. */
export function niceStep(rough: number): number {
  if (!(rough > 0)) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  return [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= rough - 1e-12) ?? 10 * magnitude;
}

/** A "nice" axis: 0 … max in about targetSteps steps of 1, 2, 2.5 or 5 × 10^k. */
export function niceAxis(maxValue: number, targetSteps = 5): { max: number; step: number } {
  if (!(maxValue > 0)) return { max: 1, step: 0.2 };
  const step = niceStep(maxValue / targetSteps);
  return { max: Math.ceil(maxValue / step - 1e-9) * step, step };
}

function label(n: number): string {
  if (n >= 1000) return `${Number((n / 1000).toFixed(1)).toLocaleString('en-US')}k`;
  return Number(n.toFixed(2)).toString();
}

function mean(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
}

export function throughputSvg(points: ChartPoint[], options: ChartOptions): string {
  const width = options.width ?? 720;
  const height = options.height ?? 420;
  const margin = { left: 72, right: 72, top: options.subtitle === undefined ? 52 : 70, bottom: 78 };
  const plotW = width - margin.left - margin.right;
  const plotH = height - margin.top - margin.bottom;
  const xs = [...new Set(points.map((p) => p.connections))].sort((a, b) => a - b);
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="-apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${width / 2}" y="24" text-anchor="middle" font-size="15" font-weight="600" fill="${TEXT}">${escape(options.title)}</text>`,
  );
  if (options.subtitle !== undefined) {
    out.push(`<text x="${width / 2}" y="44" text-anchor="middle" fill="${MUTED}">${escape(options.subtitle)}</text>`);
  }
  if (xs.length === 0) {
    out.push(`<text x="${width / 2}" y="${height / 2}" text-anchor="middle" fill="${MUTED}">no data</text>`, '</svg>');
    return out.join('\n') + '\n';
  }

  const ordersAxis = niceAxis(Math.max(...points.map((p) => p.ordersPerS), options.targetOrdersPerS ?? 0) * 1.08);
  const lx = (c: number): number => {
    if (xs.length === 1) return margin.left + plotW / 2;
    const lo = Math.log2(xs[0]!);
    const hi = Math.log2(xs[xs.length - 1]!);
    return margin.left + 24 + ((Math.log2(c) - lo) / (hi - lo)) * (plotW - 48);
  };
  const yOrders = (v: number): number => margin.top + plotH - (v / ordersAxis.max) * plotH;
  const r = (n: number): string => n.toFixed(1);

  // Grid and left axis (orders/s).
  for (let v = 0; v <= ordersAxis.max + 1e-9; v += ordersAxis.step) {
    const y = yOrders(v);
    out.push(`<line x1="${margin.left}" y1="${r(y)}" x2="${margin.left + plotW}" y2="${r(y)}" stroke="${GRID}"/>`);
    out.push(`<text x="${margin.left - 8}" y="${r(y + 4)}" text-anchor="end" fill="${ORDERS_COLOUR}">${label(v)}</text>`);
  }
  // Right axis (p99 ms): as many steps as the left one, so the grid lines
  // serve both, each step a nice number.
  const steps = Math.round(ordersAxis.max / ordersAxis.step);
  const p99Step = niceStep((Math.max(...points.map((p) => p.p99Ms), options.targetP99Ms ?? 0) * 1.08) / steps);
  const p99Max = p99Step * steps;
  const yP = (v: number): number => margin.top + plotH - (v / p99Max) * plotH;
  for (let i = 0; i <= steps; i++) {
    const v = i * p99Step;
    out.push(`<text x="${margin.left + plotW + 8}" y="${r(yP(v) + 4)}" fill="${P99_COLOUR}">${label(v)}</text>`);
  }
  out.push(
    `<line x1="${margin.left}" y1="${margin.top}" x2="${margin.left}" y2="${margin.top + plotH}" stroke="${MUTED}"/>`,
    `<line x1="${margin.left + plotW}" y1="${margin.top}" x2="${margin.left + plotW}" y2="${margin.top + plotH}" stroke="${MUTED}"/>`,
    `<line x1="${margin.left}" y1="${margin.top + plotH}" x2="${margin.left + plotW}" y2="${margin.top + plotH}" stroke="${MUTED}"/>`,
    `<text transform="translate(18 ${margin.top + plotH / 2}) rotate(-90)" text-anchor="middle" fill="${ORDERS_COLOUR}">durable orders/s</text>`,
    `<text transform="translate(${width - 16} ${margin.top + plotH / 2}) rotate(90)" text-anchor="middle" fill="${P99_COLOUR}">p99 latency, ms</text>`,
  );
  // X axis: one tick per measured connection count.
  for (const c of xs) {
    const x = lx(c);
    out.push(`<line x1="${r(x)}" y1="${margin.top + plotH}" x2="${r(x)}" y2="${margin.top + plotH + 5}" stroke="${MUTED}"/>`);
    out.push(`<text x="${r(x)}" y="${margin.top + plotH + 19}" text-anchor="middle" fill="${TEXT}">${c}</text>`);
  }
  out.push(`<text x="${margin.left + plotW / 2}" y="${margin.top + plotH + 38}" text-anchor="middle" fill="${TEXT}">connections (log scale)</text>`);

  // Reference lines.
  if (options.targetOrdersPerS !== undefined) {
    const y = yOrders(options.targetOrdersPerS);
    out.push(`<line x1="${margin.left}" y1="${r(y)}" x2="${margin.left + plotW}" y2="${r(y)}" stroke="${ORDERS_COLOUR}" stroke-opacity="0.45" stroke-dasharray="2 4"/>`);
    out.push(`<text x="${margin.left + 6}" y="${r(y - 5)}" fill="${ORDERS_COLOUR}" fill-opacity="0.8">target ${label(options.targetOrdersPerS)}/s</text>`);
  }
  if (options.targetP99Ms !== undefined) {
    const y = yP(options.targetP99Ms);
    out.push(`<line x1="${margin.left}" y1="${r(y)}" x2="${margin.left + plotW}" y2="${r(y)}" stroke="${P99_COLOUR}" stroke-opacity="0.45" stroke-dasharray="2 4"/>`);
    out.push(`<text x="${margin.left + plotW - 6}" y="${r(y - 5)}" text-anchor="end" fill="${P99_COLOUR}" fill-opacity="0.8">p99 target ${label(options.targetP99Ms)} ms</text>`);
  }

  // Series: mean lines, run dots, value labels.
  const byX = xs.map((c) => {
    const runs = points.filter((p) => p.connections === c);
    return { c, runs, orders: mean(runs.map((p) => p.ordersPerS)), p99: mean(runs.map((p) => p.p99Ms)) };
  });
  const path = (y: (v: number) => number, pick: (g: (typeof byX)[number]) => number): string =>
    byX.map((g, i) => `${i === 0 ? 'M' : 'L'}${r(lx(g.c))} ${r(y(pick(g)))}`).join(' ');
  out.push(`<path d="${path(yOrders, (g) => g.orders)}" fill="none" stroke="${ORDERS_COLOUR}" stroke-width="2.5"/>`);
  out.push(`<path d="${path(yP, (g) => g.p99)}" fill="none" stroke="${P99_COLOUR}" stroke-width="2" stroke-dasharray="7 4"/>`);
  for (const g of byX) {
    const x = lx(g.c);
    for (const p of g.runs) {
      out.push(`<circle cx="${r(x)}" cy="${r(yOrders(p.ordersPerS))}" r="2.5" fill="${ORDERS_COLOUR}" fill-opacity="0.5"/>`);
      out.push(`<circle cx="${r(x)}" cy="${r(yP(p.p99Ms))}" r="2.5" fill="${P99_COLOUR}" fill-opacity="0.5"/>`);
    }
    out.push(`<circle cx="${r(x)}" cy="${r(yOrders(g.orders))}" r="4.5" fill="${ORDERS_COLOUR}"/>`);
    out.push(`<rect x="${r(x - 4)}" y="${r(yP(g.p99) - 4)}" width="8" height="8" fill="${P99_COLOUR}"/>`);
    out.push(`<text x="${r(x)}" y="${r(yOrders(g.orders) - 10)}" text-anchor="middle" fill="${ORDERS_COLOUR}" font-weight="600">${Math.round(g.orders).toLocaleString('en-US')}</text>`);
    out.push(`<text x="${r(x)}" y="${r(yP(g.p99) + 18)}" text-anchor="middle" fill="${P99_COLOUR}">${g.p99.toFixed(1)} ms</text>`);
  }

  // Legend.
  const ly = height - 18;
  const lx0 = margin.left;
  out.push(
    `<line x1="${lx0}" y1="${ly - 4}" x2="${lx0 + 26}" y2="${ly - 4}" stroke="${ORDERS_COLOUR}" stroke-width="2.5"/>`,
    `<circle cx="${lx0 + 13}" cy="${ly - 4}" r="4.5" fill="${ORDERS_COLOUR}"/>`,
    `<text x="${lx0 + 32}" y="${ly}" fill="${TEXT}">durable orders/s (mean; small dots: each run)</text>`,
    `<line x1="${lx0 + 330}" y1="${ly - 4}" x2="${lx0 + 356}" y2="${ly - 4}" stroke="${P99_COLOUR}" stroke-width="2" stroke-dasharray="7 4"/>`,
    `<rect x="${lx0 + 339}" y="${ly - 8}" width="8" height="8" fill="${P99_COLOUR}"/>`,
    `<text x="${lx0 + 362}" y="${ly}" fill="${TEXT}">p99 latency of orders, ms</text>`,
    '</svg>',
  );
  return out.join('\n') + '\n';
}
