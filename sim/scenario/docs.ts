/**
 * The JSON Schema of scenario files, generated from the zod schema, and the format reference in
 * `scenarios/README.md`, generated from that JSON Schema, so the validator, the editor schema and
 * the documentation never disagree.
 */
import { z } from 'zod';
import { MAX_TRACE_LINE_CHARS } from '../clients/trace-files.js';
import { MAX_LISTED_ISSUES } from './errors.js';
import { MAX_SCENARIO_BYTES } from './load.js';
import { JSON_OVERRIDES, SCENARIO_LIMITS, scenarioFileSchema } from './schema.js';

type Json = Record<string, unknown>;

/** The JSON Schema (draft-07) of a scenario file, as the editor sees it (input: defaults optional). */
export function scenarioJsonSchema(): Json {
  const schema = z.toJSONSchema(scenarioFileSchema, {
    target: 'draft-07',
    io: 'input',
    unrepresentable: 'any',
    override: ({ zodSchema, jsonSchema }) => {
      const replacement = JSON_OVERRIDES.get(zodSchema as z.core.$ZodType);
      if (replacement === undefined) return;
      const target = jsonSchema as Json;
      const description = target.description;
      for (const k of Object.keys(target)) delete target[k];
      Object.assign(target, replacement());
      if (typeof description === 'string' && target.description === undefined)
        target.description = description;
    },
  }) as Json;
  return schema;
}

/** The text of `scenarios/scenario.schema.json`. */
export function renderSchemaFile(): string {
  return `${JSON.stringify(scenarioJsonSchema(), null, 2)}\n`;
}

// ---------------------------------------------------------------------------------------------
// README

/** A scenario of the library, for the README's index. */
export interface LibraryEntry {
  file: string;
  description: string;
}

const esc = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function anchor(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '-');
}

function typeText(s: Json): string {
  if (typeof s.$ref === 'string') {
    const name = s.$ref.split('/').pop() ?? s.$ref;
    return `[${name}](#${anchor(name)})`;
  }
  if (Array.isArray(s.enum)) return s.enum.map((v) => `\`${String(v)}\``).join(' \\| ');
  if (s.const !== undefined) return `\`${String(s.const)}\``;
  const all = s.allOf as Json[] | undefined;
  if (Array.isArray(all) && all.length === 1 && all[0] !== undefined) return typeText(all[0]);
  const alts = (s.anyOf ?? s.oneOf) as Json[] | undefined;
  if (Array.isArray(alts)) return alts.map(typeText).join(' or ');
  const t = s.type;
  if (Array.isArray(t)) return t.join(' or ');
  if (t === 'array') return `list of ${typeText((s.items as Json | undefined) ?? {})}`;
  if (t === 'object') return 'mapping';
  if (t === 'integer' || t === 'number') {
    const parts: string[] = [];
    const lo = s.minimum as number | undefined;
    const hi = s.maximum as number | undefined;
    const xlo = s.exclusiveMinimum as number | undefined;
    if (xlo !== undefined) parts.push(`> ${xlo}`);
    else if (lo !== undefined && lo > -1e15) parts.push(`>= ${lo}`);
    if (hi !== undefined && hi < 1e15) parts.push(`<= ${hi}`);
    return `${t}${parts.length ? ` ${parts.join(', ')}` : ''}`;
  }
  if (t === 'string') return 'string';
  if (t === 'boolean') return 'boolean';
  return 'any';
}

function rows(s: Json, prefix: string, out: string[], recurse: boolean): void {
  const props = (s.properties ?? {}) as Record<string, Json>;
  const required = new Set((s.required ?? []) as string[]);
  for (const [name, p] of Object.entries(props)) {
    if (name === '$schema') continue;
    const full = `${prefix}${name}`;
    const dflt =
      p.default === undefined
        ? required.has(name)
          ? '**required**'
          : ''
        : `\`${JSON.stringify(p.default)}\``;
    out.push(`| \`${full}\` | ${typeText(p)} | ${dflt} | ${esc(String(p.description ?? ''))} |`);
    if (!recurse) continue;
    if (p.type === 'object' && p.properties !== undefined) rows(p, `${full}.`, out, true);
    const items = p.items as Json | undefined;
    if (p.type === 'array' && items?.type === 'object' && items.properties !== undefined) {
      rows(items, `${full}[].`, out, true);
    }
  }
}

function table(s: Json, prefix = '', recurse = true): string {
  const out = ['| field | type | default | meaning |', '| --- | --- | --- | --- |'];
  rows(s, prefix, out, recurse);
  return out.join('\n');
}

