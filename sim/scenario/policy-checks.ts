/**
 * What a scenario asks of its (valid) policy that the simulator must be able to give: each
 * `dependency_outage` names a dependency some class's `depends_on` lists, and no class declares a
 * `pool` degrade, since a scenario has one pool (one rule and its engines) and so no fallback pool
 * a degraded request could go to (behind the proxy, a degrade pool is another rule).
 */
import { LineCounter, parseDocument } from 'yaml';
import { formatFieldPath, type Policy, yamlOffset } from '../../gate/index.js';
import type { PolicyReporter } from './policy-section.js';
import type { ScenarioFile } from './schema.js';

/** The `depends_on` names of `p`, in file order, each once. */
export function dependencyNames(p: Policy): string[] {
  return [...new Set(p.classes.flatMap((c) => c.dependsOn))];
}

/**
 * Reports each `dependency_outage` of `s` whose name no class of `p` depends on, and each `pool`
 * degrade of `p` (placed in the policy file `file`, whose text is `text`).
 */
export function checkPolicyUse(
  s: ScenarioFile,
  p: Policy,
  file: string,
  text: string,
  report: PolicyReporter,
): void {
  const deps = dependencyNames(p);
  s.timeline.forEach((ev, i) => {
    if (ev.event !== 'dependency_outage' || deps.includes(ev.name)) return;
    report(
      ['timeline', i, 'name'],
      ev.name,
      `"${ev.name}" is not a dependency of ${file}: no class lists it in depends_on (${deps.length > 0 ? `the dependencies are ${deps.join(', ')}` : 'no class has depends_on'})`,
      deps.length > 0 ? `one of ${deps.join(', ')}` : `a class of ${file} with depends_on (none has one)`,
    );
  });
  const pools = p.classes.flatMap((c) =>
    c.degrade.flatMap((d, j) => (d.kind === 'pool' ? [{ cls: c.name, j, pool: d.pool }] : [])),
  );
  if (pools.length === 0) return;
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc });
  for (const { cls, j, pool } of pools) {
    const path = ['classes', cls, 'degrade', j, 'pool'];
    const pos = lc.linePos(yamlOffset(doc, path, false));
    const where = formatFieldPath(path);
    const detail = `a pool degrade ("${pool}") cannot run in the simulator: a scenario has one pool (its rule and its engines), so there is no fallback pool to send the request to; use a max_tokens degrade in the scenario's policy, or run this policy behind sluice proxy`;
    report(
      ['gate', 'policy'],
      pool,
      detail,
      'a max_tokens degrade here; pool degrades run behind sluice proxy',
      {
        file,
        line: pos.line,
        col: pos.col,
        path: where,
        message: `${file}:${pos.line}:${pos.col}: ${where}: ${detail}`,
      },
    );
  }
}
