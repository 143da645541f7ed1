/**
 * A request record's CSV line encoded straight into a byte buffer: the hot path of
 * `requests.csv`, one line per attempt, millions per run (and, with {@link encodeRowLine},
 * the time series' wide rows, one per simulated second). The bytes are those of the generic
 * formatter (`csvLine` in `sinks.ts`, itself checked against csv-stringify): numbers as `String`
 * prints them, booleans as true/false, '' as nothing. A line with a text field that needs
 * quoting, is not ASCII or is too long for the room given is refused (-1), and the caller
 * formats it the generic way. `sinks.test.ts` compares the two on awkward records.
 */
import type { RequestRecord } from './records.js';

const COMMA = 0x2c;
const NEWLINE = 0x0a;
/** "00" to "99" as ASCII: a number's digits are written two per division. */
const DIGIT_PAIRS = Uint8Array.from(
  Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0')).join(''),
  (c) => c.charCodeAt(0),
);
const TRUE = [0x74, 0x72, 0x75, 0x65];
const FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65];

/** Bytes a line's 17 numbers and booleans may take at most (`String` of a double is at most 24 characters), with their commas. */
export const REQUEST_NUMBERS_ROOM = 17 * 25 + 23;

/**
 * Encodes `r`'s line (with its newline) into `b` from `at`; the text fields must end by `textLimit`,
 * and `b` must hold {@link REQUEST_NUMBERS_ROOM} bytes past it.
 * @returns the end of the line, or -1 when a text field needs the generic formatter
 */
export function encodeRequestLine(b: Uint8Array, at: number, r: RequestRecord, textLimit: number): number {
  let p = putNum(b, at, r.id);
  b[p++] = COMMA;
  p = putNum(b, p, r.logical_id);
  b[p++] = COMMA;
  p = putNum(b, p, r.attempt);
  b[p++] = COMMA;
  p = putText(b, p, r.tenant, textLimit);
  if (p < 0) return -1;
  b[p++] = COMMA;
  p = putNum(b, p, r.sent_ms);
  b[p++] = COMMA;
  p = putText(b, p, r.protocol, textLimit);
  if (p < 0) return -1;
  b[p++] = COMMA;
  p = putBool(b, p, r.stream);
  b[p++] = COMMA;
  p = putBool(b, p, r.pd);
  b[p++] = COMMA;
  p = putBool(b, p, r.inference);
  b[p++] = COMMA;
  p = putNum(b, p, r.prompt_tokens);
  b[p++] = COMMA;
  p = putNum(b, p, r.output_tokens);
  b[p++] = COMMA;
  p = putText(b, p, r.decision, textLimit);
  if (p < 0) return -1;
  b[p++] = COMMA;
  p = putText(b, p, r.outcome, textLimit);
  if (p < 0) return -1;
  b[p++] = COMMA;
  p = putNum(b, p, r.status);
  b[p++] = COMMA;
  p = putText(b, p, r.error, textLimit);
  if (p < 0) return -1;
  b[p++] = COMMA;
  p = putText(b, p, r.endpoint, textLimit);
  if (p < 0) return -1;
  b[p++] = COMMA;
  if (r.queue_wait_ms !== '') p = putNum(b, p, r.queue_wait_ms);
  b[p++] = COMMA;
  if (r.ttft_ms !== '') p = putNum(b, p, r.ttft_ms);
  b[p++] = COMMA;
  if (r.e2e_ms !== '') p = putNum(b, p, r.e2e_ms);
  b[p++] = COMMA;
  p = putBool(b, p, r.good);
  b[p++] = COMMA;
  p = putNum(b, p, r.generated_tokens);
  b[p++] = COMMA;
  p = putNum(b, p, r.wasted_tokens);
  b[p++] = COMMA;
  if (r.tpot_ms !== '') p = putNum(b, p, r.tpot_ms);
  b[p++] = NEWLINE;
  return p;
}

/**
 * A row of numbers and text fields (a time-series row: about 200 columns over 64 endpoints)
 * encoded into `b` from `at` as the generic formatter writes it, with its newline.
 * @returns the end of the line, or -1 when a text field needs the generic formatter or the
 *   line would pass `limit`
 */
export function encodeRowLine(
  b: Uint8Array,
  at: number,
  row: readonly (string | number)[],
  limit: number,
): number {
  let p = at;
  for (let i = 0; i < row.length; i++) {
    // Room for a comma and the longest number (24 characters), and the newline after.
    if (p + 26 > limit) return -1;
    if (i > 0) b[p++] = COMMA;
    const v = row[i] as string | number;
    if (typeof v === 'number') p = putNum(b, p, v);
    else {
      p = putText(b, p, v, limit - 1);
      if (p < 0) return -1;
    }
  }
  b[p++] = NEWLINE;
  return p;
}

