import { describe, expect, it } from 'vitest';
import { browserTestPlan } from './chromium.js';

const none = () => false;

describe('the browser test without Chromium', () => {
  it('is skipped on a developer machine, with one line saying how to install it', () => {
    const p = browserTestPlan({}, none);
    expect(p.action).toBe('skip');
    if (p.action === 'run') throw new Error('unreachable');
    expect(p.line).toBe(
      'sluice: browser test of the HTML reports skipped: no Chromium at /usr/bin/chromium; install it with apt-get install -y chromium (or set SLUICE_CHROMIUM to its path)',
    );
  });

  it('is never skipped under CI=true: it fails, naming the path and the install command', () => {
    const p = browserTestPlan({ CI: 'true', SLUICE_CHROMIUM: '/opt/chromium' }, none);
    expect(p.action).toBe('fail');
    if (p.action === 'run') throw new Error('unreachable');
    expect(p.line).toContain('/opt/chromium');
    expect(p.line).toContain('apt-get install -y chromium');
  });

  it('runs wherever Chromium is found, SLUICE_CHROMIUM first', () => {
    expect(browserTestPlan({ SLUICE_CHROMIUM: '/opt/c' }, (p) => p === '/opt/c')).toEqual({
      action: 'run',
      path: '/opt/c',
    });
    expect(browserTestPlan({ CI: 'true' }, (p) => p === '/usr/bin/chromium').action).toBe('run');
  });
});
