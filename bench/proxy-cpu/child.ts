/**
 * Child of `bench:proxy-cpu`: the proxy (`LoxiProxy`) of the checkout given as argv[2], alone in
 * its process, with one gated rule in front of the parent's backend. It reports its own CPU time
 * between two messages of the parent, so the figure is the proxy's alone.
 */
import { pathToFileURL } from 'node:url';

interface Msg {
  kind: 'start' | 'stop' | 'exit';
}

const dir = process.argv[2];
const backendPort = Number(process.argv[3]);
const port = Number(process.argv[4]);
if (!dir || !(backendPort > 0) || !(port > 0)) throw new Error('usage: child.ts CHECKOUT BACKEND_PORT PORT');
const { LoxiProxy } = (await import(
  pathToFileURL(`${dir}/proxy/proxy.ts`).href
)) as typeof import('../../proxy/proxy.js');
const proxy = new LoxiProxy({
  adminHost: '127.0.0.1',
  adminPort: 0,
  env: {},
  warn: () => {},
  monitor: { healthIntervalMs: 0, scrapeIntervalMs: 0 },
});
await proxy.start();
await proxy.apply({
  serviceArguments: {
    externalIP: '127.0.0.1',
    port,
    protocol: 'tcp',
    mode: 4,
    sse_mode: true,
    fc_mode: 'enforce',
    fc_max_outstanding: 256,
    fc_max_queue_depth: 256,
    fc_max_queue_wait_ms: 5000,
  },
  endpoints: [{ endpointIP: '127.0.0.1', targetPort: backendPort, weight: 1 }],
});
let at = process.cpuUsage();
process.on('message', (m: Msg) => {
  if (m.kind === 'exit') {
    void proxy.close(0).then(() => process.exit(0));
  } else if (m.kind === 'start') {
    at = process.cpuUsage();
    process.send?.({ kind: 'started' });
  } else {
    const d = process.cpuUsage(at);
    process.send?.({ kind: 'cpu', us: d.user + d.system });
  }
});
process.send?.({ kind: 'ready' });
