/**
 * Server-sent events, incrementally: feed text chunks as they arrive (split anywhere, even inside
 * a CRLF), get complete events; and the token accounting of an OpenAI chat/completions stream on
 * top (first token, gaps between tokens, usage, `[DONE]`). Pure; the Node driver feeds it socket
 * chunks with their arrival times, the k6 script feeds it a whole response body.
 */

/** One dispatched event. */
export interface SseEvent {
  /** `event:` field, '' when absent. */
  event: string;
  /** The `data:` lines joined by '\n'. */
  data: string;
  /** `id:` field, '' when absent. */
  id: string;
}

/** Incremental SSE parser (WHATWG event-stream rules: LF, CRLF or CR line ends; `:` comments). */
export class SseParser {
  #buf = '';
  #skipLf = false;
  #data: string[] = [];
  #event = '';
  #id = '';
  #hasData = false;

  /** Feeds a chunk; returns the events it completed. */
  feed(chunk: string): SseEvent[] {
    const out: SseEvent[] = [];
    let text = chunk;
    if (this.#skipLf && text.startsWith('\n')) text = text.slice(1);
    this.#skipLf = false;
    let buf = this.#buf + text;
    for (;;) {
      const m = /\r\n|\r|\n/.exec(buf);
      if (m === null) break;
      if (m[0] === '\r' && m.index === buf.length - 1) {
        // A CR at the very end may be the first half of a CRLF split across chunks.
        this.#skipLf = true;
      }
      this.#line(buf.slice(0, m.index), out);
      buf = buf.slice(m.index + m[0].length);
    }
    this.#buf = buf;
    return out;
  }

  /** Ends the stream: an unterminated last event is dropped, as the spec says. */
  end(): SseEvent[] {
    this.#buf = '';
    this.#data = [];
    this.#hasData = false;
    return [];
  }

  #line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.#hasData) out.push({ event: this.#event, data: this.#data.join('\n'), id: this.#id });
      this.#data = [];
      this.#event = '';
      this.#hasData = false;
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      this.#data.push(value);
      this.#hasData = true;
    } else if (field === 'event') this.#event = value;
    else if (field === 'id') this.#id = value;
  }
}

/** What a completion stream told the client. */
export interface StreamFacts {
  /** When the first token arrived (caller's clock, ms); undefined before one. */
  firstTokenAtMs: number | undefined;
  /** When the last token arrived. */
  lastTokenAtMs: number | undefined;
  /** Data events that carried output text. */
  tokenEvents: number;
  /** `usage.completion_tokens` when the server reported it. */
  usageTokens: number | undefined;
  /** A `finish_reason` seen, '' when none. */
  finishReason: string;
  /** `data: [DONE]` was received. */
  done: boolean;
  /** Gaps between consecutive token events, ms (the first token excluded). */
  gapsMs: number[];
  /** An `error` object in the stream, '' when none. */
  error: string;
}

type Json = Record<string, unknown>;

/** Output text of a chunk: chat `delta.content` or reasoning, or completions `text`. */
function chunkText(choice: Json): string {
  const delta = choice.delta as Json | undefined;
  if (delta !== undefined && delta !== null) {
    for (const k of ['content', 'reasoning_content', 'reasoning']) {
      const v = delta[k];
      if (typeof v === 'string' && v !== '') return v;
    }
    return '';
  }
  const text = choice.text;
  return typeof text === 'string' ? text : '';
}

/** The facts of a response that carried no token yet. */
export function emptyStreamFacts(): StreamFacts {
  return {
    firstTokenAtMs: undefined,
    lastTokenAtMs: undefined,
    tokenEvents: 0,
    usageTokens: undefined,
    finishReason: '',
    done: false,
    gapsMs: [],
    error: '',
  };
}

/** Token accounting of an OpenAI-style completion stream. */
export class CompletionStream {
  readonly parser = new SseParser();
  readonly facts: StreamFacts = emptyStreamFacts();

  /** Feeds a chunk that arrived at `atMs`. */
  feed(chunk: string, atMs: number): void {
    for (const ev of this.parser.feed(chunk)) this.event(ev, atMs);
  }

  /** Accounts for one event. */
  event(ev: SseEvent, atMs: number): void {
    const f = this.facts;
    const data = ev.data.trim();
    if (data === '[DONE]') {
      f.done = true;
      return;
    }
    let obj: Json;
    try {
      obj = JSON.parse(data) as Json;
    } catch {
      return;
    }
    if (obj === null || typeof obj !== 'object') return;
    if (obj.error !== undefined) f.error = errorText(obj.error);
    const usage = obj.usage as Json | undefined | null;
    if (usage && typeof usage.completion_tokens === 'number') f.usageTokens = usage.completion_tokens;
    const choices = Array.isArray(obj.choices) ? (obj.choices as Json[]) : [];
    let text = false;
    for (const c of choices) {
      if (c === null || typeof c !== 'object') continue;
      if (chunkText(c) !== '') text = true;
      if (typeof c.finish_reason === 'string' && c.finish_reason !== '') f.finishReason = c.finish_reason;
    }
    if (!text) return;
    if (f.firstTokenAtMs === undefined) f.firstTokenAtMs = atMs;
    else if (f.lastTokenAtMs !== undefined) f.gapsMs.push(atMs - f.lastTokenAtMs);
    f.lastTokenAtMs = atMs;
    f.tokenEvents++;
  }

  /** Output tokens received: the reported usage, else the token events counted. */
  get generatedTokens(): number {
    return this.facts.usageTokens ?? this.facts.tokenEvents;
  }
}

/** The facts of a complete non-streamed completion body (or of a whole SSE body, as k6 gets it). */
export function completionFacts(
  body: string,
  stream: boolean,
  atMs = 0,
): StreamFacts & { generated: number } {
  if (stream) {
    const s = new CompletionStream();
    s.feed(body, atMs);
    s.feed('\n\n', atMs);
    return { ...s.facts, generated: s.generatedTokens };
  }
  const facts: StreamFacts = emptyStreamFacts();
  let obj: Json | null = null;
  try {
    obj = JSON.parse(body) as Json;
  } catch {
    return { ...facts, generated: 0 };
  }
  if (obj === null || typeof obj !== 'object') return { ...facts, generated: 0 };
  if (obj.error !== undefined) facts.error = errorText(obj.error);
  const usage = obj.usage as Json | undefined | null;
  if (usage && typeof usage.completion_tokens === 'number') facts.usageTokens = usage.completion_tokens;
  const choices = Array.isArray(obj.choices) ? (obj.choices as Json[]) : [];
  for (const c of choices) {
    if (c === null || typeof c !== 'object') continue;
    if (typeof c.finish_reason === 'string' && c.finish_reason !== '') facts.finishReason = c.finish_reason;
  }
  facts.done = choices.length > 0;
  return { ...facts, generated: facts.usageTokens ?? 0 };
}

function errorText(e: unknown): string {
  if (typeof e === 'string') return e;
  if (e !== null && typeof e === 'object') {
    const o = e as Json;
    for (const k of ['code', 'type', 'message']) if (typeof o[k] === 'string') return o[k] as string;
  }
  return 'error';
}
