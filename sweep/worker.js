// Worker-thread entry of the sweep pool: loads the TypeScript sources through
// tsx (hooks registered in the parent do not reach a worker), then the worker.
import { register } from 'tsx/esm/api';

register();
await import('./worker-main.ts');
