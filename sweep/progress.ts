/**
 * Progress of a long command on stderr: on a TTY, a one-line bar with an ETA
 * redrawn in place with `\r`; elsewhere (a CI log, a pipe), a plain line every
 * few seconds (elapsed, done/total, ETA). Wall-clock time is used only here,
 * for the display; it never reaches a result.
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

/** Off a TTY, a progress line at most this often, ms. */
export const PLAIN_PROGRESS_MS = 5000;

/** The plain line: "sweep: 3/12 (25%), elapsed 0:06, ETA 0:18". */
export function plainProgressLine(
  label: string,
  done: number,
  total: number,
  elapsedS: number,
  unit = '',
): string {
  const frac = total === 0 ? 1 : done / total;
  const eta = done === 0 ? '--:--' : formatDuration((elapsedS / done) * (total - done));
  return `${label}: ${done}/${total}${unit} (${Math.floor(frac * 100)}%), elapsed ${formatDuration(elapsedS)}, ETA ${eta}`;
}

/** Options of a {@link ProgressBar}. */
export interface ProgressOptions {
  /** Off a TTY, a line at most every this many ms (0: never). @default PLAIN_PROGRESS_MS */
  plainEveryMs?: number;
  /** Unit of done/total in the plain line, e.g. " s". */
  unit?: string;
  /** Milliseconds, for tests. @default performance.now */
  now?: () => number;
}

/** A progress display on `stream` (stderr by default): a bar on a TTY, a line every few seconds elsewhere. */
export class ProgressBar {
  private readonly start: number;
  private last = 0;
  private lastPlain: number;
  private shown = false;
  private readonly tty: boolean;
  private readonly now: () => number;
  constructor(
    private readonly label: string,
    private readonly stream: ProgressStream = process.stderr,
    private readonly o: ProgressOptions = {},
  ) {
    this.tty = stream.isTTY === true;
    this.now = o.now ?? (() => performance.now());
    this.start = this.now();
    this.lastPlain = this.start;
  }

  /** Redraws on a TTY (at most every 100 ms, and always at the end); off a TTY, prints a line when one is due. */
  update(done: number, total: number, detail = ''): void {
    const now = this.now();
    if (!this.tty) {
      const every = this.o.plainEveryMs ?? PLAIN_PROGRESS_MS;
      if (every <= 0 || now - this.lastPlain < every) return;
      this.lastPlain = now;
      const line = plainProgressLine(this.label, done, total, (now - this.start) / 1000, this.o.unit);
      this.stream.write(`${line}${detail ? `, ${detail}` : ''}\n`);
      return;
    }
    if (done < total && now - this.last < 100) return;
    this.last = now;
    const line = `${progressLine(this.label, done, total, (now - this.start) / 1000)}${detail ? ` ${detail}` : ''}`;
    // A pseudo-terminal may report 0 columns: truncate only to a real width.
    const cols = this.stream.columns !== undefined && this.stream.columns > 20 ? this.stream.columns : 1000;
    this.stream.write(`\r${line.slice(0, cols - 1)}\x1b[K`);
    this.shown = true;
  }

  /** Clears the bar (a TTY); off a TTY there is nothing to clear. */
  done(): void {
    if (this.tty && this.shown) this.stream.write('\r\x1b[K');
  }
}
