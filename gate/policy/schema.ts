/**
 * The policy document, version 1: the strict zod schema of a policy file. Keys are snake_case like
 * the scenario format; every bound is named here so messages and the generated JSON Schema agree.
 * Cross-field rules (seats adding up, classes that exist) are in {@link policyFileSchema}'s refinement.
 */
import { z } from 'zod';
import { showValue } from './messages.js';

/** Most seats a policy may declare (a seat is one interactive-equivalent unit of concurrency). */
export const MAX_SEATS = 1_000_000;
/** Most workload classes in one policy. */
export const MAX_CLASSES = 64;
/** Longest deadline or queue age a policy may declare: one day, in ms. */
export const MAX_MS = 86_400_000;

const int = (min: number, max: number) => z.number().int().min(min).max(max);
const seats = () => int(0, MAX_SEATS);
const className = z.string().regex(/^[a-z][a-z0-9_-]{0,62}$/, {
  error: (iss) =>
    `${showValue(iss.input)} is not a name (a lower-case letter, then up to 62 letters, digits, _ or -)`,
});
const headerName = z.string().regex(/^[a-z0-9!#$%&'*+.^_`|~-]{1,64}$/, {
  error: (iss) => `${showValue(iss.input)} is not a lower-case HTTP header name of at most 64 characters`,
});
const claimName = z.string().min(1).max(128);

/** Inputs of the seat estimator; a class may override any of them. */
const estimatorShape = {
  prompt_tokens_per_seat: int(1, 100_000_000).describe('Prompt tokens that cost one seat.'),
  output_tokens_per_seat: int(1, 100_000_000).describe('Maximum output tokens that cost one seat.'),
  seats_per_tool_call: z.number().min(0).max(1000).describe('Seats added per budgeted tool call.'),
  min_seats: int(1, MAX_SEATS).describe('Fewest seats a request costs.'),
  max_seats: int(1, MAX_SEATS).describe('Most seats a request costs.'),
};

const estimatorSchema = z
  .strictObject({
    prompt_tokens_per_seat: estimatorShape.prompt_tokens_per_seat.default(4000),
    output_tokens_per_seat: estimatorShape.output_tokens_per_seat.default(1000),
    seats_per_tool_call: estimatorShape.seats_per_tool_call.default(0),
    min_seats: estimatorShape.min_seats.default(1),
    max_seats: estimatorShape.max_seats
      .optional()
      .describe('Most seats a request costs (default: every seat outside the reserve).'),
    feedback: z
      .strictObject({
        enabled: z.boolean().default(false).describe('Whether the correction is applied (off by default).'),
        alpha: z
          .number()
          .gt(0)
          .max(1)
          .default(0.05)
          .describe(
            'Weight of each reconciled request: factor *= 1 - alpha + alpha * actual/estimated seats.',
          ),
        min_factor: z.number().min(0.01).max(1).default(0.5).describe('Lowest correction factor.'),
        max_factor: z.number().min(1).max(100).default(2).describe('Highest correction factor.'),
        min_samples: int(0, 1_000_000)
          .default(20)
          .describe('Reconciled requests of a class before its factor is applied.'),
      })
      .optional()
      .describe(
        "Per-class multiplicative correction of a biased estimator from the observed actual/estimated seats at release, bounded; the class's raw seats are multiplied by it before rounding up.",
      ),
  })
  .describe(
    'Seats of a request: ceil(prompt/prompt_tokens_per_seat + max_output/output_tokens_per_seat + tool_calls*seats_per_tool_call), clamped to [min_seats, max_seats].',
  );

const estimatorOverrideSchema = z
  .strictObject({
    prompt_tokens_per_seat: estimatorShape.prompt_tokens_per_seat.optional(),
    output_tokens_per_seat: estimatorShape.output_tokens_per_seat.optional(),
    seats_per_tool_call: estimatorShape.seats_per_tool_call.optional(),
    min_seats: estimatorShape.min_seats.optional(),
    max_seats: estimatorShape.max_seats.optional(),
  })
  .describe('Per-class overrides of the top-level estimator.');

const degradeSchema = z
  .discriminatedUnion('kind', [
    z.strictObject({
      kind: z.literal('max_tokens'),
      max_output_tokens: int(1, 100_000_000).describe('The reduced max_tokens the request is served with.'),
    }),
    z.strictObject({
      kind: z.literal('pool'),
      pool: className.describe('Another pool declared compatible with this class.'),
    }),
  ])
  .describe('A declared compatible fallback; never chosen implicitly.');

