/**
 * A raw HTTP/1.1 exchange over `net`: the request goes out byte for byte
 * as written (undici, fetch and node:http would normalise the target
 * first), and the reply is read until the server closes, bounded by a
 * generous timeout.
 */
import net from 'node:net';

/** A parsed raw reply: status, lower-cased headers, body text. */
export interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: string;
  raw: string;
}

/** Sends `head` (CRLF-terminated lines, without the blank line) and `body`, with `Connection: close`. */
export function rawRequest(port: number, head: string, body = '', host = '127.0.0.1'): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, host);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`no complete reply within 10 s to ${head.split('\r\n')[0]}`));
    }, 10_000);
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('error', () => {});
    s.on('close', () => {
      clearTimeout(timer);
      resolve(parseReply(Buffer.concat(chunks).toString('utf8')));
    });
    const len = body === '' ? '' : `Content-Length: ${Buffer.byteLength(body)}\r\n`;
    s.write(`${head}\r\n${len}Connection: close\r\n\r\n${body}`);
  });
}

function parseReply(raw: string): RawReply {
  const end = raw.indexOf('\r\n\r\n');
  const headText = end < 0 ? raw : raw.slice(0, end);
  const lines = headText.split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':');
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  let body = end < 0 ? '' : raw.slice(end + 4);
  if (headers['transfer-encoding'] === 'chunked') body = unchunk(body);
  return { status, headers, body, raw };
}

function unchunk(text: string): string {
  let out = '';
  let rest = text;
  for (;;) {
    const i = rest.indexOf('\r\n');
    if (i < 0) return out;
    const n = Number.parseInt(rest.slice(0, i), 16);
    if (!(n > 0)) return out;
    out += rest.slice(i + 2, i + 2 + n);
    rest = rest.slice(i + 2 + n + 2);
  }
}
