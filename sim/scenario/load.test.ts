import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dataFileCandidates, REPO_ROOT } from './data-files.js';
import { isScenarioError, MAX_LISTED_ISSUES, ScenarioError } from './errors.js';
import { loadScenario, MAX_SCENARIO_BYTES, parseScenarioText } from './load.js';

/** A small valid scenario; line numbers below refer to this text. */
const BASE = `name: t
duration_s: 60
gate:
  rule:
    serviceArguments:
      externalIP: 192.0.2.10
      port: 8080
      mode: 4
      sse_mode: true
      fc_mode: enforce
      fc_max_outstanding: 16
      fc_max_queue_depth: 32
engines:
  - profile: llama-3.1-8b-h100
    count: 2
clients:
  arrival: {kind: poisson, rate_per_sec: 5}
`;

function errorOf(text: string, file = 'x.yaml'): ScenarioError {
  try {
    parseScenarioText(text, file);
  } catch (err) {
    if (err instanceof ScenarioError) return err;
    throw err;
  }
  throw new Error('expected a ScenarioError');
}

describe('parseScenarioText', () => {
  it('accepts a small scenario and applies the defaults', () => {
    const s = parseScenarioText(BASE, 'x.yaml');
    expect(s.name).toBe('t');
    expect(s.seed).toBe(1);
    expect(s.warmup_s).toBe(0);
    expect(s.telemetry.scrape_interval_s).toBe(10);
    expect(s.health.circuit_breaker.failure_threshold).toBe(5);
    expect(s.clients.retry).toEqual({ kind: 'none' });
    expect(s.timeline).toEqual([]);
  });

  it('deep-freezes the result', () => {
    const s = parseScenarioText(BASE, 'x.yaml');
    expect(Object.isFrozen(s)).toBe(true);
    expect(Object.isFrozen(s.gate)).toBe(true);
    expect(Object.isFrozen(s.endpoints[0])).toBe(true);
    expect(Object.isFrozen(s.clients.arrival)).toBe(true);
  });

  it('reports an unknown key with file:line:col of the key and its path', () => {
    const err = errorOf(BASE.replace('    count: 2\n', '    count: 2\n    colour: red\n'));
    expect(err.code).toBe('SLUICE_E_SCENARIO');
    expect(err.issues).toHaveLength(1);
    expect(err.issues[0]).toMatchObject({
      file: 'x.yaml',
      line: 16,
      col: 5,
      path: 'engines[0].colour',
      value: 'colour',
    });
    expect(err.message).toMatch(
      /^x\.yaml:16:5: engines\[0\]\.colour: unknown key; expected one of name, profile, profile_file, count, /,
    );
  });

  it('suggests the nearest key for a misspelt one', () => {
    const err = errorOf(`${BASE}warmup: 5\n`);
    expect(err.message).toBe('x.yaml:18:1: warmup: unknown key (did you mean warmup_s?)');
  });

  it('reports a bad fc value with the gate message under the scenario path, at its line', () => {
    const err = errorOf(BASE.replace('fc_max_queue_depth: 32', 'fc_max_queue_depth: 70000'));
    expect(err.message).toBe(
      'x.yaml:12:27: gate.rule.serviceArguments.fc_max_queue_depth: 70000 is above the maximum 65536',
    );
    expect(err.issues[0]).toMatchObject({
      line: 12,
      col: 27,
      path: 'gate.rule.serviceArguments.fc_max_queue_depth',
      value: 70000,
      expected: 'an integer from 0 to 65536',
    });
  });

  it('reports every error at once, one per line, in file order', () => {
    const text = BASE.replace('fc_mode: enforce', 'fc_mode: enforcing')
      .replace('fc_max_queue_depth: 32', 'fc_max_queue_depth: 70000')
      .replace('port: 8080', 'port: 0')
      .replace('rate_per_sec: 5', 'rate_per_sec: -5')
      .replace('duration_s: 60', 'duration_s: sixty')
      .replace('    count: 2\n', '    count: 2\n    colour: red\n');
    expect(errorOf(text).message.split('\n')).toEqual([
      'x.yaml:2:13: duration_s: "sixty" is not a number',
      'x.yaml:7:13: gate.rule.serviceArguments.port: 0 is below the minimum 1',
      'x.yaml:10:16: gate.rule.serviceArguments.fc_mode: "enforcing" is not one of off, observe, enforce, inherit',
      'x.yaml:12:27: gate.rule.serviceArguments.fc_max_queue_depth: 70000 is above the maximum 65536',
      expect.stringMatching(/^x\.yaml:16:5: engines\[0\]\.colour: unknown key; expected one of /),
      'x.yaml:18:42: clients.arrival.rate_per_sec: -5 is not above 0',
    ]);
  });

  it('reports a missing required field at its parent, naming what was expected', () => {
    const err = errorOf(BASE.replace('name: t\n', ''));
    expect(err.message).toBe('x.yaml:1:1: name: missing; expected a string');
    const err2 = errorOf(BASE.replace('      port: 8080\n', ''));
    expect(err2.message).toBe(
      'x.yaml:6:7: gate.rule.serviceArguments.port: missing; expected a port from 1 to 65535',
    );
  });

  it('reports an unknown serviceArguments field with the gate hint', () => {
    const err = errorOf(BASE.replace('fc_max_outstanding: 16', 'fc_max_outstandng: 16'));
    expect(err.message).toBe(
      'x.yaml:11:7: gate.rule.serviceArguments.fc_max_outstandng: unknown field (did you mean fc_max_outstanding?)',
    );
  });

  it('refuses a loxilb data-plane field the simulator does not model instead of ignoring it', () => {
    const err = errorOf(
      BASE.replace('fc_max_outstanding: 16', 'fc_max_outstanding: 16\n      connectionLimit: 100'),
    );
    expect(err.message).toContain(
      'gate.rule.serviceArguments.connectionLimit: connectionLimit is a loxilb data-plane setting the simulator does not model; remove it',
    );
  });

  it('reports a bad discriminator with the allowed kinds', () => {
    const err = errorOf(BASE.replace('kind: poisson', 'kind: poison'));
    expect(err.message).toBe(
      'x.yaml:17:19: clients.arrival.kind: "poison" is not one of constant, poisson, ramp, step, spike, diurnal, trace',
    );
  });

  it('reports YAML syntax errors with their position', () => {
    const err = errorOf('name: x\n  y: [\n');
    expect(err.issues[0]?.line).toBe(1);
    expect(err.message).toContain('x.yaml:1:7: YAML: ');
  });

  it('reports LLB_FC_* values the gateway would not use as given', () => {
    const err = errorOf(
      BASE.replace(
        'engines:',
        'env:\n    LLB_FC_MODE: sometimes\n    LLB_FC_MAX_OUTSTANDNG: 3\nengines:',
      ).replace('env:', '  env:'),
    );
    expect(err.message.split('\n')).toEqual([
      'x.yaml:14:18: gate.env.LLB_FC_MODE: "sometimes" is not a mode (the gateway would read it as off)',
      'x.yaml:15:5: gate.env.LLB_FC_MAX_OUTSTANDNG: unknown variable (did you mean LLB_FC_MAX_OUTSTANDING?)',
    ]);
  });

  it('refuses a gate with both a rule and SMG settings, and SMG settings that SMG refuses', () => {
    const err = errorOf(BASE.replace('engines:', '  smg: {queue_size: 10, queue_timeout_secs: 0}\nengines:'));
    expect(err.message.split('\n')).toEqual([
      'x.yaml:13:8: gate.smg: is given with rule',
      'x.yaml:13:45: gate.smg.queue_timeout_secs: 0 is refused while queue_size is 10',
    ]);
  });

  it('generates one endpoint per engine when the rule lists none', () => {
    const s = parseScenarioText(BASE, 'x.yaml');
    expect(s.endpoints.map((e) => e.id)).toEqual(['10.0.0.1:8000', '10.0.0.2:8000']);
    expect(s.gate).toMatchObject({
      dialect: 'loxilb',
      rule: {
        endpoints: [
          { endpointIP: '10.0.0.1', targetPort: 8000, weight: 1, role: 'normal' },
          { endpointIP: '10.0.0.2', targetPort: 8000, weight: 1, role: 'normal' },
        ],
      },
    });
    expect(s.engines[0]?.name).toBe('llama-3.1-8b-h100');
  });

  it('pairs explicit endpoints with the engines in order, and counts them', () => {
    const eps = `    endpoints:
      - {endpointIP: 198.51.100.11, targetPort: 8000, weight: 2}
      - {endpointIP: 198.51.100.12, targetPort: 8000}
engines:`;
    const s = parseScenarioText(BASE.replace('engines:', eps), 'x.yaml');
    expect(s.endpoints.map((e) => [e.id, e.weight, e.group, e.engine])).toEqual([
      ['198.51.100.11:8000', 2, 'llama-3.1-8b-h100', 0],
      ['198.51.100.12:8000', 1, 'llama-3.1-8b-h100', 1],
    ]);
    const err = errorOf(BASE.replace('engines:', eps).replace('count: 2', 'count: 3'));
    expect(err.message).toBe('x.yaml:14:7: gate.rule.endpoints: lists 2 endpoints for 3 engines');
  });

  it('reports a bad explicit endpoint at its own index', () => {
    const eps = `    endpoints:
      - {endpointIP: 198.51.100.11, targetPort: 8000}
      - {endpointIP: 198.51.100.12, targetPort: 70000}
engines:`;
    expect(errorOf(BASE.replace('engines:', eps)).message).toBe(
      'x.yaml:15:49: gate.rule.endpoints[1].targetPort: 70000 is above the maximum 65535',
    );
  });

  it('takes the engines from engine groups given as the rule endpoints', () => {
    const text = BASE.replace(
      'engines:\n  - profile: llama-3.1-8b-h100\n    count: 2\n',
      '    endpoints:\n      - {profile: llama-3.1-8b-h100, count: 1, role: prefill}\n      - {profile: llama-3.1-8b-h100, count: 2, role: decode}\n',
    );
    const s = parseScenarioText(text, 'x.yaml');
    expect(s.engines.map((g) => [g.name, g.count, g.role])).toEqual([
      ['llama-3.1-8b-h100', 1, 'prefill'],
      ['llama-3.1-8b-h100-2', 2, 'decode'],
    ]);
    expect(s.endpoints.map((e) => e.role)).toEqual(['prefill', 'decode', 'decode']);
  });

  it('reports problems inside engine groups given as the rule endpoints at their own paths', () => {
    const text = BASE.replace(
      'engines:\n  - profile: llama-3.1-8b-h100\n    count: 2\n',
      '    endpoints:\n      - {profile: llama-3.1-8b-h101, count: 1, colour: red}\n',
    );
    expect(errorOf(text).message.split('\n')).toEqual([
      'x.yaml:14:19: gate.rule.endpoints[0].profile: "llama-3.1-8b-h101" is not one of exponential, recorded, fitted, llama-3.1-8b-h100, llama-3.1-8b-a100-80g, llama-3.1-8b-a100-40g, llama-3.1-70b-tp4-h100, llama-3.1-70b-tp4-a100-80g',
      expect.stringMatching(
        /^x\.yaml:14:48: gate\.rule\.endpoints\[0\]\.colour: unknown key; expected one of name, profile, /,
      ),
    ]);
  });

  it('keeps SMG settings by their own names, with their defaults', () => {
    const text = BASE.replace(/ {2}rule:\n( {4}.*\n| {6}.*\n)*/, '  smg: {max_concurrent_requests: 64}\n');
    const s = parseScenarioText(text, 'x.yaml');
    expect(s.gate).toEqual({
      dialect: 'smg',
      smg: { max_concurrent_requests: 64, queue_size: 100, queue_timeout_secs: 60 },
    });
  });

  it('requires the engine-specific fields of the exponential and fitted profiles', () => {
    const err = errorOf(
      BASE.replace(
        'profile: llama-3.1-8b-h100',
        'profile: exponential\n    fitted: {a: 1, b: 0, c: 0, d: 0}',
      ),
    );
    expect(err.message.split('\n')).toEqual([
      'x.yaml:14:5: engines[0].mean_service_ms: missing; profile exponential needs it',
      'x.yaml:15:13: engines[0].fitted: is only for profile fitted (this group is exponential)',
    ]);
  });

  it('resolves timeline selectors and builds each replace as the full rule to POST', () => {
    const text = `${BASE}timeline:
  - {at_s: 10, event: flap, endpoints: [llama-3.1-8b-h100], period_s: 4, count: 2}
  - {at_s: 20, event: replace, serviceArguments: {fc_max_outstanding: 24}}
  - {at_s: 30, event: capacity_loss, share: 0.5}
  - {at_s: 40, event: endpoint_down, endpoints: ['10.0.0.2:8000']}
`;
    const s = parseScenarioText(text, 'x.yaml');
    expect(s.timeline[0]).toMatchObject({ event: 'flap', endpoints: [0, 1], down_s: 2 });
    expect(s.timeline[1]).toMatchObject({
      event: 'replace',
      rule: {
        serviceArguments: {
          externalIP: '192.0.2.10',
          port: 8080,
          mode: 4,
          sse_mode: true,
          fc_max_outstanding: 24,
        },
      },
    });
    expect(s.timeline[2]).toMatchObject({ event: 'capacity_loss', endpoints: [1] });
    expect(s.timeline[3]).toMatchObject({ event: 'endpoint_down', endpoints: [1] });
  });

  it('checks timeline events against the run and the pool', () => {
    const text = `${BASE}timeline:
  - {at_s: 30, event: replace, serviceArguments: {fc_max_queue_depth: 70000}}
  - {at_s: 20, event: endpoint_up, endpoints: [5, nope]}
  - {at_s: 90, event: maintenance, enabled: true}
`;
    expect(errorOf(text).message.split('\n')).toEqual([
      'x.yaml:19:71: timeline[0].serviceArguments.fc_max_queue_depth: 70000 is above the maximum 65536',
    ]);
    const text2 = text.replace('70000', '64');
    expect(errorOf(text2).message.split('\n')).toEqual([
      'x.yaml:20:12: timeline[1].at_s: 20 is before the previous event (30); list events in time order',
      'x.yaml:20:48: timeline[1].endpoints[0]: 5 is not an endpoint index (the pool has 2)',
      'x.yaml:20:51: timeline[1].endpoints[1]: "nope" is neither an endpoint IP:port nor an engine group',
      'x.yaml:21:12: timeline[2].at_s: 90 is not below duration_s (60)',
    ]);
  });

  it('refuses a defer_store_outage without gate.policy, and one without a positive duration_s', () => {
    const text = `${BASE}timeline:
  - {at_s: 10, event: defer_store_outage, duration_s: 20}
`;
    expect(errorOf(text).message.split('\n')).toEqual([
      'x.yaml:19:23: timeline[0].event: "defer_store_outage" needs gate.policy (the defer store is the policy layer\'s); the scenario has none',
    ]);
    const text2 = text.replace('duration_s: 20', 'duration_s: 0');
    expect(errorOf(text2).message.split('\n')).toEqual([
      'x.yaml:19:55: timeline[0].duration_s: 0 is not above 0',
    ]);
    const text3 = text.replace(', duration_s: 20', '');
    expect(errorOf(text3).message.split('\n')).toEqual([
      'x.yaml:19:5: timeline[0].duration_s: missing; expected a number',
    ]);
  });

  it('runs the client section through the client models (duplicate tenant ids)', () => {
    const text = BASE.replace('clients:\n', 'clients:\n  tenants:\n    - {id: a}\n    - {id: a}\n');
    expect(errorOf(text).message).toBe(
      'x.yaml:19:12: clients.tenants[1].id: "a" is not unique among the tenants',
    );
  });

  it('refuses a scenario that sends nothing', () => {
    const text = BASE.replace('  arrival: {kind: poisson, rate_per_sec: 5}\n', '  stream_share: 1\n');
    expect(errorOf(text).message).toBe('x.yaml:17:3: clients: sends nothing');
  });
});