/** A text field that needs no quotes, in ASCII, ending by `limit`; else -1. */
function putText(b: Uint8Array, at: number, s: string, limit: number): number {
  const n = s.length;
  if (at + n > limit) return -1;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    // Quotes, commas, line breaks and non-ASCII text take the generic path. Letters, digits,
    // '.', ':', '-', '/' and '_' (above the comma, below 0x80) pass with one range check.
    if ((c <= COMMA || c >= 0x80) && (c >= 0x80 || c === 0x22 || c === COMMA || c === 0x0d || c === NEWLINE))
      return -1;
    b[at + i] = c;
  }
  return at + n;
}

function putBool(b: Uint8Array, at: number, v: boolean): number {
  const bytes = v ? TRUE : FALSE;
  for (let i = 0; i < bytes.length; i++) b[at + i] = bytes[i] as number;
  return at + bytes.length;
}

/** A number, as `String(v)` prints it. */
function putNum(b: Uint8Array, at: number, v: number): number {
  // Integers below 2^31 (ids, token counts, statuses) first: one int32 comparison, no range
  // checks in doubles (-0 passes too and prints as 0, as String does).
  if ((v | 0) === v && v >= 0) return putSmallDigits(b, at, v | 0);
  if (v >= 0 && v < 1e12) {
    if (Number.isInteger(v)) return putDigits(b, at, v);
    // A value with at most three decimals (the run's times are rounded to µs) and at most
    // 15 significant digits: the shortest decimal that reads back as v, which is what
    // String prints, is k/1000 written out (no other decimal of 15 digits or fewer reads
    // back as the same double).
    const k = Math.round(v * 1000);
    if (k / 1000 === v) {
      if (k <= 0x7fffffff) {
        // Below 2^31 thousandths (times under about 24 days): int32 arithmetic throughout.
        const ki = k | 0;
        const whole = (ki / 1000) | 0;
        return putFraction(b, putSmallDigits(b, at, whole), (ki - whole * 1000) | 0);
      }
      const whole = Math.floor(k / 1000);
      return putFraction(b, putDigits(b, at, whole), (k - whole * 1000) | 0);
    }
  }
  const s = String(v);
  for (let i = 0; i < s.length; i++) b[at + i] = s.charCodeAt(i);
  return at + s.length;
}

/** A point and `frac` thousandths (1 to 999) without trailing zeros, from `at`. */
function putFraction(b: Uint8Array, at: number, frac: number): number {
  b[at] = 0x2e;
  const hundreds = (frac / 100) | 0;
  const rest = frac - hundreds * 100;
  if (rest === 0) {
    b[at + 1] = 0x30 + hundreds;
    return at + 2;
  }
  if (rest % 10 === 0) {
    b[at + 1] = 0x30 + hundreds;
    b[at + 2] = 0x30 + ((rest / 10) | 0);
    return at + 3;
  }
  b[at + 1] = 0x30 + hundreds;
  b[at + 2] = DIGIT_PAIRS[rest << 1] as number;
  b[at + 3] = DIGIT_PAIRS[(rest << 1) + 1] as number;
  return at + 4;
}

/** A non-negative integer below 1e15, in decimal digits. */
function putDigits(b: Uint8Array, at: number, v: number): number {
  if (v <= 0x7fffffff) return putSmallDigits(b, at, v | 0);
  let digits = 1;
  for (let p = 10; p <= v; p *= 10) digits++;
  const end = at + digits;
  let q = end;
  let x = v;
  while (x >= 100) {
    const d = Math.floor(x / 100);
    const r = (x - d * 100) * 2;
    b[--q] = DIGIT_PAIRS[r + 1] as number;
    b[--q] = DIGIT_PAIRS[r] as number;
    x = d;
  }
  if (x >= 10) {
    b[--q] = DIGIT_PAIRS[x * 2 + 1] as number;
    b[--q] = DIGIT_PAIRS[x * 2] as number;
  } else {
    b[--q] = 0x30 + x;
  }
  return end;
}

/**
 * {@link putDigits} for an integer below 2^31 (ids, token counts, whole ms): in int32 the
 * compiler divides by 100 with a multiplication, and the digits do not wait on a chain of
 * floating-point divisions.
 */
function putSmallDigits(b: Uint8Array, at: number, v: number): number {
  const digits =
    v < 10000
      ? v < 100
        ? v < 10
          ? 1
          : 2
        : v < 1000
          ? 3
          : 4
      : v < 1e6
        ? v < 1e5
          ? 5
          : 6
        : v < 1e8
          ? v < 1e7
            ? 7
            : 8
          : v < 1e9
            ? 9
            : 10;
  const end = at + digits;
  let q = end;
  let x = v;
  while (x >= 100) {
    const d = (x / 100) | 0;
    const r = (x - d * 100) << 1;
    b[--q] = DIGIT_PAIRS[r + 1] as number;
    b[--q] = DIGIT_PAIRS[r] as number;
    x = d;
  }
  if (x >= 10) {
    b[--q] = DIGIT_PAIRS[(x << 1) + 1] as number;
    b[--q] = DIGIT_PAIRS[x << 1] as number;
  } else {
    b[--q] = 0x30 + x;
  }
  return end;
}
