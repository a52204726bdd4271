/** Stable JSON: two-space indent, and no raw control characters even outside C0. */
export function renderJson(value: unknown): string {
  return (
    JSON.stringify(value, (_k, v) => (v instanceof Map ? Object.fromEntries(v) : typeof v === 'bigint' ? v.toString() : v), 2).replace(
      /[\u007f-\u009f\u2028\u2029]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    ) + '\n'
  );
}
