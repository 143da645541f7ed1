/**
 * Whether the browser test of the HTML reports runs: it needs Debian's Chromium. Without it,
 * `npm test` on a developer's machine skips that test and says so in one line (with how to install
 * it); under `CI=true` it never skips, and the missing browser fails the test.
 */
import { existsSync } from 'node:fs';

/** The command that installs it (what .ci/run does). */
export const CHROMIUM_INSTALL = 'apt-get install -y chromium';

/** run: Chromium is there; skip: it is not (not in CI); fail: it is not, in CI. */
export type BrowserTestPlan = { action: 'run'; path: string } | { action: 'skip' | 'fail'; line: string };

/** The plan for the environment `env` (SLUICE_CHROMIUM, CI), `exists` checking a path. */
export function browserTestPlan(
  env: Readonly<Record<string, string | undefined>>,
  exists: (path: string) => boolean = existsSync,
): BrowserTestPlan {
  const path = env.SLUICE_CHROMIUM ?? '/usr/bin/chromium';
  if (exists(path)) return { action: 'run', path };
  const ci = env.CI === 'true' || env.CI === '1';
  return ci
    ? {
        action: 'fail',
        line: `the browser test needs Chromium at ${path} and CI=true never skips it: ${CHROMIUM_INSTALL} (or set SLUICE_CHROMIUM)`,
      }
    : {
        action: 'skip',
        line: `sluice: browser test of the HTML reports skipped: no Chromium at ${path}; install it with ${CHROMIUM_INSTALL} (or set SLUICE_CHROMIUM to its path)`,
      };
}
