/**
 * Browser-facing checks of the management API: the `Host` a request names
 * must be the admin listener's own address (or a name the operator allows),
 * so a DNS-rebinding page cannot reach it through its own domain; a
 * cross-origin `Origin` is refused, so a page cannot drive it from a
 * browser; and a body must be declared `application/json`, which a plain
 * HTML form or a CORS "simple request" cannot send.
 */
import net from 'node:net';

/** The admin listener's address as the Host check sees it. */
export interface AdminAddress {
  /** The address bound (`127.0.0.1`, `::`, `0.0.0.0`, ...). */
  address: string;
  port: number;
  /** The host it was configured with (an IP or a name such as `localhost`). */
  configured: string;
  /** Further Host names the operator allows (lower-case). */
  names: readonly string[];
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];

function isLoopback(a: string): boolean {
  return a === '::1' || a.startsWith('127.') || a === 'localhost';
}

function isWildcard(a: string): boolean {
  return a === '0.0.0.0' || a === '::' || a === '';
}

/** Splits a Host header into its name (brackets stripped, lower-case) and port; null when malformed. */
export function parseHost(host: string): { name: string; port: number | null } | null {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(host.trim());
  if (!m) return null;
  const name = m[1]!.replace(/^\[|\]$/g, '').toLowerCase();
  return { name, port: m[2] === undefined ? null : Number(m[2]) };
}

/** True when `host` (the request's Host header) names this admin listener. */
export function hostAllowed(host: string | undefined, a: AdminAddress): boolean {
  if (host === undefined) return false;
  const h = parseHost(host);
  if (h === null) return false;
  if ((h.port ?? 80) !== a.port) return false;
  if (h.name === a.address.toLowerCase() || h.name === a.configured.toLowerCase()) return true;
  if (a.names.includes(h.name)) return true;
  if ((isLoopback(a.address) || isLoopback(a.configured)) && LOOPBACK_NAMES.includes(h.name)) return true;
  return isWildcard(a.address) && net.isIP(h.name) !== 0;
}

/** True when the request carries no Origin, or its own (same-origin). */
export function originAllowed(origin: string | undefined, host: string | undefined): boolean {
  if (origin === undefined) return true;
  return host !== undefined && origin.toLowerCase() === `http://${host.toLowerCase()}`;
}

/** True for `application/json`, with or without parameters. */
export function isJsonContentType(ct: string | undefined): boolean {
  if (ct === undefined) return false;
  return ct.split(';')[0]!.trim().toLowerCase() === 'application/json';
}
