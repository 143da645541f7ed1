/**
 * The process accept valve (`LLB_PD_MAX_TOTAL_INFLIGHT`): a bound on
 * connection contexts, client and backend legs alike. At the bound new
 * client connections are not served: Node cannot stop accept(2) on a
 * listening socket, so the valve holds each such connection unread (reads
 * paused, no parsing, no CPU) in arrival order and lets the oldest in as a
 * context is released. Backend legs are counted but never held.
 */
import type { Socket } from 'node:net';

/** Accept-valve state and the three metric values. */
export class AcceptValve {
  /** Contexts held (0 while unbounded). */
  inflight = 0;
  /** Times the valve closed at the bound: one per pause, not per connection. */
  blockedTotal = 0;
  readonly #held: { socket: Socket; go: () => void }[] = [];
  #blocked = false;

  /** @param bound contexts allowed at once; 0 is unbounded */
  constructor(readonly bound: number) {}

  /** Reads LLB_PD_MAX_TOTAL_INFLIGHT (a non-negative integer; anything else is unbounded). */
  static fromEnv(env: Readonly<Record<string, string | undefined>>): AcceptValve {
    const raw = env.LLB_PD_MAX_TOTAL_INFLIGHT;
    const n = raw !== undefined && /^\d+$/.test(raw.trim()) ? Number(raw) : 0;
    return new AcceptValve(Number.isSafeInteger(n) ? n : 0);
  }

  /** Connections waiting at the valve. */
  get waiting(): number {
    return this.#held.length;
  }

  /** A new client connection: `go` runs at once, or when a context frees. */
  admit(socket: Socket, go: () => void): void {
    if (this.bound <= 0) {
      go();
      return;
    }
    if (this.inflight < this.bound && this.#held.length === 0) {
      this.#hold(socket);
      go();
      return;
    }
    if (!this.#blocked) {
      this.#blocked = true;
      this.blockedTotal++;
    }
    socket.pause();
    const entry = { socket, go };
    this.#held.push(entry);
    socket.once('close', () => {
      const i = this.#held.indexOf(entry);
      if (i >= 0) this.#held.splice(i, 1);
    });
  }

  /** Counts a backend connection as a context while it lives (never held). */
  track(socket: Socket): void {
    if (this.bound > 0) this.#hold(socket);
  }

  #hold(socket: Socket): void {
    this.inflight++;
    let done = false;
    socket.once('close', () => {
      if (done) return;
      done = true;
      this.inflight--;
      this.#rearm();
    });
  }

  #rearm(): void {
    while (this.inflight < this.bound && this.#held.length > 0) {
      const next = this.#held.shift()!;
      if (next.socket.destroyed) continue;
      this.#hold(next.socket);
      next.go();
    }
    if (this.#held.length === 0) this.#blocked = false;
  }
}
