/**
 * The clients' tool time (`tool_ms` per declared `envelope.tool_calls`): which clients spend any,
 * and the checks that a tool time is not a setting that changes nothing (a `tool_ms` with no tool
 * call to time, a `tool_slowdown` with no tool time to slow).
 */
import type { ClientsSpec } from './schema.js';

type Path = (string | number)[];
type Report = (path: Path, value: unknown, detail: string, expected: string) => void;

/**
 * Whether some client spends tool time: a tenant (or the workload, without tenants) whose own or
 * inherited `tool_ms` is given and whose own or inherited `envelope.tool_calls` is at least 1.
 */
export function declaresToolTime(c: ClientsSpec): boolean {
  const tenants = c.tenants ?? [];
  if (tenants.length === 0) return c.tool_ms !== undefined && (c.envelope?.tool_calls ?? 0) > 0;
  return tenants.some(
    (t) =>
      (t.tool_ms ?? c.tool_ms) !== undefined && (t.envelope?.tool_calls ?? c.envelope?.tool_calls ?? 0) > 0,
  );
}

/**
 * Whether the envelope at `path` (`['clients', 'envelope']` or `['clients', 'tenants', i,
 * 'envelope']`) belongs to a client with a tool time: then its `tool_calls` drive the run even
 * without a policy (the tool phase), so they are not a policy-only setting.
 */
export function envelopeHasToolTime(c: ClientsSpec, path: Path): boolean {
  const tenants = c.tenants ?? [];
  if (path[1] === 'tenants') {
    const t = tenants[path[2] as number];
    return t !== undefined && (t.tool_ms ?? c.tool_ms) !== undefined;
  }
  return c.tool_ms !== undefined || tenants.some((t) => t.tool_ms !== undefined);
}

/** Reports a `tool_ms` that times no tool call: its tenant (or, at the workload, every client) declares none. */
export function checkToolTime(c: ClientsSpec, report: Report): void {
  const tenants = c.tenants ?? [];
  const callsOf = (i: number): number => tenants[i]?.envelope?.tool_calls ?? c.envelope?.tool_calls ?? 0;
  tenants.forEach((t, i) => {
    if (t.tool_ms !== undefined && callsOf(i) === 0)
      report(
        ['clients', 'tenants', i, 'tool_ms'],
        t.tool_ms.kind,
        'is given but the tenant declares no tool calls',
        "envelope.tool_calls >= 1 (the tenant's or the workload's), or no tool_ms",
      );
  });
  if (c.tool_ms === undefined) return;
  const anyCalls =
    tenants.length === 0
      ? (c.envelope?.tool_calls ?? 0) > 0
      : tenants.some((t, i) => t.tool_ms === undefined && callsOf(i) > 0);
  if (!anyCalls)
    report(
      ['clients', 'tool_ms'],
      c.tool_ms.kind,
      tenants.length === 0
        ? 'is given but the clients declare no tool calls'
        : 'is given but no tenant that inherits it declares tool calls',
      'envelope.tool_calls >= 1 for a client that uses it, or no clients.tool_ms',
    );
}
