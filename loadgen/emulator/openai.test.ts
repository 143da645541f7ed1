import { describe, expect, it } from 'vitest';
import { ApiError } from './errors.js';
import { parseInferenceBody } from './openai.js';

const chat = (body: unknown) => parseInferenceBody('chat', JSON.stringify(body));
const messages = [{ role: 'user', content: 'x'.repeat(40) }];

function error(f: () => unknown): ApiError {
  try {
    f();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

describe('parseInferenceBody', () => {
  it('estimates prompt tokens at 4 characters per token, or takes the extension field', () => {
    expect(chat({ messages }).promptTokens).toBe(10);
    expect(chat({ messages, sluice_prompt_tokens: 777 }).promptTokens).toBe(777);
    expect(parseInferenceBody('completions', '{"prompt":[1,2,3,4,5]}').promptTokens).toBe(5);
    expect(parseInferenceBody('completions', '{"prompt":"abcdefghi"}').promptTokens).toBe(3);
  });

  it('prefers max_completion_tokens over max_tokens', () => {
    const p = chat({ messages, max_tokens: 5, max_completion_tokens: 7 });
    expect([p.maxTokens, p.maxTokensField]).toEqual([7, 'max_completion_tokens']);
    expect(chat({ messages, max_tokens: null }).maxTokens).toBeNull();
  });

  it('reads stream and stream_options.include_usage', () => {
    const p = chat({ messages, stream: true, stream_options: { include_usage: true } });
    expect([p.stream, p.includeUsage]).toEqual([true, true]);
  });

  it.each([
    ['{"messages": [', 'body', /invalid JSON/],
    ['[]', 'body', /expected a JSON object/],
    ['{"messages": []}', 'messages', /non-empty array/],
    ['{"messages": [{"content": "x"}]}', 'messages[0].role', /missing/],
    ['{"messages": [{"role": "user", "content": 5}]}', 'messages[0].content', /5 is not a string/],
    ['{"messages": [{"role": "user"}], "max_tokens": 1.5}', 'max_tokens', /1.5 is not an integer >= 1/],
    ['{"messages": [{"role": "user"}], "stream": "yes"}', 'stream', /not true or false/],
    [
      '{"messages": [{"role": "user"}], "stream_options": {"include_usage": true}}',
      'stream_options',
      /stream is true/,
    ],
    ['{"messages": [{"role": "user"}], "n": 2}', 'n', /2 is not 1/],
    ['{"messages": [{"role": "user"}], "sluice_prompt_tokens": 0}', 'sluice_prompt_tokens', /0 is not/],
  ])('rejects %s naming %s', (raw, param, message) => {
    const err = error(() => parseInferenceBody('chat', raw));
    expect(err.status).toBe(400);
    expect(err.param).toBe(param);
    expect(err.message).toMatch(message);
    expect(err.message.startsWith(param === 'body' ? '(body)' : param)).toBe(true);
  });

  it('rejects a completions prompt of several strings', () => {
    expect(error(() => parseInferenceBody('completions', '{"prompt":["a","b"]}')).param).toBe('prompt');
  });
});
