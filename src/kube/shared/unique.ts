/** Lists without repeats, as the proxy-mode readers hand them to the builder. */
import type { Absence } from '../facts.js';

/** The list without repeats (kept first); the list itself when it has none, as nearly always. */
export function uniqueInOrder(list: string[]): string[] {
  if (list.length > 16) return [...new Set(list)];
  for (let i = 1; i < list.length; i++) if (list.lastIndexOf(list[i], i - 1) >= 0) return [...new Set(list)];
  return list;
}

/** Absences without repeats (two endpoint chains past one truncation are one absence). */
export function uniqueAbsences(list: Absence[]): Absence[] {
  if (list.length < 2) return list;
  const seen = new Set<string>();
  return list.filter((a) => {
    const k = JSON.stringify(a);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
