/**
 * Writes `docs/policy.schema.json`, the JSON Schema of the policy file, from its zod schema
 * (gate/policy/schema.ts). Run: `npm run schema:policy`. A test checks the committed file is in step.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderPolicySchema } from '../gate/index.js';

const out = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'policy.schema.json');
writeFileSync(out, renderPolicySchema());
process.stdout.write(`wrote ${out}\n`);
