/**
 * The request target, normalised once before any decision: the absolute
 * form (`http://host/path`) is reduced to its path, percent-encoded
 * unreserved characters are decoded and the hex of the other escapes upper-
 * cased (RFC 3986 section 6.2.2), runs of slashes collapse to one, and dot
 * segments are removed (RFC 3986 section 5.2.4). The query is kept as sent
 * (its escapes must be well formed too). What the proxy classifies, checks
 * the credential of and forwards is this one value.
 */

export type TargetResult = { ok: true; target: string; path: string } | { ok: false; message: string };

const ABSOLUTE = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;
const BAD_ESCAPE = /%(?![0-9A-Fa-f]{2})/;
const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** Anything that may need normalising: an escape, a fragment, a double slash, a dot segment. */
const NEEDS_WORK = /[%#]|\/\/|\/\./;

/** Normalises a request target (`req.url`); a malformed one is refused with the reason. */
export function normaliseTarget(raw: string): TargetResult {
  // The common case, a plain origin-form path, is already normal.
  if (raw.charCodeAt(0) === 0x2f && !NEEDS_WORK.test(raw)) {
    const q = raw.indexOf('?');
    return { ok: true, target: raw, path: q < 0 ? raw : raw.slice(0, q) };
  }
  let t = raw;
  const abs = ABSOLUTE.exec(t);
  if (abs) {
    t = t.slice(abs[0].length);
    if (!t.startsWith('/')) t = `/${t}`;
  }
  if (!t.startsWith('/'))
    return { ok: false, message: 'the request target must be a path or an absolute URL' };
  const hash = t.indexOf('#');
  if (hash >= 0) t = t.slice(0, hash);
  const q = t.indexOf('?');
  const rawPath = q >= 0 ? t.slice(0, q) : t;
  const query = q >= 0 ? t.slice(q) : '';
  if (BAD_ESCAPE.test(rawPath) || BAD_ESCAPE.test(query)) {
    return { ok: false, message: 'malformed percent-escape in the request target' };
  }
  const path = removeDotSegments(decodeUnreserved(rawPath).replace(/\/{2,}/g, '/'));
  return { ok: true, target: path + query, path };
}

/** Decodes `%XX` of unreserved characters and upper-cases the hex of the rest. */
function decodeUnreserved(p: string): string {
  return p.replace(/%([0-9A-Fa-f]{2})/g, (_m, hex: string) => {
    const c = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(c) ? c : `%${hex.toUpperCase()}`;
  });
}

/** RFC 3986 section 5.2.4 on an absolute path (starts with `/`). */
export function removeDotSegments(path: string): string {
  let input = path;
  const out: string[] = [];
  while (input.length > 0) {
    if (input.startsWith('../')) input = input.slice(3);
    else if (input.startsWith('./')) input = input.slice(2);
    else if (input.startsWith('/./')) input = input.slice(2);
    else if (input === '/.') input = '/';
    else if (input.startsWith('/../')) {
      input = input.slice(3);
      out.pop();
    } else if (input === '/..') {
      input = '/';
      out.pop();
    } else if (input === '.' || input === '..') input = '';
    else {
      const next = input.indexOf('/', input.startsWith('/') ? 1 : 0);
      const seg = next < 0 ? input : input.slice(0, next);
      out.push(seg);
      input = next < 0 ? '' : input.slice(next);
    }
  }
  const r = out.join('');
  return r === '' ? '/' : r;
}
