/**
 * What a scenario asks of its (valid) policy that the simulator must be able to give: each
 * `dependency_outage` names a dependency some class's `depends_on` lists, and the policy's `pool`
 * degrades and the scenario's `gate.fallback_pools` match: each pool degrade names a declared
 * fallback pool (reported at its place in the policy file), and each declared fallback pool is
 * named by some pool degrade (reported at `gate.fallback_pools.NAME`; a pool nothing can reach
 * would be engines that change nothing). Behind the proxy, a degrade pool is another rule.
 */
import { LineCounter, parseDocument } from 'yaml';
import { formatFieldPath, type Policy, yamlOffset } from '../../gate/index.js';
import type { PolicyReporter } from './policy-section.js';
import type { ScenarioFile } from './schema.js';

/** The `depends_on` names of `p`, in file order, each once. */
export function dependencyNames(p: Policy): string[] {
  return [...new Set(p.classes.flatMap((c) => c.dependsOn))];
}

/** The `pool` degrade names of `p`, in file order, each once. */
export function degradePoolNames(p: Policy): string[] {
  return [
    ...new Set(p.classes.flatMap((c) => c.degrade.flatMap((d) => (d.kind === 'pool' ? [d.pool] : [])))),
  ];
}

/**
 * Reports each `dependency_outage` of `s` whose name no class of `p` depends on, each `pool`
 * degrade of `p` (placed in the policy file `file`, whose text is `text`) naming no fallback pool
 * of `s`, and each fallback pool of `s` no pool degrade of `p` names.
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
  checkPools(s, p, file, text, report);
}

function checkPools(s: ScenarioFile, p: Policy, file: string, text: string, report: PolicyReporter): void {
  const declared = Object.keys(s.gate.fallback_pools ?? {});
  const used = degradePoolNames(p);
  for (const name of declared)
    if (!used.includes(name))
      report(
        ['gate', 'fallback_pools', name],
        name,
        `"${name}" is named by no pool degrade of ${file} (${used.length > 0 ? `its pool degrades name ${used.join(', ')}` : 'it has no pool degrade'})`,
        used.length > 0
          ? `one of ${used.join(', ')}`
          : `a class of ${file} with { kind: pool, pool: ${name} }`,
      );
  const unknown = p.classes.flatMap((c) =>
    c.degrade.flatMap((d, j) =>
      d.kind === 'pool' && !declared.includes(d.pool) ? [{ cls: c.name, j, pool: d.pool }] : [],
    ),
  );
  if (unknown.length === 0) return;
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc });
  const have = declared.length > 0 ? `the fallback pools are ${declared.join(', ')}` : 'it declares none';
  for (const { cls, j, pool } of unknown) {
    const path = ['classes', cls, 'degrade', j, 'pool'];
    const pos = lc.linePos(yamlOffset(doc, path, false));
    const where = formatFieldPath(path);
    const detail = `"${pool}" is not a fallback pool of the scenario: declare it in gate.fallback_pools (${have})`;
    report(
      ['gate', 'fallback_pools'],
      pool,
      detail,
      declared.length > 0 ? `one of ${declared.join(', ')}` : `gate.fallback_pools.${pool} with its engines`,
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
