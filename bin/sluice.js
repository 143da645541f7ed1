#!/usr/bin/env node
// Entry point of the `sluice` command: loads the TypeScript sources through tsx.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../cli/main.ts');
await main(process.argv);
