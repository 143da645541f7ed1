/**
 * A lean HTTP/1.1 client connection for the load generator: raw keep-alive
 * socket, one request at a time, an incremental response parser
 * (Content-Length, chunked, or read-to-close). It costs far less per request
 * and per chunk than node:http's client, so the generator disturbs less.
 */
import net from 'node:net';

export interface ResponseHandler {
  /** The head arrived. */
  head(status: number): void;
  /** Decoded body bytes (`b[start, end)`). */
  body(b: Buffer, start: number, end: number): void;
  /** The response is complete. */
  done(status: number): void;
  /** The connection failed or closed before the response completed. */
  fail(err: Error): void;
}

enum S {
  Head = 0,
  Length = 1,
  ChunkSize = 2,
  ChunkData = 3,
  ChunkEnd = 4,
  Trailer = 5,
  ToClose = 6,
  Idle = 7,
}

/** Builds the bytes of a POST with a JSON body. */
export function postRequest(host: string, port: number, path: string, body: string): Buffer {
  const b = Buffer.from(body);
  return Buffer.concat([
    Buffer.from(
      `POST ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nContent-Type: application/json\r\nAccept: */*\r\nContent-Length: ${b.length}\r\n\r\n`,
    ),
    b,
  ]);
}

export class Http1Conn {
  readonly sock: net.Socket;
  readonly connected: Promise<void>;
  #buf: Buffer | null = null;
  #state = S.Idle;
  #remaining = 0;
  #status = 0;
  #close = false;
  #h: ResponseHandler | null = null;
  closed = false;

  constructor(host: string, port: number) {
    this.sock = net.connect({ host, port, noDelay: true });
    this.connected = new Promise<void>((res, rej) => {
      this.sock.once('connect', () => res());
      this.sock.once('error', rej);
    });
    this.sock.on('data', (d: Buffer) => this.#data(d));
    this.sock.on('error', () => {});
    this.sock.on('close', () => {
      this.closed = true;
      const h = this.#h;
      this.#h = null;
      if (!h) return;
      if (this.#state === S.ToClose) h.done(this.#status);
      else h.fail(new Error('connection closed'));
    });
  }

  /** True when the connection can take another request. */
  get reusable(): boolean {
    return !this.closed && !this.#close && this.#h === null;
  }

  send(req: Buffer, h: ResponseHandler): void {
    this.#h = h;
    this.#state = S.Head;
    this.#close = false;
    this.sock.write(req);
  }

  destroy(): void {
    this.#h = null;
    this.sock.destroy();
  }

  #finish(): void {
    const h = this.#h;
    this.#h = null;
    this.#state = S.Idle;
    if (this.#close) this.sock.destroy();
    h?.done(this.#status);
  }

  #data(d: Buffer): void {
    const b = this.#buf ? Buffer.concat([this.#buf, d]) : d;
    this.#buf = null;
    let p = 0;
    while (p < b.length && this.#h) {
      const h = this.#h;
      switch (this.#state) {
        case S.Head: {
          const e = b.indexOf('\r\n\r\n', p);
          if (e < 0) {
            this.#buf = b.subarray(p);
            return;
          }
          const head = b.toString('latin1', p, e);
          p = e + 4;
          this.#status = Number(head.slice(9, 12));
          const lower = head.toLowerCase();
          this.#close = /\r\nconnection:\s*close/.test(lower);
          h.head(this.#status);
          if (/\r\ntransfer-encoding:[^\r]*chunked/.test(lower)) this.#state = S.ChunkSize;
          else {
            const m = /\r\ncontent-length:\s*(\d+)/.exec(lower);
            if (m) {
              this.#remaining = Number(m[1]);
              this.#state = S.Length;
              if (this.#remaining === 0) this.#finish();
            } else this.#state = S.ToClose;
          }
          break;
        }
        case S.Length:
        case S.ChunkData: {
          const n = Math.min(this.#remaining, b.length - p);
          h.body(b, p, p + n);
          p += n;
          this.#remaining -= n;
          if (this.#remaining === 0) {
            if (this.#state === S.Length) this.#finish();
            else this.#state = S.ChunkEnd;
          }
          break;
        }
        case S.ChunkEnd: {
          if (b.length - p < 2) {
            this.#buf = b.subarray(p);
            return;
          }
          p += 2;
          this.#state = S.ChunkSize;
          break;
        }
        case S.ChunkSize:
        case S.Trailer: {
          const e = b.indexOf('\r\n', p);
          if (e < 0) {
            this.#buf = b.subarray(p);
            return;
          }
          const line = b.toString('latin1', p, e);
          p = e + 2;
          if (this.#state === S.Trailer) {
            if (line === '') this.#finish();
          } else {
            const size = Number.parseInt(line, 16);
            if (size === 0) this.#state = S.Trailer;
            else {
              this.#remaining = size;
              this.#state = S.ChunkData;
            }
          }
          break;
        }
        case S.ToClose:
          h.body(b, p, b.length);
          p = b.length;
          break;
        default:
          p = b.length;
      }
    }
  }
}
