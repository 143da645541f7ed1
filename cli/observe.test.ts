import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ProcessResult, sluiceProcess as runSluice } from './test/process.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-obs-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sluice = (...args: string[]): Promise<ProcessResult> => runSluice(args);

const rule = join(dir, 'rule.json');
writeFileSync(
  rule,
  JSON.stringify({
    serviceArguments: {
      externalIP: '192.0.2.10',
      port: 8080,
      mode: 4,
      sse_mode: true,
      fc_max_outstanding: 8,
    },
    endpoints: [{ endpointIP: '198.51.100.11', targetPort: 8000 }],
  }),
);

describe('sluice observe', () => {
  it('reports the line of a malformed trace line and exits 2; --skip-bad-lines counts it and goes on', async () => {
    const trace = join(dir, 't.csv');
    writeFileSync(
      trace,
      [
        'TIMESTAMP,ContextTokens,GeneratedTokens',
        '2023-11-16 18:15:46.6805900,374,44',
        '2023-11-16 18:15:50.9951690,lots,50',
        '2023-11-16 18:15:51.9951690,400,30',
        '',
      ].join('\n'),
    );
    const bad = await sluice('observe', '--trace', trace, '--rule', rule);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('t.csv:3');
    const ok = await sluice('observe', '--trace', trace, '--rule', rule, '--skip-bad-lines', '--json');
    expect(ok.code).toBe(0);
    const r = JSON.parse(ok.stdout) as { trace: { requests: number; bad_lines: number } };
    expect([r.trace.requests, r.trace.bad_lines]).toEqual([2, 1]);
  });

  it('exits 2 on a rule that is not JSON and on an unknown format, naming them', async () => {
    const notJson = join(dir, 'bad.json');
    writeFileSync(notJson, '{nope');
    const a = await sluice('observe', '--trace', 'data/azure-llm-2023-code.csv', '--rule', notJson);
    expect([a.code, a.stderr.includes('--rule')]).toEqual([2, true]);
    const b = await sluice('observe', '--trace', 'x.txt', '--rule', rule);
    expect([b.code, b.stderr.includes('--format')]).toEqual([2, true]);
  });
});
