/**
 * `POST /v1/chat/completions` and `POST /v1/completions`: checks the request, draws the
 * injected error, submits it to the engine host and streams (or buffers) its tokens back.
 * A client that goes away before the end aborts its engine request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SubmitRejection } from '../../sim/engine/types.js';
import { ResponseRenderer, SSE_DONE, usageOf } from './chunks.js';
import type { EmulatorContext } from './context.js';
import { ApiError } from './errors.js';
import type { HostedRequest } from './host.js';
import type { InferenceApi, InferenceParams } from './openai.js';
import { parseInferenceBody } from './openai.js';
import { sendError } from './respond.js';
import { BodyWriter } from './writer.js';

/** Handles one inference request whose body has been read. */
export function handleInference(
  ctx: EmulatorContext,
  api: InferenceApi,
  _req: IncomingMessage,
  res: ServerResponse,
  rawBody: string,
): void {
  ctx.counters.requests++;
  let params: InferenceParams;
  let outputTokens: number;
  try {
    params = parseInferenceBody(api, rawBody);
    checkModel(ctx, params);
    outputTokens = outputLength(ctx, params);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    ctx.counters.invalid++;
    sendError(res, err);
    return;
  }
  // One draw per valid request, whatever the rate, so a rate change never shifts the stream.
  const draw = ctx.errorRng.next();
  if (draw < ctx.faults.errorRate) {
    ctx.counters.injectedErrors++;
    const status = ctx.faults.errorStatus;
    sendError(
      res,
      new ApiError(status, `injected fault: error_rate ${ctx.faults.errorRate}, status ${status}`),
    );
    return;
  }
  startGeneration(ctx, params, outputTokens, res);
}

function checkModel(ctx: EmulatorContext, p: InferenceParams): void {
  if (p.model !== null && p.model !== ctx.modelName) {
    throw new ApiError(404, `model: The model \`${p.model}\` does not exist.`, 'model');
  }
}

/** Output length: max_tokens (vLLM with ignore_eos) or the default; checked against max_model_len. */
function outputLength(ctx: EmulatorContext, p: InferenceParams): number {
  const limit = ctx.maxModelLen;
  const wanted = p.maxTokens ?? Math.min(ctx.defaultMaxTokens, Math.max(1, limit - p.promptTokens));
  if (p.promptTokens + wanted > limit) {
    const field = p.promptTokens >= limit || p.maxTokensField === null ? p.promptField : p.maxTokensField;
    throw new ApiError(
      400,
      `${field}: This model's maximum context length is ${limit} tokens. However, you requested ` +
        `${p.promptTokens + wanted} tokens (${p.promptTokens} in the ${p.promptField}, ${wanted} in the ` +
        'completion). Please reduce the length of the messages or completion.',
      field,
    );
  }
  return wanted;
}

function rejectionError(reason: SubmitRejection, p: InferenceParams): ApiError {
  if (reason === 'too_long') {
    return new ApiError(
      400,
      `${p.promptField}: prompt and completion do not fit in the KV cache of this engine`,
      p.promptField,
    );
  }
  return new ApiError(500, `engine refused the request: ${reason}`);
}

function startGeneration(
  ctx: EmulatorContext,
  p: InferenceParams,
  outputTokens: number,
  res: ServerResponse,
): void {
  const id = ctx.nextId();
  const renderer = new ResponseRenderer(
    p.api,
    `${p.api === 'chat' ? 'chatcmpl' : 'cmpl'}-${id}`,
    Math.floor(Date.now() / 1000),
    ctx.modelName,
    p.includeUsage,
  );
  const finishReason: 'stop' | 'length' = p.maxTokens === null ? 'stop' : 'length';
  const f = ctx.faults;
  const writer = new BodyWriter(res, { stallMs: f.stallMs, afterTokens: f.stallAfterTokens });
  let emitted = 0;
  let done = false;
  if (p.stream) {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    res.flushHeaders();
  }
  const leave = (): void => {
    done = true;
    ctx.active.delete(id);
    if (writer.stalled) ctx.counters.stalled++;
  };
  const request: HostedRequest = {
    id,
    promptTokens: p.promptTokens,
    outputTokens,
    finishReason,
    sink: {
      token: () => {
        if (done) return;
        const index = emitted++;
        if (!p.stream) {
          writer.token('');
          return;
        }
        const last = emitted === outputTokens ? finishReason : null;
        const role = index === 0 ? (renderer.roleEvent() ?? '') : '';
        writer.token(role + renderer.tokenEvent(index, last));
      },
      finish: (reason, n) => {
        if (done) return;
        leave();
        ctx.counters.completed++;
        const usage = usageOf(p.promptTokens, n);
        if (p.stream) {
          writer.end((p.includeUsage ? renderer.usageEvent(usage) : '') + SSE_DONE);
        } else {
          const body = JSON.stringify(renderer.full(n, reason, usage));
          res.setHeader('content-type', 'application/json');
          res.setHeader('content-length', Buffer.byteLength(body));
          writer.end(body);
        }
      },
      reject: (reason) => {
        if (done) return;
        leave();
        ctx.counters.invalid++;
        failAfterStart(res, rejectionError(reason, p), p.stream);
      },
    },
  };
  const abandon = (): void => {
    if (done) return;
    leave();
    writer.dispose();
    ctx.host.abort(id);
  };
  ctx.active.set(id, abandon);
  res.on('close', () => {
    if (done) {
      writer.dispose();
      return;
    }
    ctx.counters.disconnected++;
    abandon();
  });
  const refused = ctx.host.submit(request);
  if (refused !== null) request.sink.reject(refused);
}

/** An error after the response may have started: a JSON error, or an SSE error event + [DONE]. */
function failAfterStart(res: ServerResponse, err: ApiError, stream: boolean): void {
  if (!stream) {
    sendError(res, err);
    return;
  }
  res.end(`data: ${JSON.stringify(err.body())}\n\n${SSE_DONE}`);
}