describe('trace files', () => {
  const withTrace = (file: string) =>
    BASE.replace('  arrival: {kind: poisson, rate_per_sec: 5}\n', `  trace: {file: "${file}"}\n`);

  it("finds a trace by its basename in the repository's data/ folder, never outside the repository", () => {
    const s = parseScenarioText(
      withTrace('azure-llm-2023-conv.csv'),
      join(REPO_ROOT, 'scenarios', 'x.yaml'),
      {
        cwd: tmpdir(),
      },
    );
    expect(s.clients.trace?.file).toBe(join(REPO_ROOT, 'data', 'azure-llm-2023-conv.csv'));
    const candidates = dataFileCandidates('t.csv', join(REPO_ROOT, 'scenarios', 'x.yaml'), tmpdir());
    expect(candidates.filter((c) => !c.startsWith(REPO_ROOT) && !c.startsWith(tmpdir()))).toEqual([]);
    expect(s.clients.trace?.format).toBe('azure');
  });

  it('looks beside the scenario file first, then in the working directory', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-scn-'));
    mkdirSync(join(dir, 'a'));
    mkdirSync(join(dir, 'cwd'));
    writeFileSync(join(dir, 'a', 't.jsonl'), '');
    writeFileSync(join(dir, 'cwd', 'u.jsonl'), '');
    const beside = parseScenarioText(withTrace('t.jsonl'), join(dir, 'a', 's.yaml'), {
      cwd: join(dir, 'cwd'),
    });
    expect(beside.clients.trace?.file).toBe(join(dir, 'a', 't.jsonl'));
    expect(beside.clients.trace?.format).toBe('mooncake');
    const inCwd = parseScenarioText(withTrace('u.jsonl'), join(dir, 'a', 's.yaml'), {
      cwd: join(dir, 'cwd'),
    });
    expect(inCwd.clients.trace?.file).toBe(join(dir, 'cwd', 'u.jsonl'));
  });

  it('expands SLUICE_DATA-style variables from the environment', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-data-'));
    writeFileSync(join(dir, 'v.csv'), '');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the scenario's own ${VAR} syntax
    const text = withTrace('${SLUICE_DATA}/v.csv');
    expect(parseScenarioText(text, 'x.yaml', { env: { SLUICE_DATA: dir } }).clients.trace?.file).toBe(
      join(dir, 'v.csv'),
    );
    const unset = `x.yaml:17:17: clients.trace.file: uses $${'{'}SLUICE_DATA}, which is not set`;
    expect(errorOf2(text, {})).toBe(unset);
  });

  it('reports a trace that is nowhere to be found, with the places it looked', () => {
    const err = errorOf(withTrace('nope.csv'));
    expect(err.issues[0]?.path).toBe('clients.trace.file');
    expect(err.message).toMatch(
      /^x\.yaml:17:17: clients\.trace\.file: "nope\.csv" was not found \(looked for /,
    );
  });
});

