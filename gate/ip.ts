/**
 * IP address literals, checked without node:net (the gate stays free of
 * node modules): dotted-quad IPv4 without leading zeros, and IPv6 in the
 * RFC 4291 text forms (`::` at most once, an IPv4 tail allowed, no zone).
 */

const V4_PART = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
const V6_GROUP = /^[0-9A-Fa-f]{1,4}$/;

/** The family of an IP literal: 4, 6, or 0 when `s` is not one. */
export function ipFamily(s: string): 0 | 4 | 6 {
  if (isIPv4(s)) return 4;
  if (isIPv6(s)) return 6;
  return 0;
}

function isIPv4(s: string): boolean {
  const parts = s.split('.');
  return parts.length === 4 && parts.every((p) => V4_PART.test(p));
}

function isIPv6(s: string): boolean {
  if (!s.includes(':')) return false;
  const halves = s.split('::');
  if (halves.length > 2) return false;
  const groups = (h: string): string[] => (h === '' ? [] : h.split(':'));
  const all = [...groups(halves[0]!), ...(halves.length === 2 ? groups(halves[1]!) : [])];
  let count = all.length;
  const last = all[all.length - 1] ?? '';
  if (last.includes('.')) {
    // An IPv4 tail ends the address and stands for two groups.
    if (!isIPv4(last) || !s.endsWith(`:${last}`)) return false;
    all.pop();
    count += 1;
  }
  if (!all.every((g) => V6_GROUP.test(g))) return false;
  return halves.length === 2 ? count <= 7 : count === 8;
}
