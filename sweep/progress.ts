/**
 * A one-line progress bar with an ETA, redrawn in place with `\r` on a TTY
 * and silent otherwise. Wall-clock time is used only here, for the display;
 * it never reaches a result.
 */

/** Where the bar is drawn. */
export interface ProgressStream {
  isTTY?: boolean;
  columns?: number;
  write(s: string): boolean;
}

/** `m:ss` or `h:mm:ss`. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

/** The bar's text for `done` of `total` after `elapsedS` seconds. */
export function progressLine(
  label: string,
  done: number,
  total: number,
  elapsedS: number,
  width = 24,
): string {
  const frac = total === 0 ? 1 : done / total;
  const filled = Math.round(frac * width);
  const eta = done === 0 ? '--:--' : formatDuration((elapsedS / done) * (total - done));
  return `${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total} ${Math.floor(frac * 100)}% ETA ${eta}`;
}

/** A progress bar on `stream` (stderr by default); does nothing unless the stream is a TTY. */
export class ProgressBar {
  private readonly start = performance.now();
  private last = 0;
  private shown = false;
  constructor(
    private readonly label: string,
    private readonly stream: ProgressStream = process.stderr,
    private readonly enabled = stream.isTTY === true,
  ) {}

  /** Redraws (at most every 100 ms, and always at the end). */
  update(done: number, total: number): void {
    if (!this.enabled) return;
    const now = performance.now();
    if (done < total && now - this.last < 100) return;
    this.last = now;
    const line = progressLine(this.label, done, total, (now - this.start) / 1000);
    // A pseudo-terminal may report 0 columns: truncate only to a real width.
    const cols = this.stream.columns !== undefined && this.stream.columns > 20 ? this.stream.columns : 1000;
    this.stream.write(`\r${line.slice(0, cols - 1)}\x1b[K`);
    this.shown = true;
  }

  /** Clears the line. */
  done(): void {
    if (this.enabled && this.shown) this.stream.write('\r\x1b[K');
  }
}
