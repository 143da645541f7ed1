/**
 * "Did you mean" hints: the known name nearest to a misspelt one by edit
 * distance (Levenshtein).
 */

/** Edits (insertions, deletions, substitutions) that turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length]!;
}

/** The name of `known` nearest to `key`, if one is closer than `below` edits. */
export function nearestName(key: string, known: readonly string[], below: number): string | undefined {
  let best: string | undefined;
  let bestD = below;
  for (const name of known) {
    const d = editDistance(key, name);
    if (d < bestD) {
      bestD = d;
      best = name;
    }
  }
  return best;
}
