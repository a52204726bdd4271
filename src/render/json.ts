/**
 * Stable JSON: two-space indent, and no raw control characters even outside C0. Models with Maps or
 * bigints (`kpx dump -o json`) need the replacer; plain results (`services`, `trace`) skip its
 * per-value call, which costs real time on 10k-Service outputs.
 */
export function renderJson(value: unknown, opts: { plain?: boolean } = {}): string {
  const replacer = opts.plain ? undefined : (_k: string, v: unknown) => (v instanceof Map ? Object.fromEntries(v) : typeof v === 'bigint' ? v.toString() : v);
  return (
    JSON.stringify(value, replacer, 2).replace(
      /[\u007f-\u009f\u2028\u2029]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    ) + '\n'
  );
}
