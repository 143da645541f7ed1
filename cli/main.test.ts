import { describe, expect, it } from 'vitest';
import { buildProgram } from './main.js';

describe('sluice command', () => {
  it('reports the package version with --version', () => {
    const program = buildProgram();
    let out = '';
    program.exitOverride().configureOutput({ writeOut: (s) => (out += s) });
    expect(() => program.parse(['node', 'sluice', '--version'])).toThrow();
    expect(out.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