function definitionSection(name: string, def: Json): string {
  const parts = [`### ${name}`, '', String(def.description ?? '')];
  const variants = (def.oneOf ?? def.anyOf) as Json[] | undefined;
  if (Array.isArray(variants)) {
    for (const v of variants) {
      const props = (v.properties ?? {}) as Record<string, Json>;
      const tag = Object.entries(props).find(([, p]) => p.const !== undefined);
      const title = tag ? `${tag[0]}: ${String(tag[1].const)}` : 'variant';
      parts.push('', `#### ${title}`, '', String(v.description ?? ''), '', table(v));
    }
  } else parts.push('', table(def));
  return parts.join('\n');
}

const INTRO = `# Scenario files

A scenario is one situation to put an admission gate through: the gate (a loxilb rule, pasted as
you would POST it, or the SMG dialect), the simulated vLLM engines behind it, the clients in front
of it, the telemetry and health checks between them, and a timeline of things that happen. The
simulator (\`sluice run\`) and the load generators read the same files. \`sluice validate <file>\`
checks one.

<!-- Generated by sim/scenario/write-schema.ts from the zod schema in sim/scenario/schema.ts;
     a test fails when this file and the schema disagree. Regenerate with
     \`npx tsx sim/scenario/write-schema.ts\`. -->

Every file starts with

\`\`\`yaml
# yaml-language-server: $schema=./scenario.schema.json
\`\`\`

so editors with the YAML language server complete and check fields against
[scenario.schema.json](./scenario.schema.json), which is generated from the validator.

## Conventions

- **Strict.** An unknown key anywhere is an error, with a "did you mean" hint when one is close.
- **Names.** YAML keys are snake_case, except inside \`gate.rule\`, which uses exactly the loxilb
  management API's names (\`serviceArguments\`, \`fc_max_outstanding\`, \`endpointIP\`, ...), and
  \`gate.smg\`, which uses SMG's setting names (\`max_concurrent_requests\`, ...).
- **Units are in the names.** \`_s\` seconds, \`_ms\` milliseconds, \`_per_sec\` per second,
  \`_share\` and \`_probability\` a fraction from 0 to 1. Scenario-level times (\`duration_s\`, \`at_s\`)
  are seconds; client-model times (arrival processes, think times, deadlines) are milliseconds of
  virtual time from the start of the run, as the client models take them. Times are rounded to
  whole milliseconds.
- **Defaults.** A field with a default may be left out. An arrival process without \`duration_ms\`
  runs to the end of the run; closed-loop users stop at the end of the run.
- **Warm-up.** Requests that arrive in the first \`warmup_s\` seconds run but are left out of the
  statistics.
- **The gate rule is checked by the gate's own code**, field by field, so a bad value reads as the
  management API would refuse it, under its scenario path:
  \`gate.rule.serviceArguments.fc_max_queue_depth: 70000 is above the maximum 65536\`.
- **Engines and endpoints.** Each engine sits behind one endpoint of the pool. Give the engines in
  \`engines\` (and omit \`gate.rule.endpoints\` to generate one endpoint per engine, \`10.0.0.1:8000\`,
  \`10.0.0.2:8000\`, ...), or paste explicit \`gate.rule.endpoints\` (paired in order with the
  engines; their weights win), or give the engine groups themselves as \`gate.rule.endpoints\`
  (\`{count, profile, role, ...}\`) and leave \`engines\` out.
- **Endpoint selectors** in the timeline and telemetry outages are endpoint indexes in pool order
  (from 0), \`IP:port\` ids, or engine group names (every engine of the group). With
  \`pool: NAME\` (on \`endpoint_down\`, \`endpoint_up\`, \`flap\` and \`engine_slowdown\`) the
  event acts on that fallback pool's engines instead, and its selectors are that pool's: indexes
  within it from 0, its \`IP:port\` ids, its group names.
- **Fallback pools.** With \`gate.policy\`, \`gate.fallback_pools\` declares the pools a policy's
  \`degrade: [{ kind: pool, pool: NAME }]\` sends requests to, each with engines of its own
  (\`small: { engines: [{ profile: llama-3.1-8b-h100, count: 1 }] }\`; endpoints
  \`10.100.0.1:8000\`, ... for the first pool, \`10.101.0.1:8000\` for the second). As behind the
  proxy, a degraded request goes past every gate straight to an engine of the pool (round-robin
  over those up), and a pool is available while it has an engine up and maintenance is off. Each
  pool degrade must name a declared pool and each declared pool must be named by one. A
  timeline engine event with \`pool: NAME\` takes that pool's engines down (the requests on them
  fail, as on the main pool), brings them back or slows them: while none of a pool's engines is
  up the pool is not available and the policy takes its next degrade option or disposition.
  \`scrape_outage\`, \`capacity_loss\` and telemetry outages address the main pool only (no gate
  scrapes a fallback pool). The summary's \`policy.fallback_pools\` gives each pool's figures
  (docs/policy.md).
- **Trace files.** \`clients.trace.file\` may use \`\${VAR}\` from the environment (e.g.
  \`\${SLUICE_DATA}/azure-llm-2023-conv.csv\`). A relative path is looked up, in order: relative to the
  scenario file, relative to the working directory, then as \`data/<basename>\` of the repository
  (the public traces Sluice ships, with their sources in \`data/SOURCES.md\`).

## Errors

Every problem in a file is reported at once, one per line, as
\`file:line:col: path: what is wrong\`, in one error with the code \`SLUICE_E_SCENARIO\`:

\`\`\`text
scenarios/x.yaml:9:1: warmup: unknown key (did you mean warmup_s?)
scenarios/x.yaml:26:27: gate.rule.serviceArguments.fc_max_queue_depth: 70000 is above the maximum 65536
scenarios/x.yaml:35:42: clients.arrival.rate_per_sec: -3 is not above 0
\`\`\`
`;

