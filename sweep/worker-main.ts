/**
 * The sweep pool's worker: receives the scenarios once (workerData), then
 * runs tasks one at a time as the parent sends them and posts each run's
 * figures back. A null message ends it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Scenario } from '../sim/scenario/resolve.js';
import { type RunTask, runTask } from './run-task.js';

/** What the worker posts back. */
export type WorkerReply =
  | { id: number; figures: import('./metrics.js').Figures }
  | { id: number; error: { name: string; message: string; stack?: string } };

const { scenarios } = workerData as { scenarios: Scenario[] };
const port = parentPort!;

port.on('message', (task: RunTask | null) => {
  if (task === null) {
    port.close();
    return;
  }
  const scenario = scenarios[task.scenario];
  const done = scenario
    ? runTask(scenario, task.params, task.seed)
    : Promise.reject(new Error(`no scenario ${task.scenario}`));
  done.then(
    (figures) => port.postMessage({ id: task.id, figures } satisfies WorkerReply),
    (err: unknown) => {
      const e = err instanceof Error ? err : new Error(String(err));
      port.postMessage({
        id: task.id,
        error: { name: e.name, message: e.message, ...(e.stack ? { stack: e.stack } : {}) },
      } satisfies WorkerReply);
    },
  );
});
