/**
 * Runs many (scenario, point, seed) tasks on a pool of worker threads, one
 * task at a time per worker, handed out as workers free up. Results are keyed
 * by task id, and each run depends only on its scenario, point and seed, so
 * the result is the same whatever the worker count or the order runs finish.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Scenario } from '../sim/scenario/resolve.js';
import type { Figures } from './metrics.js';
import { type RunTask, runTask } from './run-task.js';
import type { WorkerReply } from './worker-main.js';

/** Options of {@link runTasks}. */
export interface PoolOptions {
  /** Worker threads; 0 runs in this thread (tests, debugging). Default: all cores. */
  workers?: number;
  /** Called after each finished run with (done, total). */
  onProgress?: (done: number, total: number) => void;
}

/** The default worker count: every core. */
export function defaultWorkers(): number {
  return availableParallelism();
}

/** A run that failed inside a worker, with the worker's stack. */
export class RunFailedError extends Error {
  override readonly name = 'RunFailedError';
}

/** Runs every task; resolves to the figures by task id. Rejects on the first failed run. */
export async function runTasks(
  scenarios: readonly Scenario[],
  tasks: readonly RunTask[],
  opts: PoolOptions = {},
): Promise<Map<number, Figures>> {
  const workers = Math.min(opts.workers ?? defaultWorkers(), tasks.length);
  const results = new Map<number, Figures>();
  const progress = (): void => opts.onProgress?.(results.size, tasks.length);
  if (workers <= 0) {
    for (const t of tasks) {
      const s = scenarios[t.scenario];
      if (!s) throw new RunFailedError(`task ${t.id}: no scenario ${t.scenario}`);
      results.set(t.id, await runTask(s, t.params, t.seed));
      progress();
    }
    return results;
  }
  return runOnThreads(scenarios, tasks, workers, results, progress);
}

function runOnThreads(
  scenarios: readonly Scenario[],
  tasks: readonly RunTask[],
  count: number,
  results: Map<number, Figures>,
  progress: () => void,
): Promise<Map<number, Figures>> {
  return new Promise((resolve, reject) => {
    const pool: Worker[] = [];
    let next = 0;
    let failed = false;
    const fail = (err: Error): void => {
      if (failed) return;
      failed = true;
      for (const w of pool) void w.terminate();
      reject(err);
    };
    const feed = (w: Worker): void => {
      const t = tasks[next++];
      w.postMessage(t ?? null);
    };
    for (let i = 0; i < count; i++) {
      const w = new Worker(new URL('./worker.js', import.meta.url), {
        workerData: { scenarios },
      });
      pool.push(w);
      w.on('message', (m: WorkerReply) => {
        if (failed) return;
        if ('error' in m) {
          const task = tasks.find((t) => t.id === m.id);
          const err = new RunFailedError(
            `run ${m.id} (seed ${task?.seed}) failed: ${m.error.name}: ${m.error.message}`,
          );
          if (m.error.stack) err.stack = m.error.stack;
          fail(err);
          return;
        }
        results.set(m.id, m.figures);
        progress();
        if (results.size === tasks.length) {
          for (const x of pool) x.postMessage(null);
          resolve(results);
          return;
        }
        feed(w);
      });
      w.on('error', (err) => fail(err instanceof Error ? err : new Error(String(err))));
      w.on('exit', (code) => {
        if (code !== 0 && results.size < tasks.length)
          fail(new RunFailedError(`a worker exited with code ${code}`));
      });
      feed(w);
    }
  });
}