/** The bounds of a scenario file and its numbers, from the constants the loader checks. */
function limitsSection(): string {
  const L = SCENARIO_LIMITS;
  const n = (x: number): string => x.toLocaleString('en-US');
  return [
    '## Limits',
    '',
    'Bounds far above any real scenario, so that `sluice validate` refuses what `sluice run` could not do.',
    'Each is checked before the run starts, and a file past one is refused (exit 2) with the field, the',
    'value and the bound.',
    '',
    '| bound | limit |',
    '| --- | --- |',
    `| scenario file size (checked before parsing) | ${n(MAX_SCENARIO_BYTES)} bytes (4 MiB) |`,
    `| problems listed per file (the rest counted: "and N more problems") | ${MAX_LISTED_ISSUES} |`,
    `| trace file line (\`clients.trace.file\`) | ${n(MAX_TRACE_LINE_CHARS)} characters |`,
    `| \`name\` | ${128} characters, no \`/\`, \`\\\`, control characters, not \`.\` or \`..\` (it names output directories) |`,
    `| any \`_per_sec\` rate of one arrival process | ${n(L.ratePerSec)} requests/s |`,
    `| requests the arrivals may offer (peak rates added, times \`duration_s\`) | ${n(L.offeredRequests)} |`,
    `| \`duration_s\` of the run | 86,400 s (1 day) |`,
    `| any other time | ${n(L.ms)} ms, ${n(L.s)} s (7 days) |`,
    `| engines over all groups | ${n(L.engines)} |`,
    `| closed-loop \`users\` | ${n(L.users)} |`,
    `| \`spike_count\` | ${n(L.spikeCount)} |`,
    `| counts (arrivals, retries, requests per user, cycles) | ${n(L.count)} |`,
    `| other numbers (token counts, weights, speedups, distribution values) | ±${n(L.value)} |`,
    '',
  ].join('\n');
}

/** The text of `scenarios/README.md`: conventions, the library, and the reference generated from the schema. */
export function renderReadme(library: readonly LibraryEntry[]): string {
  const schema = scenarioJsonSchema();
  const defs = (schema.definitions ?? {}) as Record<string, Json>;
  const props = (schema.properties ?? {}) as Record<string, Json>;
  const parts: string[] = [INTRO, limitsSection()];
  parts.push('## The library', '', '| file | what it demonstrates |', '| --- | --- |');
  for (const e of library) parts.push(`| [${e.file}](./${e.file}) | ${esc(e.description)} |`);
  parts.push(
    '',
    '## Reference',
    '',
    '### Top level',
    '',
    String(schema.description ?? ''),
    '',
    table(schema, '', false),
  );
  for (const [name, p] of Object.entries(props)) {
    if (p.type === 'object' && p.properties !== undefined) {
      parts.push('', `### ${name}`, '', String(p.description ?? ''), '', table(p, `${name}.`));
    }
  }
  for (const [name, def] of Object.entries(defs)) parts.push('', definitionSection(name, def));
  return `${parts.join('\n')}\n`;
}

/**
 * A Markdown text with table cells trimmed and delimiter rows reduced to `---`, so a generated file
 * and the same file after a formatter aligned its tables compare equal.
 */
export function normaliseMarkdownTables(text: string): string {
  return text
    .split('\n')
    .map((line) => {
      if (!line.startsWith('|')) return line;
      const cells = line
        .split(/(?<!\\)\|/)
        .slice(1, -1)
        .map((c) => c.trim())
        .map((c) => (/^-{3,}$/.test(c) ? '---' : c));
      return `|${cells.join('|')}|`;
    })
    .join('\n');
}
