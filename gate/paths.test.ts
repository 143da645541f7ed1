import { describe, expect, it } from 'vitest';
import { isInferencePath, isSmgBypassPath, normalisePath, SMG_INFERENCE_PATHS } from './paths.js';

describe('inference paths', () => {
  it('normalises query strings and trailing slashes', () => {
    expect(normalisePath('/v1/chat/completions/?stream=true')).toBe('/v1/chat/completions');
    expect(isInferencePath('/v1/completions?x=1')).toBe(true);
  });

  it('does not take a longer path or the model listing for an inference call', () => {
    expect(isInferencePath('/v1/chat/completionsx')).toBe(false);
    expect(isInferencePath('/v1/models')).toBe(false);
    expect(isInferencePath('/health')).toBe(false);
  });

  it('gates /generate and /v1/rerank in the SMG dialect only', () => {
    expect(isInferencePath('/generate')).toBe(false);
    expect(isInferencePath('/generate', SMG_INFERENCE_PATHS)).toBe(true);
  });

  it('bypasses SMG admission only on the routes SMG names, exactly and case-sensitively', () => {
    for (const p of [
      '/health',
      '/health/',
      '/readiness?x=1',
      '/v1/models',
      '/workers',
      '/workers/abc',
      '/wasm/u-1',
    ])
      expect({ p, bypass: isSmgBypassPath(p) }).toEqual({ p, bypass: true });
    for (const p of [
      ...SMG_INFERENCE_PATHS,
      '/V1/chat/completions',
      '/Health',
      '/v1/models/x/../../chat/completions',
      '/workers/a/b',
      '/workers/a%2Fb',
      '/v1/tokenize',
      '/',
    ])
      expect({ p, bypass: isSmgBypassPath(p) }).toEqual({ p, bypass: false });
  });
});