function errorOf2(text: string, env: Record<string, string>): string {
  try {
    parseScenarioText(text, 'x.yaml', { env });
  } catch (err) {
    if (isScenarioError(err)) return err.message;
    throw err;
  }
  throw new Error('expected a ScenarioError');
}

describe('loadScenario', () => {
  it('names the file in a read failure', async () => {
    await expect(loadScenario('/nonexistent/s.yaml')).rejects.toThrow(
      '/nonexistent/s.yaml: cannot read the file (ENOENT)',
    );
  });

  it('reads and validates a file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-load-'));
    writeFileSync(join(dir, 's.yaml'), BASE);
    const s = await loadScenario(join(dir, 's.yaml'));
    expect(s.file).toBe(join(dir, 's.yaml'));
  });
});

describe('bounded inputs', () => {
  it('refuses 40,000 unknown keys in bounded time, listing the first 20 in file order and counting the rest', () => {
    const keys = Array.from({ length: 40_000 }, (_, i) => `bogus_${i}: ${i}\n`).join('');
    const err = errorOf(BASE + keys);
    expect(err.issues).toHaveLength(MAX_LISTED_ISSUES);
    expect(err.omitted).toBe(40_000 - MAX_LISTED_ISSUES);
    expect(err.issues[0]!.message).toMatch(/^x\.yaml:18:1: bogus_0: unknown key/);
    expect(err.issues[19]!.message).toMatch(/^x\.yaml:37:1: bogus_19: unknown key/);
    const lines = err.message.split('\n');
    expect(lines).toHaveLength(MAX_LISTED_ISSUES + 1);
    expect(lines.at(-1)).toBe('x.yaml: and 39980 more problems');
  }, 10_000);

  it('still reports repeated keys, by line, with the YAML check done in one pass', () => {
    const err = errorOf(BASE.replace('duration_s: 60\n', 'duration_s: 60\nduration_s: 61\n'));
    expect(err.message).toBe('x.yaml:3:1: YAML: Map keys must be unique');
    const many = Array.from({ length: 30_000 }, () => 'seed: 1\n').join('');
    const big = errorOf(BASE + many);
    expect(big.issues).toHaveLength(MAX_LISTED_ISSUES);
    expect(big.omitted).toBe(30_000 - 1 - MAX_LISTED_ISSUES);
  }, 10_000);

  it('refuses a file over MAX_SCENARIO_BYTES from its size, before reading or parsing it', async () => {
    const d = mkdtempSync(join(tmpdir(), 'sluice-big-'));
    const path = join(d, 'big.yaml');
    // Not YAML at all: a parse would report that, the size check comes first.
    writeFileSync(path, Buffer.alloc(MAX_SCENARIO_BYTES + 1, '['));
    const err = await loadScenario(path).catch((e: unknown) => e);
    expect(isScenarioError(err)).toBe(true);
    expect((err as ScenarioError).message).toBe(
      `${path}: the file is ${MAX_SCENARIO_BYTES + 1} bytes; expected a scenario file of at most ${MAX_SCENARIO_BYTES} bytes (4 MiB) (put long traces in a trace file)`,
    );
    const text = `${BASE}# ${'x'.repeat(MAX_SCENARIO_BYTES)}\n`;
    expect(errorOf(text).message).toMatch(
      /^x\.yaml: the file is \d+ bytes; expected a scenario file of at most/,
    );
    // At the limit, a file is read as usual.
    const ok = join(d, 'ok.yaml');
    writeFileSync(ok, `${BASE}#${' '.repeat(MAX_SCENARIO_BYTES - BASE.length - 2)}\n`);
    expect((await loadScenario(ok)).name).toBe('t');
  });

  it('bounds the numbers: 1e308 requests per second is refused by validation, not by the run', () => {
    expect(errorOf(BASE.replace('rate_per_sec: 5', 'rate_per_sec: 1e308')).message).toBe(
      'x.yaml:17:42: clients.arrival.rate_per_sec: 1e+308 is above the maximum 1000000',
    );
    const cases: [string, string, RegExp][] = [
      ['duration_s: 60', 'duration_s: 1e9', /duration_s: 1000000000 is above the maximum 86400/],
      [
        '  arrival: {kind: poisson, rate_per_sec: 5}',
        '  arrival: {kind: poisson, rate_per_sec: 5}\n  deadline_ms: 1e12',
        /clients\.deadline_ms: 1000000000000 is above the maximum 604800000/,
      ],
      [
        '  arrival: {kind: poisson, rate_per_sec: 5}',
        '  arrival: {kind: poisson, rate_per_sec: 5}\n  prompt_tokens: {kind: fixed, value: 1e300}',
        /clients\.prompt_tokens\.value: 1e\+300 is above the maximum 1000000000/,
      ],
      ['    count: 2', '    count: 5000', /engines\[0\]\.count: 5000 is above the maximum 4096/],
      [
        '    count: 2\n',
        '    count: 4096\n  - profile: llama-3.1-8b-h100\n    count: 1\n',
        /engines: 4097 engines in all is above the maximum 4096/,
      ],
    ];
    for (const [from, to, want] of cases) expect(errorOf(BASE.replace(from, to)).message).toMatch(want);
  });

  it('refuses arrivals that would offer more requests than a run can hold (rate x duration)', () => {
    const text = BASE.replace('duration_s: 60', 'duration_s: 86400').replace(
      'rate_per_sec: 5',
      'rate_per_sec: 1000',
    );
    expect(errorOf(text).message).toMatch(
      /^x\.yaml:\d+:\d+: clients: the arrivals may offer about 86400000 requests over duration_s 86400 .* above the maximum 20000000$/,
    );
    // The shipped hour-long benchmark (1000 req/s for 3600 s) stays well within.
    expect(
      parseScenarioText(
        BASE.replace('duration_s: 60', 'duration_s: 3600').replace('rate_per_sec: 5', 'rate_per_sec: 1000'),
        'x.yaml',
      ).duration_s,
    ).toBe(3600);
  });

  it('refuses a name that could become a path outside the output directory', () => {
    for (const name of ['../escape', '/etc/x', 'a/b', 'a\\\\b', '..', '.']) {
      const err = errorOf(BASE.replace('name: t', `name: ${JSON.stringify(name)}`));
      expect(err.message).toMatch(/^x\.yaml:1:7: name: .* is not a plain name/);
    }
    for (const name of ['default', 'sim-memory-10', 'a..b', 'with space']) {
      expect(parseScenarioText(BASE.replace('name: t', `name: ${JSON.stringify(name)}`), 'x.yaml').name).toBe(
        name,
      );
    }
  });
});
