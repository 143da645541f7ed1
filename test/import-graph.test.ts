import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../sim/scenario/data-files.js';
import { importsOf, importViolations } from './import-graph.js';

const SKIP = new Set(['node_modules', 'dist', 'out', '.git']);

function sources(dir: string, out = new Map<string, string>()): Map<string, string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(e.name)) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) sources(p, out);
    else if (e.name.endsWith('.ts'))
      out.set(relative(REPO_ROOT, p).replaceAll('\\', '/'), readFileSync(p, 'utf8'));
  }
  return out;
}

describe('the import graph', () => {
  it('keeps every house rule across the repository', () => {
    const files = sources(REPO_ROOT);
    files.delete('test/import-graph.test.ts'); // its planted violations below are examples, not imports
    expect(files.size).toBeGreaterThan(300);
    expect(importViolations(files)).toEqual([]);
  });

  it('reads static, side-effect and dynamic imports', () => {
    const src =
      "import a from './a.js';\nimport './b.js';\nexport { c } from '../c.js';\nconst d = await import('./d.js');";
    expect(importsOf(src)).toEqual(['./a.js', './b.js', '../c.js', './d.js']);
  });

  it.each([
    ['sim/run/x.ts', "import { Pool } from '../../gate/pool.js';", 'outside gate/, only gate/index.ts'],
    ['cli/x.ts', "import { parseRule } from '../gate/rule.js';", 'outside gate/, only gate/index.ts'],
    [
      'loadgen/driver/x.ts',
      "import { DECISION_REASONS } from '../../gate/decisions.js';",
      'outside gate/, only gate/index.ts',
    ],
    [
      'gate/x.ts',
      "import { Simulator } from '../sim/kernel/simulator.js';",
      'gate imports nothing outside gate/',
    ],
    ['gate/x.ts', "import { readFileSync } from 'node:fs';", 'gate imports no node: module'],
    ['sim/run/x.ts', "import http from 'node:http';", 'sim imports no network module'],
    ['sim/engine/x.ts', "const u = await import('undici');", 'sim imports no network module'],
    ['reports/x.ts', "import { LoxiProxy } from '../proxy/proxy.js';", 'reports never import proxy/'],
    [
      'sim/run/x.ts',
      "import { writeRunReport } from '../../reports/run-report.js';",
      'sim imports nothing above it',
    ],
    [
      'proxy/x.ts',
      "import { runLoad } from '../loadgen/driver/driver.js';",
      'proxy imports nothing above it',
    ],
    ['sweep/x.ts', "import { main } from '../cli/main.js';", 'sweep imports nothing above it'],
    ['reports/x.ts', "import { runSweep } from '../sweep/sweep.js';", 'reports imports nothing above it'],
    [
      'reports/x.ts',
      "import { runLoad } from '../loadgen/driver/driver.js';",
      'reports imports nothing above it',
    ],
    ['loadgen/driver/x.ts', "import { main } from '../../cli/main.js';", 'loadgen imports nothing above it'],
    [
      'loadgen/shared/x.ts',
      "import { observe } from '../../observe/observe.js';",
      'loadgen imports nothing above it',
    ],
    [
      'loadgen/driver/x.ts',
      "import { startProxy } from '../../proxy/proxy.js';",
      'loadgen imports no proxy/, reports/ or job',
    ],
    [
      'loadgen/emulator/x.ts',
      "import { writeCliffReport } from '../../reports/cliff-report.js';",
      'loadgen imports no proxy/, reports/ or job',
    ],
    [
      'loadgen/shared/x.ts',
      "import { runCliff } from '../../cliff/cliff.js';",
      'loadgen imports no proxy/, reports/ or job',
    ],
  ])('refuses a planted violation: %s importing %s', (file, source, rule) => {
    expect(importViolations(new Map([[file, source]]))).toEqual([expect.objectContaining({ file, rule })]);
  });

  it('allows the gate through its index, and the k6-inlined decision vocabulary from loadgen/shared', () => {
    const ok = new Map([
      ['sim/run/x.ts', "import { Gate } from '../../gate/index.js';"],
      ['loadgen/shared/x.ts', "import { DECISION_REASONS } from '../../gate/decisions.js';"],
      ['gate/policy/x.ts', "import { nearestName } from '../nearest.js';"],
    ]);
    expect(importViolations(ok)).toEqual([]);
  });
});
