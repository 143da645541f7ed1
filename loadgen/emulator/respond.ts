/** Small helpers to answer JSON, text and errors. */
import type { ServerResponse } from 'node:http';
import type { ApiError } from './errors.js';

/** Sends a JSON body with a status. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** Sends an API error in the OpenAI shape. */
export function sendError(res: ServerResponse, err: ApiError, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  sendJson(res, err.status, err.body(), headers);
}

/** Sends a text body with a status. */
export function sendText(res: ServerResponse, status: number, text: string, contentType: string): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
