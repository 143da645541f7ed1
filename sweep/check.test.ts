import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyBaseline, readBaseline, writeBaseline } from './baseline.js';
import {
  CHECK_KIND,
  compareWithBaseline,
  runScenarios,
  type ScenarioRuns,
  updatedBaseline,
} from './check.js';
import { checkText } from './check-format.js';
import { junitXml } from './junit.js';
import { tinyLoxilb } from './test/fixtures.js';
import { assertWellFormedXml } from './test/xml-helpers.js';
import { compareFigure, parseTolerance, toleranceOf, toleranceTable } from './tolerance.js';

describe('--tolerance', () => {
  it('reads a relative tolerance, optionally plus an absolute one', () => {
    expect(parseTolerance('goodput_rps=0.05')).toEqual({
      metric: 'goodput_rps',
      tolerance: { rel: 0.05, abs: 0 },
    });
    expect(parseTolerance('ttft_p95_ms=0.02+50')).toEqual({
      metric: 'ttft_p95_ms',
      tolerance: { rel: 0.02, abs: 50 },
    });
    expect(parseTolerance('*=0.01').metric).toBe('*');
  });

  it('lets a metric override *, and * override the default', () => {
    const t = toleranceTable(['*=0.01', 'shed_rate=0+0.02']);
    expect(toleranceOf(t, 'shed_rate')).toEqual({ rel: 0, abs: 0.02 });
    expect(toleranceOf(t, 'goodput_rps')).toEqual({ rel: 0.01, abs: 0 });
    expect(toleranceOf({}, 'goodput_rps')).toEqual({ rel: 1e-6, abs: 0.001 });
  });

  it('refuses unknown metrics and negative or missing values', () => {
    expect(() => parseTolerance('goodput_rp=0.05')).toThrow(
      /unknown metric "goodput_rp" \(did you mean goodput_rps\?\)/,
    );
    expect(() => parseTolerance('goodput_rps=-1')).toThrow(
      'the relative tolerance "-1" is not a number >= 0',
    );
    expect(() => parseTolerance('goodput_rps')).toThrow('expected METRIC=REL or METRIC=REL+ABS');
  });
});

describe('comparing a figure with its baseline', () => {
  const t = { rel: 0.05, abs: 0.5 };
  it('allows abs + rel × |baseline|, and reads the direction from the metric', () => {
    expect(compareFigure('goodput_rps', 10, 10, t).verdict).toBe('same');
    expect(compareFigure('goodput_rps', 10, 9, t)).toMatchObject({
      verdict: 'within',
      delta: -1,
      allowed: 1,
    });
    expect(compareFigure('goodput_rps', 10, 8.9, t).verdict).toBe('regressed');
    expect(compareFigure('goodput_rps', 10, 11.1, t).verdict).toBe('improved');
    expect(compareFigure('ttft_p95_ms', 1000, 1100, t).verdict).toBe('regressed');
    expect(compareFigure('ttft_p95_ms', 1000, 900, t).verdict).toBe('improved');
  });

  it('counts a figure that appears or disappears as a regression', () => {
    expect(compareFigure('ttft_p95_ms', 1000, null, t).verdict).toBe('regressed');
    expect(compareFigure('ttft_p95_ms', null, null, t).verdict).toBe('same');
  });
});

describe('sluice check', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-check-'));
  let runs: ScenarioRuns[] = [];
  beforeAll(async () => {
    runs = await runScenarios([tinyLoxilb()], 2, { workers: 0 });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('passes against a baseline of the same runs, which round-trips through its file', () => {
    const path = join(dir, 'baseline.json');
    writeBaseline(path, updatedBaseline(emptyBaseline(), runs));
    const result = compareWithBaseline(runs, readBaseline(path), {});
    expect(result.failed).toBe(false);
    expect(result.scenarios).toEqual([
      { name: 'tiny', file: 'tiny.yaml', status: 'pass', moved: [], regressions: [] },
    ]);
    expect(checkText(result)).toContain('Nothing moved: every figure equals the baseline.');
  });

  it('detects a goodput regression and lists it in the table and the JUnit failure', () => {
    const baseline = updatedBaseline(emptyBaseline(), runs);
    const run0 = baseline.scenarios.tiny!.runs[0]!;
    const was = run0.figures.goodput_rps as number;
    run0.figures.goodput_rps = was + 1;
    const result = compareWithBaseline(runs, baseline, {});
    expect(result.failed).toBe(true);
    const s = result.scenarios[0]!;
    expect(s.status).toBe('fail');
    expect(s.regressions).toHaveLength(1);
    expect(s.regressions[0]).toMatchObject({
      metric: 'goodput_rps',
      seed: 7,
      baseline: was + 1,
      current: was,
    });
    const text = checkText(result);
    expect(text).toMatch(/tiny\s+7\s+goodput_rps\s+.*REGRESSED/);
    expect(text).toContain('tiny  FAIL  regressed: goodput_rps');
    const xml = junitXml(result);
    expect(assertWellFormedXml(xml)).toBe('testsuites');
    expect(xml).toContain('<testsuite name="sluice check" tests="1" failures="1" errors="0" skipped="0">');
    expect(xml).toContain('<failure type="regression" message="regressed: goodput_rps">goodput_rps seed 7: ');
  });

  it('does not fail an improvement or a move within tolerance, but shows it', () => {
    const baseline = updatedBaseline(emptyBaseline(), runs);
    const f = baseline.scenarios.tiny!.runs[1]!.figures;
    f.goodput_rps = (f.goodput_rps as number) - 1;
    f.ttft_p95_ms = (f.ttft_p95_ms as number) + 0.0005;
    const result = compareWithBaseline(runs, baseline, {});
    expect(result.failed).toBe(false);
    expect(result.scenarios[0]!.moved.map((d) => d.verdict)).toEqual(['improved', 'within']);
    expect(assertWellFormedXml(junitXml(result))).toBe('testsuites');
  });

  it('fails a scenario the baseline does not have, with a testcase saying how to add it', () => {
    const result = compareWithBaseline(runs, emptyBaseline(), {});
    expect(result.failed).toBe(true);
    expect(result.scenarios[0]!.status).toBe('missing');
    const xml = junitXml(result);
    assertWellFormedXml(xml);
    expect(xml).toContain('message="no baseline for tiny; add it with --update-baseline"');
  });

  it('escapes XML in names and messages', () => {
    const xml = junitXml({
      kind: CHECK_KIND,
      failed: true,
      scenarios: [
        { name: 'a<b>&"c"', file: "x'.yaml", status: 'missing', message: '<&>', moved: [], regressions: [] },
      ],
    });
    assertWellFormedXml(xml);
    expect(xml).toContain('name="a&lt;b&gt;&amp;&quot;c&quot;" file="x&apos;.yaml"');
  });
});

describe('check --json', () => {
  it('names its kind and version first, as size --json does', () => {
    const result = compareWithBaseline([], emptyBaseline(), {});
    const json = JSON.parse(JSON.stringify(result)) as Record<string, unknown>;
    expect(Object.keys(json)[0]).toBe('kind');
    expect(json.kind).toBe('sluice.check/v1');
  });
});
