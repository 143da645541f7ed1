import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FC_FIELD_NAMES, FIELDS, SERVICE_ARGUMENT_FIELDS } from '../../gate/index.js';
import { normaliseMarkdownTables, scenarioJsonSchema } from './docs.js';
import { BASE_FIELD_JSON } from './gate-section.js';
import { ENGINE_PROFILES } from './schema.js';
import { generatedFiles, README_FILE, SCENARIOS_DIR, SCHEMA_FILE } from './write-schema.js';

type Json = Record<string, unknown>;

describe('generated files of the scenario format', () => {
  const generated = generatedFiles();

  it('scenarios/scenario.schema.json is in step with the zod schema (regenerate: npx tsx sim/scenario/write-schema.ts)', () => {
    expect(readFileSync(join(SCENARIOS_DIR, SCHEMA_FILE), 'utf8')).toBe(generated[SCHEMA_FILE]);
  });

  it('scenarios/README.md is in step with the schema and the library, tables aligned or not', () => {
    const committed = readFileSync(join(SCENARIOS_DIR, README_FILE), 'utf8');
    expect(normaliseMarkdownTables(committed)).toBe(normaliseMarkdownTables(generated[README_FILE] ?? ''));
  });

  it('describes every serviceArguments field the rule parser accepts', () => {
    expect(Object.keys(BASE_FIELD_JSON).sort()).toEqual(Object.keys(SERVICE_ARGUMENT_FIELDS).sort());
  });

  it("takes the fc_* bounds from the gate's field table", () => {
    const schema = scenarioJsonSchema();
    const args = (((schema.properties as Json).gate as Json).properties as Json).rule as Json;
    const props = ((args.properties as Json).serviceArguments as Json).properties as Record<string, Json>;
    for (const name of FC_FIELD_NAMES) {
      const spec = FIELDS[name];
      if (spec.kind === 'int') expect(props[name]?.maximum, name).toBe(spec.max);
      else expect(props[name]?.enum, name).toBeDefined();
    }
  });

  it('lists the engine profiles of sim/engine and the analytic modes', () => {
    expect(ENGINE_PROFILES).toEqual(expect.arrayContaining(['llama-3.1-8b-h100', 'exponential', 'fitted']));
    expect(generated[README_FILE]).toContain('`llama-3.1-70b-tp4-h100`');
  });

  it('documents every top-level section in the README', () => {
    for (const section of ['gate', 'telemetry', 'health', 'clients']) {
      expect(generated[README_FILE]).toContain(`### ${section}\n`);
    }
    for (const def of [
      'Arrival',
      'Distribution',
      'Tenant',
      'Retry',
      'EngineGroup',
      'TimelineEvent',
      'Smg',
      'Trace',
    ]) {
      expect(generated[README_FILE]).toContain(`### ${def}\n`);
    }
  });
});
