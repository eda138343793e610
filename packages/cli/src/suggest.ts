/**
 * "Did you mean …?" for a mistyped command or flag: the nearest candidate by edit distance
 * (Damerau–Levenshtein, optimal string alignment: a swapped pair of letters counts once), or
 * one the word begins. Small enough to keep beside the CLI rather than a dependency.
 */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** The candidate nearest to `word`, if one is near enough to be what was meant. */
export function nearest(word: string, candidates: Iterable<string>): string | undefined {
  const typed = word.toLowerCase();
  // About one mistake per three letters, at least one.
  const allowed = Math.max(1, Math.floor(typed.length / 3));
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(typed, candidate.toLowerCase());
    const prefix = typed.length >= 3 && candidate.toLowerCase().startsWith(typed);
    const score = prefix ? Math.min(distance, allowed) : distance;
    if (score <= allowed && (!best || score < best.distance)) best = { candidate, distance: score };
  }
  return best?.candidate;
}

/** " Did you mean `x`?" or nothing. */
export function didYouMean(word: string, candidates: Iterable<string>, render: (candidate: string) => string = (c) => c): string {
  const match = nearest(word, candidates);
  return match ? ` Did you mean \`${render(match)}\`?` : "";
}
