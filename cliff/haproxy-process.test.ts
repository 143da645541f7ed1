/**
 * HAProxy as a child process (cliff/haproxy-process.ts), run for real on loopback: it proxies once
 * it is reported started, it is gone once closed, and a configuration it refuses or cannot run
 * fails the start with HAProxy's words and leaves nothing running. Skipped, with a line saying
 * so, where HAProxy is not installed.
 */
import { createServer, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haproxyConfig } from './haproxy.js';
import { acceptsConnections, findHaproxy, type RunningHaproxy, startHaproxy } from './haproxy-process.js';

const found = findHaproxy();
if (!found.ok) process.stderr.write(`sluice: HAProxy process tests skipped: ${found.why}\n`);

const listen = (s: net.Server): Promise<number> =>
  new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)));

const freePort = async (): Promise<number> => {
  const s = net.createServer();
  const port = await listen(s);
  await new Promise((r) => s.close(r));
  return port;
};

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const configFor = (servers: number[], port: number): string =>
  haproxyConfig({ servers, maxconnPerServer: 4, queueDepth: 4, queueWaitMs: 1000, port });

// In CI (.ci/run installs HAProxy) a missing binary fails the tests instead of skipping them.
describe.skipIf(!found.ok && process.env.CI !== 'true')('HAProxy as a child process', () => {
  const bin = found.ok ? found.path : '';
  let backend: Server;
  let backendPort = 0;
  beforeAll(async () => {
    backend = createServer((_req, res) => res.end('from the backend'));
    backendPort = await listen(backend);
  });
  afterAll(() => new Promise<void>((r) => backend.close(() => r())));

  it('proxies once started, and is gone once closed (close is idempotent)', async () => {
    const port = await freePort();
    const hp: RunningHaproxy = await startHaproxy(bin, configFor([backendPort], port), port, { quiet: true });
    try {
      expect(hp.target).toBe(`http://127.0.0.1:${port}`);
      expect(hp.config).toContain(`bind 127.0.0.1:${port}`);
      expect(hp.pid).toBeGreaterThan(0);
      const res = await fetch(`${hp.target}/v1/models`);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('from the backend');
    } finally {
      await hp.close();
    }
    expect(alive(hp.pid)).toBe(false);
    expect(await acceptsConnections(port)).toBe(false);
    await hp.close();
  }, 20_000);

  it('kill() stops it at once', async () => {
    const port = await freePort();
    const hp = await startHaproxy(bin, configFor([backendPort], port), port, { detached: true });
    hp.kill();
    await hp.close();
    expect(alive(hp.pid)).toBe(false);
  }, 20_000);

  it('refuses a configuration HAProxy rejects, with its message, before starting anything', async () => {
    const port = await freePort();
    let spawned = 0;
    const bad = `${configFor([backendPort], port)}    no-such-keyword 1\n`;
    await expect(startHaproxy(bin, bad, port, { onSpawn: () => spawned++ })).rejects.toThrow(
      /haproxy refused the generated config: .*no-such-keyword/s,
    );
    expect(spawned).toBe(0);
  }, 20_000);

  it('fails the start with its stderr when it exits at once, and leaves it stopped', async () => {
    const port = await freePort();
    // 192.0.2.1 (TEST-NET-1) is no local address: the configuration checks, the bind fails.
    const config = configFor([backendPort], port).replace('bind 127.0.0.1:', 'bind 192.0.2.1:');
    let pid = -1;
    const start = startHaproxy(bin, config, port, {
      onSpawn: (p) => {
        pid = p;
      },
    });
    await expect(start).rejects.toThrow(/haproxy exited with code \d+: .*bind/is);
    expect(pid).toBeGreaterThan(0);
    expect(alive(pid)).toBe(false);
  }, 20_000);

  it('fails the start when it does not listen on the awaited port, and leaves it stopped', async () => {
    const bound = await freePort();
    const awaited = await freePort();
    let pid = -1;
    const start = startHaproxy(bin, configFor([backendPort], bound), awaited, {
      onSpawn: (p) => {
        pid = p;
      },
    });
    await expect(start).rejects.toThrow(`haproxy did not listen on 127.0.0.1:${awaited} within 5000 ms`);
    expect(alive(pid)).toBe(false);
    expect(await acceptsConnections(bound)).toBe(false);
  }, 20_000);
});
