import { describe, expect, test } from 'vitest';
import { hostAllowed, isJsonContentType, originAllowed, parseHost } from './admin-guard.js';

describe('admin guard', () => {
  const at = (address: string, configured = address, names: string[] = []) => ({
    address,
    port: 11111,
    configured,
    names,
  });

  test('Host names the listener: its address, loopback names on loopback, any IP on a wildcard, allowed names', () => {
    expect(parseHost('[::1]:11111')).toEqual({ name: '::1', port: 11111 });
    expect(parseHost('a:b:c')).toBeNull();
    expect(hostAllowed('[::1]:11111', at('::1'))).toBe(true);
    expect(hostAllowed('localhost:11111', at('::1'))).toBe(true);
    expect(hostAllowed('10.0.0.5:11111', at('10.0.0.5'))).toBe(true);
    expect(hostAllowed('localhost:11111', at('10.0.0.5'))).toBe(false);
    expect(hostAllowed('10.9.9.9:11111', at('0.0.0.0'))).toBe(true);
    expect(hostAllowed('[fe80::1]:11111', at('::'))).toBe(true);
    expect(hostAllowed('evil.example:11111', at('0.0.0.0'))).toBe(false);
    expect(hostAllowed('gw.example:11111', at('0.0.0.0', '0.0.0.0', ['gw.example']))).toBe(true);
    expect(hostAllowed('127.0.0.1:11112', at('127.0.0.1'))).toBe(false);
    expect(hostAllowed(undefined, at('127.0.0.1'))).toBe(false);
  });

  test('Origin must be absent or the same origin; the body type must be application/json', () => {
    expect(originAllowed(undefined, 'h:1')).toBe(true);
    expect(originAllowed('http://h:1', 'h:1')).toBe(true);
    expect(originAllowed('http://evil:1', 'h:1')).toBe(false);
    expect(isJsonContentType('application/json; charset=utf-8')).toBe(true);
    expect(isJsonContentType('application/json-patch+json')).toBe(false);
    expect(isJsonContentType('text/plain')).toBe(false);
    expect(isJsonContentType(undefined)).toBe(false);
  });
});
