import { describe, expect, it } from 'vitest';
import {
  formatDuration,
  ProgressBar,
  type ProgressStream,
  plainProgressLine,
  progressLine,
} from './progress.js';

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

  it('prints a plain line every few seconds when the stream is not a TTY (a CI log)', () => {
    const pipe = recorder(false);
    let t = 0;
    const bar = new ProgressBar('sweep', pipe, { now: () => t });
    t = 1000;
    bar.update(1, 12); // too soon: nothing
    t = 6000;
    bar.update(3, 12);
    t = 8000;
    bar.update(4, 12); // within 5 s of the last line: nothing
    t = 12_000;
    bar.update(6, 12, '3 in flight');
    bar.done();
    expect(pipe.text).toBe(
      'sweep: 3/12 (25%), elapsed 0:06, ETA 0:18\nsweep: 6/12 (50%), elapsed 0:12, ETA 0:12, 3 in flight\n',
    );
    expect(plainProgressLine('load', 12, 60, 12, ' s')).toBe('load: 12/60 s (20%), elapsed 0:12, ETA 0:48');
  });

  it('stays quiet off a TTY when plain lines are turned off', () => {
    const pipe = recorder(false);
    let t = 0;
    const bar = new ProgressBar('sweep', pipe, { now: () => t, plainEveryMs: 0 });
    t = 60_000;
    bar.update(1, 2);
    bar.done();
    expect(pipe.text).toBe('');
  });
});
