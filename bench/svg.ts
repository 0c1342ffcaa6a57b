/** Small, dependency-free SVG charts for BENCHMARKS.md (grouped bars and lines over categories). */

export interface Series {
  name: string;
  values: number[];
}

const COLORS = ['#2563eb', '#9ca3af', '#16a34a', '#dc2626', '#9333ea'];
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Grouped bars: one group per category, one bar per series. */
export function barChart(opts: {
  title: string;
  categories: string[];
  series: Series[];
  yMax?: number;
  yLabel?: string;
  format?: (n: number) => string;
}): string {
  const W = 640;
  const H = 320;
  const m = { l: 56, r: 16, t: 40, b: 56 };
  const fmt = opts.format ?? ((n: number) => String(Math.round(n * 100) / 100));
  const yMax = opts.yMax ?? Math.max(1e-9, ...opts.series.flatMap((s) => s.values)) * 1.1;
  const pw = W - m.l - m.r;
  const ph = H - m.t - m.b;
  const gw = pw / opts.categories.length;
  const bw = (gw * 0.7) / opts.series.length;
  const y = (v: number) => m.t + ph - (v / yMax) * ph;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="14" font-weight="bold">${esc(opts.title)}</text>`,
  ];
  for (let i = 0; i <= 4; i++) {
    const v = (yMax * i) / 4;
    parts.push(
      `<line x1="${m.l}" x2="${W - m.r}" y1="${y(v)}" y2="${y(v)}" stroke="#e5e7eb"/>`,
      `<text x="${m.l - 6}" y="${y(v) + 4}" text-anchor="end" fill="#374151">${esc(fmt(v))}</text>`,
    );
  }
  if (opts.yLabel)
    parts.push(
      `<text x="14" y="${m.t + ph / 2}" transform="rotate(-90 14 ${m.t + ph / 2})" text-anchor="middle" fill="#374151">${esc(opts.yLabel)}</text>`,
    );
  opts.categories.forEach((c, ci) => {
    const gx = m.l + ci * gw + gw * 0.15;
    opts.series.forEach((s, si) => {
      const v = s.values[ci] ?? 0;
      const x = gx + si * bw;
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${y(v).toFixed(1)}" width="${(bw - 2).toFixed(1)}" height="${(m.t + ph - y(v)).toFixed(1)}" fill="${COLORS[si % COLORS.length]}"><title>${esc(`${s.name} ${c}: ${fmt(v)}`)}</title></rect>`,
      );
      parts.push(
        `<text x="${(x + bw / 2 - 1).toFixed(1)}" y="${(y(v) - 4).toFixed(1)}" text-anchor="middle" font-size="10" fill="#111827">${esc(fmt(v))}</text>`,
      );
    });
    parts.push(
      `<text x="${(m.l + ci * gw + gw / 2).toFixed(1)}" y="${H - m.b + 18}" text-anchor="middle" fill="#111827">${esc(c)}</text>`,
    );
  });
  opts.series.forEach((s, si) => {
    const lx = m.l + si * 200;
    parts.push(
      `<rect x="${lx}" y="${H - 22}" width="12" height="12" fill="${COLORS[si % COLORS.length]}"/>`,
      `<text x="${lx + 18}" y="${H - 12}" fill="#111827">${esc(s.name)}</text>`,
    );
  });
  parts.push('</svg>');
  return parts.join('\n');
}
