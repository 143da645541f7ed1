/**
 * Helpers of the policy tests: a loopback stub backend that records what each request carried
 * (idempotency key, defer id, remaining deadline, max_tokens) and counts completions per key, and
 * the small policy the tests run.
 */
import http from 'node:http';
import type net from 'node:net';

/** One request as the stub backend received it. */
export interface Seen {
  path: string;
  key: string | undefined;
  deferId: string | undefined;
  deadlineMs: number | undefined;
  maxTokens: unknown;
  body: string;
  at: number;
}

/** A backend holding each request `holdMs` (or the body's hold_ms), answering JSON 200. */
export class RecordingBackend {
  port = 0;
  active = 0;
  maxActive = 0;
  readonly seen: Seen[] = [];
  /** Completed answers (200 written in full) per idempotency key. */
  readonly completedByKey = new Map<string, number>();
  holdMs = 50;
  /** Status of its `/health` answer (the proxy's probes open its breaker on a failure). */
  healthStatus = 200;
  /** Defer ids of replays being held right now. */
  readonly inflightDeferIds = new Set<string>();
  /** Called with each request as it arrives (after it is recorded). */
  onRequest: ((s: Seen) => void) | null = null;
  readonly server: http.Server;

  constructor() {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => {
        body += c;
      });
      req.on('end', () => {
        if ((req.url ?? '').startsWith('/health')) {
          res.statusCode = this.healthStatus;
          res.end(this.healthStatus === 200 ? 'ok' : 'down');
          return;
        }
        let j: Record<string, unknown> = {};
        try {
          j = JSON.parse(body) as Record<string, unknown>;
        } catch {
          /* not JSON */
        }
        const h = (n: string): string | undefined => {
          const v = req.headers[n];
          return Array.isArray(v) ? v.join(', ') : v;
        };
        const dl = h('x-sluice-deadline-ms');
        const key = h('idempotency-key');
        this.seen.push({
          path: req.url ?? '',
          key,
          deferId: h('x-sluice-defer-id'),
          deadlineMs: dl === undefined ? undefined : Number(dl),
          maxTokens: j.max_tokens,
          body,
          at: Date.now(),
        });
        const seen = this.seen[this.seen.length - 1]!;
        const deferId = seen.deferId;
        if (deferId !== undefined) this.inflightDeferIds.add(deferId);
        this.active++;
        this.maxActive = Math.max(this.maxActive, this.active);
        this.onRequest?.(seen);
        const hold = typeof j.hold_ms === 'number' ? j.hold_ms : this.holdMs;
        const t = setTimeout(() => {
          const out = JSON.stringify({
            id: 'c',
            echo: j.tag ?? null,
            usage: { prompt_tokens: 3, completion_tokens: 1 },
          });
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(out, () => {
            if (key !== undefined) this.completedByKey.set(key, (this.completedByKey.get(key) ?? 0) + 1);
          });
        }, hold);
        res.on('close', () => {
          clearTimeout(t);
          this.active--;
          if (deferId !== undefined) this.inflightDeferIds.delete(deferId);
        });
      });
    });
  }

  async start(port = 0): Promise<this> {
    await new Promise<void>((r) => this.server.listen(port, '127.0.0.1', r));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

/**
 * The tests' policy: 4 seats; interactive (2 seats, a short queue, a max_tokens degrade) and
 * batch (2 seats, no queue, defers). Every request costs 1 seat unless it asks for more than
 * 1000 output tokens (2 seats).
 */
export const PROXY_TEST_POLICY = `version: 1
capacity_seats: 4
estimator: { prompt_tokens_per_seat: 1000000, output_tokens_per_seat: 1000, min_seats: 1, max_seats: 2 }
classes:
  interactive:
    priority: 100
    guaranteed_seats: 2
    lendable_pct: 0
    queue: { max_count: 2, max_age_ms: 1500, max_cost_seats: 4 }
    deadline: { default_ms: 3000, client_may_shorten: true }
    degrade:
      - { kind: max_tokens, max_output_tokens: 16 }
  batch:
    priority: 10
    guaranteed_seats: 2
    lendable_pct: 0
    queue: { max_count: 0, max_age_ms: 0, max_cost_seats: 0 }
    deadline: { default_ms: 600000, client_may_shorten: false }
    defer: { enabled: true, max_backlog: 1000, drain_per_s: 50 }
envelope:
  class_claim: sluice_class
  routes:
    - { path_prefix: /v1/batches, class: batch }
  default_class: interactive
  client_header: { class: x-sluice-class, deadline_ms: x-sluice-deadline-ms }
retry: { budget_per_intent: 3 }
`;

/** A chat body. */
export function chat(o: { maxTokens?: number; hold?: number; tag?: string } = {}): string {
  return JSON.stringify({
    model: 'm',
    messages: [{ role: 'user', content: 'hello' }],
    ...(o.maxTokens === undefined ? {} : { max_tokens: o.maxTokens }),
    ...(o.hold === undefined ? {} : { hold_ms: o.hold }),
    ...(o.tag === undefined ? {} : { tag: o.tag }),
  });
}
