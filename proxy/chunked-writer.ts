/**
 * Writes the body chunks of an HTTP/1.1 chunked response straight on the
 * client socket, framed here (hex length, CRLF, data, CRLF) as one buffer and
 * one `socket.write`, instead of through `ServerResponse.write` (which makes
 * four corked socket writes, a `writev` and a tick per chunk: most of the
 * garbage of a relayed SSE stream). Node keeps everything else: the head
 * (sent by the first chunk, written the ordinary way), the final `0\r\n\r\n`
 * and `finish` (`res.end()`), keep-alive, and every response it cannot be
 * sure of (not chunked, no body, HEAD, a pipelined response still waiting
 * for its socket, a destroyed socket) goes through `res.write` as before.
 */
import type http from 'node:http';
import type net from 'node:net';

/** Chunks up to this many bytes are copied into one framed buffer; larger ones are written in three pieces, corked (bytes). */
export const COPY_LIMIT_BYTES = 16 * 1024;

/** The fields of Node's OutgoingMessage this relies on (Node 18–22). */
interface OutgoingInternals {
  _headerSent: boolean;
  _hasBody: boolean;
  chunkedEncoding: boolean;
  finished: boolean;
  outputData: unknown[];
  socket: net.Socket | null;
}

const CRLF = Buffer.from('\r\n', 'latin1');
const HEX = Buffer.from('0123456789abcdef', 'latin1');

/**
 * The socket `res`'s body chunks may be written on directly, or null when
 * they must go through `res.write`: the head has gone out, the body is
 * chunked, nothing of the response waits in Node's own buffer, and the
 * socket is this response's and open. Checked before every chunk (a few
 * field reads).
 */
export function directSocket(res: http.ServerResponse): net.Socket | null {
  const o = res as unknown as OutgoingInternals;
  const s = o.socket;
  if (
    s === null ||
    s === undefined ||
    o._headerSent !== true ||
    o.chunkedEncoding !== true ||
    o._hasBody !== true ||
    o.finished ||
    !Array.isArray(o.outputData) ||
    o.outputData.length !== 0 ||
    s.destroyed ||
    (s as net.Socket & { _httpMessage?: unknown })._httpMessage !== res
  )
    return null;
  return s;
}

/**
 * Writes `chunk` as one chunk of a chunked body on `socket`.
 * @returns false when the socket's buffer is full (wait for its `drain`)
 */
export function writeFramedChunk(socket: net.Socket, chunk: Buffer): boolean {
  const n = chunk.length;
  if (n === 0) return true; // an empty chunk would end the body
  let digits = 1;
  for (let v = n >>> 4; v !== 0; v >>>= 4) digits++;
  if (n > COPY_LIMIT_BYTES) {
    const head = Buffer.allocUnsafe(digits + 2);
    putHeader(head, n, digits);
    socket.cork();
    socket.write(head);
    socket.write(chunk);
    const ok = socket.write(CRLF);
    socket.uncork();
    return ok;
  }
  const out = Buffer.allocUnsafe(digits + 4 + n);
  putHeader(out, n, digits);
  out.set(chunk, digits + 2);
  out[digits + 2 + n] = 0x0d;
  out[digits + 3 + n] = 0x0a;
  return socket.write(out);
}

/** Writes `n` in hex (`digits` digits) and CRLF at the start of `b`. */
function putHeader(b: Buffer, n: number, digits: number): void {
  for (let i = digits - 1, v = n; i >= 0; i--, v >>>= 4) b[i] = HEX[v & 15]!;
  b[digits] = 0x0d;
  b[digits + 1] = 0x0a;
}