const classSchema = z.strictObject({
  priority: int(0, 1000).describe('Higher is more important; decides who borrows idle seats first.'),
  guaranteed_seats: seats().describe('Seats this class can always reach (its nominal share).'),
  lendable_pct: int(0, 100)
    .default(0)
    .describe('Share of guaranteed_seats others may borrow while idle; the rest is a floor never lent.'),
  borrow: z
    .strictObject({
      allowed: z.boolean().describe('Whether this class may borrow idle seats while healthy.'),
      max_seats: seats().optional().describe('Most seats borrowed at once (default: no limit).'),
    })
    .default({ allowed: false }),
  tenant_max_share_pct: int(1, 100)
    .default(100)
    .describe("Most of the class's guaranteed seats one tenant may hold (its first request always fits)."),
  queue: z
    .strictObject({
      max_count: int(0, 1_000_000).describe('Most waiting requests.'),
      max_age_ms: int(0, MAX_MS).describe('Longest a request may wait.'),
      max_cost_seats: seats().describe('Most seats the waiting requests may add up to.'),
    })
    .describe('Bounds of the class queue: count, age and total weighted cost.'),
  deadline: z.strictObject({
    default_ms: int(1, MAX_MS).describe('Deadline of a request that brings none, from arrival.'),
    client_may_shorten: z.boolean().default(true).describe('Whether the client header may shorten it.'),
  }),
  estimator: estimatorOverrideSchema.optional(),
  depends_on: z
    .array(className)
    .max(16)
    .default([])
    .describe('Dependencies whose open circuit rejects with dependency_open.'),
  degrade: z.array(degradeSchema).max(8).default([]).describe('Fallbacks tried in order.'),
  defer: z
    .strictObject({
      enabled: z.boolean(),
      max_backlog: int(0, 100_000_000).describe('Most deferred requests of this class.'),
      drain_per_s: z.number().gt(0).max(1_000_000).describe('Deferred requests fed back per second.'),
    })
    .optional(),
});

