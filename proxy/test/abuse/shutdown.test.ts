/**
 * SIGTERM ends `sluice proxy` within its grace even when connections never
 * end by themselves: an idle h2 session and a socket the client half-closed
 * while the accept valve held it unread (CLOSE-WAIT on the proxy's side).
 * The listening socket's close used to wait for every such connection, so
 * one of them blocked shutdown indefinitely.
 */
import http2 from 'node:http2';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  freePort,
  inferH2,
  type ProxyProcess,
  rule,
  sleep,
  spawnProxy,
  TestBackend,
  until,
} from '../helpers.js';

const GRACE_MS = 300;
let b1: TestBackend;

beforeAll(async () => {
  b1 = await new TestBackend('b1').start();
});
afterAll(async () => {
  await b1.stop();
});

/** Starts `sluice proxy` in this process's node (no re-exec child) with one rule on `port`. */
function start(port: number, adminPort: number): ProxyProcess {
  return spawnProxy(['--admin', `127.0.0.1:${adminPort}`, '--shutdown-grace-ms', String(GRACE_MS)], {
    rules: [rule(port, { fc_mode: 'enforce', fc_max_outstanding: 4 }, [b1])],
    // One connection context: the second client connection is held unread by the accept valve.
    env: { ...process.env, SLUICE_PROXY_NODE_FLAGS: '', LLB_PD_MAX_TOTAL_INFLIGHT: '1' },
  });
}

describe('shutdown', () => {
  test('SIGTERM with an idle h2 session and a half-closed socket held unread: exit 0 within the grace', async () => {
    const port = await freePort();
    const p = start(port, await freePort());
    let session: http2.ClientHttp2Session | undefined;
    let held: net.Socket | undefined;
    try {
      expect(await until(() => p.out().includes('management API'), 20_000)).toBe(true);
      session = http2.connect(`http://127.0.0.1:${port}`);
      session.on('error', () => {});
      // The session is served, then left idle (it holds the valve's one context).
      expect((await inferH2(session, { hold: 1 })).status).toBe(200);
      // The valve holds this one unread; the client half-closes it (FIN), which the proxy never reads.
      held = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
      held.on('error', () => {});
      held.write('GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n');
      held.end();
      await sleep(200);
      const t0 = Date.now();
      p.child.kill('SIGTERM');
      const code = await Promise.race([p.exit, sleep(GRACE_MS + 8_000).then(() => 'hung' as const)]);
      const ms = Date.now() - t0;
      expect(code, p.out()).toBe(0);
      // Grace plus a margin for closing the admin listener, the pools and the process itself.
      expect(ms).toBeLessThan(GRACE_MS + 4_000);
    } finally {
      p.child.kill('SIGKILL');
      session?.destroy();
      held?.destroy();
    }
  }, 40_000);
});
