/**
 * Child process: the emulated vLLM engine (`fixed` profile). `start` (re)starts
 * it with the given timings and concurrency cap and answers its port.
 */
import { type RunningEmulator, startEmulator } from '../../loadgen/emulator/index.js';
import { serve } from './ipc.js';

export interface EngineConfig {
  ttftMs: number;
  itlMs: number;
  maxNumSeqs: number;
}

let engine: RunningEmulator | null = null;

serve({
  async start(c: EngineConfig) {
    if (engine) await engine.close();
    engine = await startEmulator({
      profile: 'fixed',
      port: 0,
      fixed: { ttftMs: c.ttftMs, itlMs: c.itlMs },
      maxNumSeqs: c.maxNumSeqs,
      keepAliveTimeoutMs: 120_000,
    });
    return engine.port;
  },
  stats() {
    return engine?.stats() ?? null;
  },
  async stop() {
    if (engine) await engine.close();
    engine = null;
    return true;
  },
});