/** The policy file as written (before defaults). */
export const policyFileSchema = z
  .strictObject({
    version: z.literal(1).describe('Version of the policy format.'),
    capacity_seats: int(1, MAX_SEATS).describe('Seats of the whole pool, reserve included.'),
    reserve: z
      .strictObject({
        seats: seats().describe('Seats only health, cancellation and control traffic may use.'),
      })
      .default({ seats: 0 }),
    emergency: z
      .strictObject({
        max_seats: seats().describe('Most seats emergency traffic may hold at once.'),
        eligible: z.strictObject({
          claim: z
            .strictObject({ name: claimName, equals: z.string().max(256) })
            .optional()
            .describe('A verified credential claim that makes a request eligible.'),
          tenants: z.array(z.string().min(1).max(256)).max(1000).default([]),
        }),
      })
      .optional()
      .describe('A capped lane past class limits for authenticated emergencies; every use is recorded.'),
    estimator: estimatorSchema.default({
      prompt_tokens_per_seat: 4000,
      output_tokens_per_seat: 1000,
      seats_per_tool_call: 0,
      min_seats: 1,
    }),
    recovery: z
      .strictObject({
        queue_depth: int(0, 1_000_000)
          .default(0)
          .describe(
            'Recovery (in the scorecard) ends once at most this many requests wait in the class queues and no deferred item waits.',
          ),
      })
      .default({ queue_depth: 0 })
      .describe('When the scorecard counts an unhealthy period as recovered.'),
    service_rate_window_ms: int(100, MAX_MS)
      .default(10_000)
      .describe("Window of a queue's recent service rate, used for expected waits."),
    classes: z
      .record(className, classSchema)
      .refine((r) => Object.keys(r).length >= 1, 'at least one class')
      .describe('Workload classes by name.'),
    envelope: z
      .strictObject({
        class_claim: claimName.optional().describe('Credential claim naming the class.'),
        tenant_claim: claimName.default('sub').describe('Credential claim naming the tenant.'),
        routes: z
          .array(z.strictObject({ path_prefix: z.string().startsWith('/').max(256), class: className }))
          .max(256)
          .default([])
          .describe('Route to class, longest prefix first; the claim wins over the route.'),
        default_class: className,
        client_header: z
          .strictObject({
            class: headerName.optional().describe('Header naming a class: only a lower priority is taken.'),
            deadline_ms: headerName.optional().describe('Header with a deadline in ms: only a shorter one.'),
          })
          .default({}),
      })
      .describe('Where class, tenant and deadline come from; nothing in the prompt sets any of it.'),
    retry: z
      .strictObject({
        idempotency_header: headerName.default('idempotency-key'),
        budget_per_intent: int(1, 100)
          .default(3)
          .describe('Attempts one intent may make, the first included.'),
        remember_ms: int(1, MAX_MS).default(600_000).describe('How long a finished intent is remembered.'),
        max_intents: int(1, 10_000_000).default(100_000).describe('Most intents remembered at once.'),
      })
      .default({
        idempotency_header: 'idempotency-key',
        budget_per_intent: 3,
        remember_ms: 600_000,
        max_intents: 100_000,
      }),
  })
  .superRefine((p, ctx) => {
    const names = Object.keys(p.classes);
    const say = (path: (string | number)[], input: unknown, message: string) =>
      ctx.addIssue({ code: 'custom', path, input, message });
    /** A problem whose message starts with the value: `11 is above ...`. */
    const add = (path: (string | number)[], input: unknown, rest: string) =>
      say(path, input, `${showValue(input)} ${rest}`);
    let guaranteed = 0;
    for (const n of names) guaranteed += p.classes[n]!.guaranteed_seats;
    if (names.length > MAX_CLASSES)
      say(['classes'], names.length, `${names.length} classes is above the maximum ${MAX_CLASSES}`);
    if (guaranteed + p.reserve.seats > p.capacity_seats)
      say(
        ['capacity_seats'],
        p.capacity_seats,
        `guaranteed seats ${guaranteed} plus reserve ${p.reserve.seats} is above capacity_seats ${p.capacity_seats}`,
      );
    const usable = p.capacity_seats - p.reserve.seats;
    if (p.emergency && p.emergency.max_seats > usable)
      add(
        ['emergency', 'max_seats'],
        p.emergency.max_seats,
        `is above the ${usable} seats outside the reserve`,
      );
    const topMax = p.estimator.max_seats;
    if (topMax !== undefined && p.estimator.min_seats > topMax)
      add(['estimator', 'min_seats'], p.estimator.min_seats, `is above max_seats ${topMax}`);
    if (topMax !== undefined && topMax > usable)
      add(['estimator', 'max_seats'], topMax, `is above the ${usable} seats outside the reserve`);
    const known = names.join(', ');
    if (!names.includes(p.envelope.default_class))
      add(
        ['envelope', 'default_class'],
        p.envelope.default_class,
        `is not a class; expected one of ${known}`,
      );
    p.envelope.routes.forEach((r, i) => {
      if (!names.includes(r.class))
        add(['envelope', 'routes', i, 'class'], r.class, `is not a class; expected one of ${known}`);
    });
    for (const n of names) {
      const c = p.classes[n]!;
      const at = ['classes', n];
      const min = c.estimator?.min_seats ?? p.estimator.min_seats;
      const max = c.estimator?.max_seats ?? topMax ?? usable;
      if (c.estimator?.min_seats !== undefined && min > max)
        add([...at, 'estimator', 'min_seats'], min, `is above max_seats ${max}`);
      if (c.estimator?.max_seats !== undefined && max > usable)
        add([...at, 'estimator', 'max_seats'], max, `is above the ${usable} seats outside the reserve`);
      if (c.borrow.max_seats !== undefined && !c.borrow.allowed)
        add([...at, 'borrow', 'max_seats'], c.borrow.max_seats, 'is set while borrow.allowed is false');
      const pools = new Set<string>();
      c.degrade.forEach((d, i) => {
        const key = d.kind === 'pool' ? `pool:${d.pool}` : 'max_tokens';
        if (pools.has(key)) add([...at, 'degrade', i], d, 'is declared twice');
        pools.add(key);
      });
    }
  });

/** A policy file as written. */
export type PolicyFileInput = z.input<typeof policyFileSchema>;
/** A validated policy document with its defaults filled in. */
export type PolicyDocument = z.output<typeof policyFileSchema>;
/** One workload class of a policy document. */
export type PolicyClassDocument = PolicyDocument['classes'][string];
/** A declared fallback. */
export type DegradeOption = PolicyClassDocument['degrade'][number];

/** The JSON Schema of the policy file (input form: defaults make fields optional). */
export function policyJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(policyFileSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
}

/** The text of `docs/policy.schema.json`. */
export function renderPolicySchema(): string {
  const schema = {
    title: 'Sluice admission policy, version 1',
    ...policyJsonSchema(),
  };
  return `${JSON.stringify(schema, null, 2)}\n`;
}
