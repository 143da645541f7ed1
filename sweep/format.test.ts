import { describe, expect, it } from 'vitest';
import { showFigure, table } from './format.js';

describe('the sweep text table', () => {
  it('shows shed rate and goodput share as percentages, as the run summary and the report do', () => {
    expect(showFigure('shed_rate', 0.023)).toBe('2.3%');
    expect(showFigure('goodput_share', 0.929)).toBe('92.9%');
    expect(showFigure('ttft_p95_ms', 733.493)).toBe('733.493');
    expect(showFigure('shed_rate', undefined)).toBe('-');
  });

  it('lines up columns two spaces apart with no trailing spaces', () => {
    expect(
      table(
        ['rank', 'x'],
        [
          ['1', 'long value'],
          ['10', ''],
        ],
      ),
    ).toBe('rank  x\n1     long value\n10');
  });
});
