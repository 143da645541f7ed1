/**
 * Writes the generated artifacts of the scenario format: `scenarios/scenario.schema.json` (from the
 * zod schema) and `scenarios/README.md` (from that schema and the library's descriptions).
 * Run: `npx tsx sim/scenario/write-schema.ts`. A test checks the committed files are in step.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import { REPO_ROOT } from './data-files.js';
import { type LibraryEntry, renderReadme, renderSchemaFile } from './docs.js';

/** The scenario library directory of the repository. */
export const SCENARIOS_DIR = join(REPO_ROOT, 'scenarios');
/** Name of the JSON Schema file in the library. */
export const SCHEMA_FILE = 'scenario.schema.json';
/** Name of the format reference in the library. */
export const README_FILE = 'README.md';

/** The scenario files of a directory (`*.yaml`, sorted). */
export function scenarioFiles(dir: string = SCENARIOS_DIR): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') || f.endsWith('.yml'))
    .sort();
}

/** Each scenario file with its `description` (its name when it has none). */
export function libraryEntries(dir: string = SCENARIOS_DIR): LibraryEntry[] {
  return scenarioFiles(dir).map((file) => {
    const data = parse(readFileSync(join(dir, file), 'utf8')) as {
      description?: unknown;
      name?: unknown;
    } | null;
    const description = typeof data?.description === 'string' ? data.description : String(data?.name ?? '');
    return { file, description };
  });
}

/** The generated files of the library, by name, with their contents. */
export function generatedFiles(dir: string = SCENARIOS_DIR): Record<string, string> {
  return { [SCHEMA_FILE]: renderSchemaFile(), [README_FILE]: renderReadme(libraryEntries(dir)) };
}

/** Writes the generated files into `dir`; returns their paths. */
export function writeSchema(dir: string = SCENARIOS_DIR): string[] {
  return Object.entries(generatedFiles(dir)).map(([name, text]) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  for (const path of writeSchema()) process.stdout.write(`wrote ${path}\n`);
}
