/**
 * The new bounds reach the process through `sluice proxy` flags: a silent
 * backend is 504 backend_timeout under --backend-headers-timeout-ms, a
 * stalled body 408 under --body-timeout-ms, and a refusal is one sec.ai.deny
 * JSON line on stderr.
 */
import { expect, test } from 'vitest';
import { freePort, infer, rule, spawnProxy, until } from '../helpers.js';
import { rawClient, silentBackend } from './raw-backend.js';

test('--backend-headers-timeout-ms, --body-timeout-ms and the stderr sec.ai.deny line, end to end', async () => {
  const silent = await silentBackend();
  const port = await freePort();
  const p = spawnProxy(
    [
      '--admin',
      `127.0.0.1:${await freePort()}`,
      '--health-interval-ms',
      '0',
      '--backend-headers-timeout-ms',
      '300',
      '--body-timeout-ms',
      '300',
    ],
    { rules: [rule(port, { fc_mode: 'enforce', fc_max_outstanding: 1 }, [silent])] },
  );
  const { child, exit } = p;
  try {
    expect(await until(() => p.out().includes('management API'), 20_000)).toBe(true);
    // One holds the unit until its backend time limit, the other is refused (whichever came first).
    const [refused, held] = (await Promise.all([infer(port), infer(port)])).sort(
      (a, b) => a.status - b.status,
    );
    expect(held!.status).toBe(504);
    expect(JSON.parse(held!.body).error).toBe('backend_timeout');
    expect(refused!.status).toBe(429);
    expect(await until(() => p.err().includes('"event":"sec.ai.deny"'), 5_000)).toBe(true);
    const line = p
      .err()
      .split('\n')
      .find((l) => l.includes('"event":"sec.ai.deny"'))!;
    expect(JSON.parse(line)).toMatchObject({ service: `127.0.0.1:${port}`, decision: 'refuse', model: 'm' });
    const stalled = await rawClient(
      port,
      'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
    );
    expect(stalled.text).toMatch(/^HTTP\/1.1 408/);
  } finally {
    child.kill('SIGTERM');
    await exit;
    await silent.close();
  }
}, 30_000);
