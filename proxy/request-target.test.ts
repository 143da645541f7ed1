import { describe, expect, test } from 'vitest';
import { normaliseTarget, removeDotSegments } from './request-target.js';

describe('request target normalisation', () => {
  test('removes dot segments as RFC 3986 section 5.2.4 does', () => {
    expect(removeDotSegments('/a/b/c/./../../g')).toBe('/a/g');
    expect(removeDotSegments('/mid/content=5/../6')).toBe('/mid/6');
    expect(removeDotSegments('/a/b/..')).toBe('/a/');
    expect(removeDotSegments('/a/.')).toBe('/a/');
    expect(removeDotSegments('/../../v1')).toBe('/v1');
    expect(removeDotSegments('/..')).toBe('/');
    expect(removeDotSegments('/a/..b/.c')).toBe('/a/..b/.c');
  });

  test('reduces the absolute form, collapses slashes, decodes unreserved escapes, keeps the query', () => {
    const t = (s: string) => {
      const r = normaliseTarget(s);
      return r.ok ? r.target : `!${r.message}`;
    };
    expect(t('http://example.com:80/v1/models?x=%2f')).toBe('/v1/models?x=%2f');
    expect(t('HTTPS://h')).toBe('/');
    expect(t('///v1//x')).toBe('/v1/x');
    expect(t('/%7euser/%2f/%41')).toBe('/~user/%2F/A');
    expect(t('/a#frag')).toBe('/a');
    expect(t('*')).toMatch(/^!/);
    expect(t('/a%')).toMatch(/^!malformed/);
    expect(t('/a?%g0')).toMatch(/^!malformed/);
  });
});
