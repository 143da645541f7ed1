import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isPolicyError } from './errors.js';
import { parsePolicy, parsePolicyDocument } from './parse.js';
import { renderPolicySchema } from './schema.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'worked-example.yaml');
const example = readFileSync(FIXTURE, 'utf8');

/** The problems of a refused policy text, one message each. */
function problems(text: string): string[] {
  try {
    parsePolicyDocument(text, 'p.yaml');
  } catch (err) {
    if (isPolicyError(err)) return err.issues.map((i) => i.message);
    throw err;
  }
  throw new Error('the policy was accepted');
}

const minimal = (classes: string, extra = '') => `version: 1
capacity_seats: 10
${extra}classes:
${classes}
envelope: { default_class: a }
`;

const classA = `  a:
    priority: 1
    guaranteed_seats: 4
    queue: { max_count: 1, max_age_ms: 100, max_cost_seats: 1 }
    deadline: { default_ms: 1000 }`;

describe('policy file', () => {
  it('accepts the worked example and derives floors, lendable seats and tenant quotas', () => {
    const p = parsePolicy(example, 'worked-example.yaml');
    expect(p.capacity).toBe(40);
    expect(p.reserveSeats).toBe(2);
    expect(p.usable).toBe(38);
    const byName = Object.fromEntries(p.classes.map((c) => [c.name, c]));
    expect(byName.batch).toMatchObject({ guaranteed: 12, lendable: 9, floor: 3, tenantQuota: 6 });
    expect(byName.interactive).toMatchObject({ guaranteed: 18, floor: 18, borrowLimit: 6 });
    expect(byName['work-order']?.estimator).toMatchObject({ minSeats: 4, seatsPerToolCall: 0.5 });
    expect(byName.batch?.defer).toEqual({ maxBacklog: 10000, drainPerS: 2 });
    expect(p.emergency?.tenants.has('ops')).toBe(true);
  });

  it('fills in defaults: estimator, retry budget, reserve 0, tenant share 100 %', () => {
    const p = parsePolicy(minimal(classA), 'p.yaml');
    expect(p.reserveSeats).toBe(0);
    expect(p.retry).toEqual({
      idempotencyHeader: 'idempotency-key',
      budgetPerIntent: 3,
      rememberMs: 600_000,
      maxIntents: 100_000,
    });
    expect(p.classes[0]?.tenantQuota).toBe(Number.POSITIVE_INFINITY);
    expect(p.classes[0]?.borrowLimit).toBe(0);
    expect(p.classes[0]?.estimator).toEqual({
      promptTokensPerSeat: 4000,
      outputTokensPerSeat: 1000,
      seatsPerToolCall: 0,
      minSeats: 1,
      maxSeats: 10,
    });
  });

  it('refuses a wrong version with file:line:col', () => {
    expect(problems(minimal(classA).replace('version: 1', 'version: 2'))).toEqual([
      'p.yaml:1:10: version: 2 is not 1',
    ]);
  });

  it('names the field, the value and the bound of a value out of range', () => {
    const text = minimal(classA.replace('max_count: 1', 'max_count: -1'));
    expect(problems(text)).toEqual(['p.yaml:7:25: classes.a.queue.max_count: -1 is below the minimum 0']);
  });

  it('places an unknown key at the key and suggests the nearest known one', () => {
    const text = minimal(`${classA}\n    lendble_pct: 10`);
    expect(problems(text)).toEqual([
      'p.yaml:9:5: classes.a.lendble_pct: unknown key (did you mean lendable_pct?)',
    ]);
  });

  it('refuses guaranteed seats plus reserve above capacity, naming both', () => {
    const text = minimal(
      classA.replace('guaranteed_seats: 4', 'guaranteed_seats: 9'),
      'reserve: { seats: 2 }\n',
    );
    expect(problems(text)).toEqual([
      'p.yaml:2:17: capacity_seats: guaranteed seats 9 plus reserve 2 is above capacity_seats 10',
    ]);
  });

  it('refuses a default class or route class that is not declared', () => {
    const text = minimal(classA)
      .replace('default_class: a', 'default_class: b')
      .replace('envelope: {', 'envelope: { routes: [{ path_prefix: /v1/x, class: c }],');
    expect(problems(text)).toEqual([
      'p.yaml:9:51: envelope.routes[0].class: "c" is not a class; expected one of a',
      'p.yaml:9:72: envelope.default_class: "b" is not a class; expected one of a',
    ]);
  });

  it('refuses a class estimator whose max seats exceed the seats outside the reserve', () => {
    const text = minimal(`${classA}\n    estimator: { max_seats: 11 }`);
    expect(problems(text)).toEqual([
      'p.yaml:9:29: classes.a.estimator.max_seats: 11 is above the 10 seats outside the reserve',
    ]);
  });

  it('refuses an undeclared degrade kind and a fallback declared twice', () => {
    expect(problems(minimal(`${classA}\n    degrade: [{ kind: smaller }]`))).toEqual([
      'p.yaml:9:23: classes.a.degrade[0].kind: "smaller" is not one of max_tokens, pool',
    ]);
    const twice = minimal(
      `${classA}\n    degrade: [{ kind: pool, pool: small }, { kind: pool, pool: small }]`,
    );
    expect(problems(twice)).toEqual([
      'p.yaml:9:44: classes.a.degrade[1]: {"kind":"pool","pool":"small"} is declared twice',
    ]);
  });

  it('refuses a class name that is not a name and a header that is not a header name', () => {
    const text = minimal(`${classA}\n  Big: 1`).replace(
      'envelope: {',
      'envelope: { client_header: { class: "X Y" },',
    );
    expect(problems(text)).toEqual([
      'p.yaml:9:3: classes.Big: "Big" is not a name (a lower-case letter, then up to 62 letters, digits, _ or -)',
      'p.yaml:10:37: envelope.client_header.class: "X Y" is not a lower-case HTTP header name of at most 64 characters',
    ]);
  });

  it('reports YAML syntax errors and duplicate keys with their position', () => {
    expect(problems('version: 1\ncapacity_seats: [1\n')[0]).toMatch(/^p\.yaml:3:1: YAML: /);
    expect(problems('version: 1\nversion: 1\n')[0]).toMatch(/^p\.yaml:2:1: YAML: Map keys must be unique/);
  });

  it('refuses a text above the size bound before parsing it', () => {
    expect(problems(`#${'x'.repeat(1024 * 1024)}`)[0]).toMatch(
      /is above the maximum 1048576 of a policy file/,
    );
  });

  it('docs/policy.schema.json is in step with the zod schema (regenerate: npm run schema:policy)', () => {
    const committed = readFileSync(
      join(import.meta.dirname, '..', '..', 'docs', 'policy.schema.json'),
      'utf8',
    );
    expect(committed).toBe(renderPolicySchema());
  });
});

describe('docs/policy.md', () => {
  it('shows the worked example exactly as the tested fixture', () => {
    const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'policy.md'), 'utf8');
    expect(doc).toContain(`\`\`\`yaml\n${example}\`\`\``);
  });

  it('shows the messages its bad example really produces', () => {
    const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'policy.md'), 'utf8');
    const bad = /A bad file raises[\s\S]*?```yaml\n([\s\S]*?)```\s*```text\n([\s\S]*?)```/.exec(doc);
    expect(bad).not.toBeNull();
    try {
      parsePolicyDocument(bad![1]!, 'policy.yaml');
      throw new Error('accepted');
    } catch (err) {
      expect((err as Error).message).toBe(bad![2]!.trimEnd());
    }
  });
});
