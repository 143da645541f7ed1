/**
 * JUnit XML of a check: one testsuite, one testcase per scenario; a failure
 * lists the figures that regressed, system-out the ones that moved within
 * tolerance or improved.
 */
import type { CheckResult, RunDiff, ScenarioCheck } from './check.js';
import { diffLine } from './check-format.js';

/** Escapes text for XML content and attributes; drops characters XML 1.0 cannot hold. */
export function xmlEscape(s: string): string {
  return s
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

function lines(diffs: readonly RunDiff[]): string {
  return diffs.map(diffLine).join('\n');
}

function testcase(s: ScenarioCheck): string {
  const attrs = `classname="sluice.check" name="${xmlEscape(s.name)}" file="${xmlEscape(s.file)}"`;
  const parts: string[] = [];
  if (s.status === 'missing') {
    parts.push(`<failure type="missing-baseline" message="${xmlEscape(s.message ?? 'no baseline')}"/>`);
  } else if (s.status === 'fail') {
    const metrics = [...new Set(s.regressions.map((d) => d.metric))].join(', ');
    parts.push(
      `<failure type="regression" message="${xmlEscape(`regressed: ${metrics}`)}">${xmlEscape(lines(s.regressions))}</failure>`,
    );
  }
  const others = s.moved.filter((d) => d.verdict !== 'regressed');
  if (others.length > 0) parts.push(`<system-out>${xmlEscape(lines(others))}</system-out>`);
  if (parts.length === 0) return `    <testcase ${attrs}/>`;
  return `    <testcase ${attrs}>\n      ${parts.join('\n      ')}\n    </testcase>`;
}

/** The JUnit XML document of a check. */
export function junitXml(result: CheckResult, suiteName = 'sluice check'): string {
  const tests = result.scenarios.length;
  const failures = result.scenarios.filter((s) => s.status !== 'pass').length;
  const counts = `tests="${tests}" failures="${failures}" errors="0" skipped="0"`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${xmlEscape(suiteName)}" tests="${tests}" failures="${failures}" errors="0">`,
    `  <testsuite name="${xmlEscape(suiteName)}" ${counts}>`,
    ...result.scenarios.map(testcase),
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
