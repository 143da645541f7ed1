/**
 * Raw `net` backends for the abuse tests: one that accepts and never
 * answers, one that sends a streamed head and a first chunk and then stalls,
 * and one whose every answer is scripted per request line.
 */
import net from 'node:net';

/** A raw TCP backend; `close()` destroys its connections. */
export interface RawBackend {
  port: number;
  /** Connections accepted so far. */
  readonly accepted: number;
  close(): Promise<void>;
}

/**
 * Starts a backend that calls `onRequest(socket, head)` once per request head
 * it reads (the head as text, up to the blank line); bodies are read and ignored.
 */
export async function rawBackend(onRequest: (s: net.Socket, head: string) => void): Promise<RawBackend> {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((s) => {
    accepted++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    let buf = '';
    let seen = false;
    s.on('data', (c: Buffer) => {
      if (seen) return;
      buf += c.toString('latin1');
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      seen = true;
      onRequest(s, buf.slice(0, end));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    get accepted() {
      return accepted;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A backend that accepts, reads, and never answers anything (health probes included). */
export function silentBackend(): Promise<RawBackend> {
  return rawBackend(() => {});
}

/** The head and first event of an SSE response, chunked. */
export const SSE_HEAD =
  'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n';

/** One HTTP/1.1 chunk of `text`. */
export function chunk(text: string): string {
  return `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
}

/** What a raw client saw: the bytes, and whether the proxy closed the connection before the deadline. */
export interface RawSeen {
  text: string;
  closed: boolean;
}

/**
 * Connects to `port`, writes `payload` (nothing when empty), and waits for
 * the proxy to close the connection, at most `deadlineMs` (then it is
 * destroyed here and `closed` is false).
 */
export function rawClient(port: number, payload: string | Buffer, deadlineMs = 5_000): Promise<RawSeen> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    let text = '';
    let done = false;
    const finish = (closed: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(t);
      s.destroy();
      resolve({ text, closed });
    };
    const t = setTimeout(() => finish(false), deadlineMs);
    s.on('data', (c: Buffer) => {
      text += c.toString('latin1');
    });
    s.on('close', () => finish(true));
    s.on('error', () => {});
    if (payload.length > 0) s.write(payload);
  });
}
