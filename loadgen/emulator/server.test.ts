import { Agent, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from './emulator.js';
import { MAX_BODY_BYTES } from './server.js';
import { chat, http, postJson, streamSse } from './test/helpers.js';

let emu: RunningEmulator;

beforeAll(async () => {
  emu = await startEmulator({ profile: 'fixed', fixed: { ttftMs: 5, itlMs: 1 }, model: 'm1' });
});
afterAll(() => emu.close());

describe('streaming responses', () => {
  it('frames a chat stream: role chunk, one content chunk per token, usage chunk, [DONE]', async () => {
    const r = await streamSse(
      emu.url,
      '/v1/chat/completions',
      chat(4, { stream: true, stream_options: { include_usage: true } }),
    );
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(r.headers['transfer-encoding']).toBe('chunked');
    expect(r.raw.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(r.raw.split('\n\n').every((b) => b === '' || b.startsWith('data: '))).toBe(true);
    const data = r.events.map((e) => e.data);
    expect(data).toHaveLength(1 + 4 + 1 + 1);
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    const id = chunks[0].id;
    expect(id).toMatch(/^chatcmpl-/);
    for (const c of chunks) {
      expect(c).toMatchObject({ id, object: 'chat.completion.chunk', model: 'm1' });
      expect(typeof c.created).toBe('number');
    }
    expect(chunks[0].choices).toEqual([
      { index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null },
    ]);
    const content = chunks.slice(1, 5);
    expect(content.map((c) => c.choices[0].finish_reason)).toEqual([null, null, null, 'length']);
    expect(content.every((c) => typeof c.choices[0].delta.content === 'string' && c.usage === null)).toBe(
      true,
    );
    expect(chunks[5]).toMatchObject({
      choices: [],
      usage: { completion_tokens: 4, total_tokens: 4 + chunks[5].usage.prompt_tokens },
    });
    expect(chunks[5].usage.prompt_tokens).toBe(4); // "Say something." = 14 chars -> ceil(14/4)
  });

  it('leaves out usage without include_usage', async () => {
    const r = await streamSse(emu.url, '/v1/chat/completions', chat(2, { stream: true }));
    const chunks = r.events.slice(0, -1).map((e) => JSON.parse(e.data));
    expect(chunks).toHaveLength(3);
    expect(chunks.every((c) => !('usage' in c))).toBe(true);
    expect(r.events.at(-1)?.data).toBe('[DONE]');
  });

  it('streams completions with text chunks and no role chunk', async () => {
    const body = {
      prompt: [1, 2, 3, 4, 5, 6],
      max_tokens: 3,
      stream: true,
      stream_options: { include_usage: true },
    };
    const r = await streamSse(emu.url, '/v1/completions', body);
    const chunks = r.events.slice(0, -1).map((e) => JSON.parse(e.data));
    expect(chunks).toHaveLength(4);
    expect(chunks[0]).toMatchObject({
      object: 'text_completion',
      choices: [{ index: 0, finish_reason: null }],
    });
    expect(typeof chunks[0].choices[0].text).toBe('string');
    expect(chunks[2].choices[0].finish_reason).toBe('length');
    expect(chunks[3].usage).toEqual({ prompt_tokens: 6, completion_tokens: 3, total_tokens: 9 });
  });
});

describe('non-streaming responses', () => {
  it('answers chat completions with a message and usage', async () => {
    const r = await postJson(emu.url, '/v1/chat/completions', chat(3, { sluice_prompt_tokens: 100 }));
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.json).toMatchObject({
      object: 'chat.completion',
      model: 'm1',
      choices: [{ index: 0, message: { role: 'assistant' }, finish_reason: 'length' }],
      usage: { prompt_tokens: 100, completion_tokens: 3, total_tokens: 103 },
    });
    expect(r.json.choices[0].message.content).toBe(' The quick brown');
  });

  it('generates the default length with finish_reason stop when max_tokens is absent', async () => {
    const r = await postJson(emu.url, '/v1/completions', { prompt: 'hi' });
    expect(r.json).toMatchObject({ object: 'text_completion', choices: [{ finish_reason: 'stop' }] });
    expect(r.json.usage.completion_tokens).toBe(256);
  });

  it('serves models, health and 404/405 in the OpenAI error shape', async () => {
    const models = await http(emu.url, 'GET', '/v1/models');
    expect(JSON.parse(models.text)).toMatchObject({
      object: 'list',
      data: [{ id: 'm1', object: 'model', owned_by: 'vllm' }],
    });
    expect((await http(emu.url, 'GET', '/health')).status).toBe(200);
    const missing = await http(emu.url, 'GET', '/v2/nothing');
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.text).error).toMatchObject({ type: 'NotFoundError', code: 404 });
    const wrong = await http(emu.url, 'GET', '/v1/chat/completions');
    expect([wrong.status, wrong.headers.allow]).toEqual([405, 'POST']);
  });
});

describe('connections', () => {
  it('keeps HTTP/1.1 connections alive across requests, streams included', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const send = (body: unknown) =>
      new Promise<boolean>((resolve, reject) => {
        const req = request(`${emu.url}/v1/chat/completions`, { method: 'POST', agent });
        req.on('response', (res) => {
          res.resume();
          res.on('end', () => resolve(req.reusedSocket));
        });
        req.on('error', reject);
        req.end(JSON.stringify(body));
      });
    expect(await send(chat(2, { stream: true }))).toBe(false);
    expect(await send(chat(2, { stream: true }))).toBe(true);
    expect(await send(chat(2))).toBe(true);
    agent.destroy();
  });
});

describe('invalid requests', () => {
  it('answers 400 naming the field for bad JSON and bad fields', async () => {
    const bad = await http(emu.url, 'POST', '/v1/chat/completions', undefined, '{"messages": [');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text).error).toMatchObject({ type: 'BadRequestError', param: 'body', code: 400 });
    const r = await postJson(emu.url, '/v1/chat/completions', chat(0));
    expect([r.status, r.json.error.param]).toEqual([400, 'max_tokens']);
    expect(r.json.error.message).toBe('max_tokens: 0 is not an integer >= 1');
  });

  it('answers 400 for a prompt longer than max_model_len, naming the field', async () => {
    const r = await postJson(emu.url, '/v1/chat/completions', chat(10, { sluice_prompt_tokens: 200_000 }));
    expect(r.status).toBe(400);
    expect(r.json.error.param).toBe('messages');
    expect(r.json.error.message).toMatch(/^messages: This model's maximum context length is 131072 tokens/);
    const m = await postJson(emu.url, '/v1/completions', { prompt: 'x', max_tokens: 131_072 });
    expect([m.status, m.json.error.param]).toEqual([400, 'max_tokens']);
  });

  it('answers 404 for another model, as vLLM does', async () => {
    const r = await postJson(emu.url, '/v1/chat/completions', chat(1, { model: 'other' }));
    expect([r.status, r.json.error.param]).toEqual([404, 'model']);
  });

  it('answers 413 to an oversized body', async () => {
    const r = await http(emu.url, 'POST', '/v1/completions', undefined, 'x'.repeat(MAX_BODY_BYTES + 1));
    expect(r.status).toBe(413);
  });
});
