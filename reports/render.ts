/**
 * Server-side rendering: Vega-Lite → Vega → SVG (vega's headless view) →
 * PNG (resvg with the DejaVu fonts, no system font lookup), so the same spec
 * gives byte-identical files on every machine with fonts-dejavu-core.
 *
 * vega, vega-lite and resvg are loaded on first use (dynamic import), not
 * when the CLI starts: together they were most of the start-up of every
 * command, most of which draw nothing (BENCHMARKS.md, "Start-up").
 */
import { existsSync } from 'node:fs';
import { CHART_FONT } from './charts/theme.js';
import type { VegaLiteSpec } from './types.js';

/** The font files resvg is given (Debian's fonts-dejavu-core). */
export const FONT_FILES = [
  '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf',
  '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf',
] as const;

/** A rendered chart. */
export interface RenderedChart {
  svg: string;
  png: Buffer;
  /** SVG size in CSS pixels. */
  width: number;
  height: number;
}

/** Options of renderChart. */
export interface RenderOptions {
  /** PNG pixels per SVG pixel (default 2). */
  pngScale?: number;
}

/** The fonts are missing: the PNG would have no text. */
export class MissingFontError extends Error {
  constructor(readonly path: string) {
    super(`font file ${path} is missing (install fonts-dejavu-core); charts would render without text`);
    this.name = 'MissingFontError';
  }
}

/** Compiles Vega-Lite to a Vega spec (throws on an invalid spec). */
export async function toVega(spec: VegaLiteSpec): Promise<import('vega').Spec> {
  const { compile } = await import('vega-lite');
  return compile(spec).spec;
}

/** Renders a Vega-Lite spec to SVG text. */
export async function renderSvg(spec: VegaLiteSpec): Promise<string> {
  const vgSpec = await toVega(spec);
  const { parse, View } = await import('vega');
  const view = new View(parse(vgSpec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** Converts SVG text to PNG with the DejaVu fonts. */
export async function svgToPng(svg: string, scale = 2): Promise<Buffer> {
  for (const f of FONT_FILES) if (!existsSync(f)) throw new MissingFontError(f);
  const { Resvg } = await import('@resvg/resvg-js');
  const resvg = new Resvg(svg, {
    font: { fontFiles: [...FONT_FILES], loadSystemFonts: false, defaultFontFamily: CHART_FONT },
    fitTo: { mode: 'zoom', value: scale },
    background: 'white',
  });
  return resvg.render().asPng();
}

/** The width and height attributes of the outer `<svg>` element. */
export function svgSize(svg: string): { width: number; height: number } {
  const head = /<svg\b[^>]*>/.exec(svg)?.[0] ?? '';
  const attr = (name: string): number =>
    Number(new RegExp(`\\s${name}="([\\d.]+)"`).exec(head)?.[1] ?? Number.NaN);
  return { width: attr('width'), height: attr('height') };
}

/** Renders a Vega-Lite spec to SVG and PNG. */
export async function renderChart(spec: VegaLiteSpec, opts: RenderOptions = {}): Promise<RenderedChart> {
  const svg = await renderSvg(spec);
  const png = await svgToPng(svg, opts.pngScale ?? 2);
  return { svg, png, ...svgSize(svg) };
}
