import { describe, expect, it } from 'vitest';
import { formatJson } from './json.js';

describe('formatJson', () => {
  it('puts each data row on one line and reads back to the same value', () => {
    const value = {
      a: 1,
      data: {
        values: [
          { x: 1, y: null },
          { x: 2, y: 'q"' },
        ],
      },
      nested: [[1, 2], { k: [3] }],
      e: [],
    };
    const text = formatJson(value);
    expect(text).toContain('\n      {"x":1,"y":null},\n      {"x":2,"y":"q\\""}\n');
    expect(JSON.parse(text)).toEqual(value);
    expect(text.endsWith('}\n')).toBe(true);
  });

  it('drops undefined properties like JSON.stringify', () => {
    expect(JSON.parse(formatJson({ a: undefined, b: 1 }))).toEqual({ b: 1 });
  });
});
