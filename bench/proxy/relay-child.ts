/**
 * Child process: a bare Node HTTP relay (node:http server, keep-alive
 * http.Agent, response piped), no gate, no header rewriting, no SSE watch.
 * A floor for what any proxy on Node's http stack costs: the difference
 * between it and LoxiProxy is the proxy's own work.
 */
import http from 'node:http';
import type net from 'node:net';
import { serve } from './ipc.js';

let enginePort = 0;
const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY, scheduling: 'lifo' });

const server = http.createServer({ noDelay: true }, (req, res) => {
  const breq = http.request(
    { host: '127.0.0.1', port: enginePort, method: req.method, path: req.url, headers: req.headers, agent },
    (bres) => {
      res.writeHead(bres.statusCode ?? 502, bres.headers);
      bres.pipe(res);
    },
  );
  breq.on('socket', (s) => s.setNoDelay(true));
  breq.on('error', () => res.destroy());
  res.on('close', () => {
    if (!res.writableFinished) breq.destroy();
  });
  req.pipe(breq);
});
server.keepAliveTimeout = 120_000;
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const port = (server.address() as net.AddressInfo).port;

serve({
  /** Points the relay at the engine; answers the relay's port. */
  target(p: number) {
    enginePort = p;
    return port;
  },
});
