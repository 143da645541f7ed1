import { describe, expect, it } from 'vitest';
import { formatDuration, ProgressBar, type ProgressStream, progressLine } from './progress.js';

/** A stream that records what is written. */
function recorder(isTTY: boolean): ProgressStream & { text: string } {
  const r = {
    isTTY,
    columns: 0,
    text: '',
    write(s: string): boolean {
      r.text += s;
      return true;
    },
  };
  return r;
}

describe('the progress bar', () => {
  it('shows done/total, percent and an ETA from the mean time per run', () => {
    expect(progressLine('sweep', 3, 12, 6, 12)).toBe('sweep [###---------] 3/12 25% ETA 0:18');
    expect(progressLine('sweep', 0, 12, 0, 12)).toBe('sweep [------------] 0/12 0% ETA --:--');
    expect(formatDuration(3725)).toBe('1:02:05');
  });

  it('draws in place on a TTY and clears the line when done', () => {
    const tty = recorder(true);
    const bar = new ProgressBar('sweep', tty);
    bar.update(4, 4);
    bar.done();
    expect(tty.text).toBe(`\rsweep [${'#'.repeat(24)}] 4/4 100% ETA 0:00\u001b[K\r\u001b[K`);
  });

  it('stays quiet when the stream is not a TTY', () => {
    const pipe = recorder(false);
    const bar = new ProgressBar('sweep', pipe);
    bar.update(1, 2);
    bar.update(2, 2);
    bar.done();
    expect(pipe.text).toBe('');
  });
});
