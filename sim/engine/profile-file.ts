/**
 * The text of a calibrated profile file (`sluice calibrate --out`, a scenario's `profile_file`,
 * `sluice engine --profile-file`): YAML or JSON (YAML 1.2 reads both), written as YAML when the
 * name ends in `.yaml`/`.yml` and as JSON otherwise. The file names its base profile, so a
 * scenario may give `profile_file` alone.
 */
import { parse, stringify } from 'yaml';
import { type CalibratedProfileFile, CalibrationInputError } from './calibrate.js';

/** Parses a profile file's text. @throws CalibrationInputError naming the file when it is neither YAML nor JSON */
export function parseProfileFileText(text: string, label: string): unknown {
  try {
    return parse(text);
  } catch (err) {
    throw new CalibrationInputError(
      `${label}: not a YAML or JSON file (${err instanceof Error ? err.message.split('\n')[0] : String(err)})`,
    );
  }
}

/** The profile a parsed profile file names as its `base`. @throws CalibrationInputError when it names none */
export function profileFileBase(json: unknown, label: string): string {
  const base =
    json !== null && typeof json === 'object' && !Array.isArray(json)
      ? (json as Record<string, unknown>).base
      : undefined;
  if (typeof base !== 'string' || base === '') {
    throw new CalibrationInputError(
      `${label}: field base is ${base === undefined ? 'missing' : JSON.stringify(base)}; expected the name of the deployment profile the terms were fitted for`,
    );
  }
  return base;
}

/** The file's text for `path`: YAML for a `.yaml`/`.yml` name, JSON otherwise, ending in a newline. */
export function formatProfileFile(file: CalibratedProfileFile, path: string): string {
  if (/\.ya?ml$/i.test(path)) {
    return `# A calibrated engine profile written by sluice calibrate: its terms replace those of base.\n${stringify(file)}`;
  }
  return `${JSON.stringify(file, null, 2)}\n`;
}
