/** Provisioning tools prefix every line of a command's output with the machine's name. */

/** A per-line prefix naming the machine (`node2: ` from vagrant, `host | ` from ansible) shared by most lines. */
export function machinePrefix(lines: readonly string[]): RegExp | undefined {
  const counts = new Map<string, number>();
  let content = 0;
  for (const l of lines.slice(0, 200)) {
    if (l.trim() === '') continue;
    content++;
    const m = /^\s*([A-Za-z0-9_.-]+): /.exec(l) ?? /^\s*([A-Za-z0-9_.-]+) \| /.exec(l);
    if (m && !/^(sysctl|grep|cat|\d+)$/.test(m[1])) counts.set(m[0], (counts.get(m[0]) ?? 0) + 1);
  }
  const best = [...counts].sort((a, b) => b[1] - a[1])[0];
  if (!best || best[1] < 3 || best[1] * 5 < content * 4) return undefined;
  return new RegExp(`^${best[0].replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);
}

