/**
 * Deliberately broken tracers, to prove that the kernel comparison catches real mistakes:
 * kpx's own tracePacket, run on a snapshot whose rules were read wrongly on purpose.
 * Each loads the dump afresh (the shared snapshot is never touched) and mutates the model.
 */
import type { Match } from '../../../src/model/netfilter.js';
import { loadKpx, type KpxNode, type OracleDump } from './compare.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

async function mutated(dump: OracleDump, edit: (m: Mutable<Match>) => void): Promise<KpxNode> {
  const kpx = await loadKpx(dump);
  for (const rs of kpx.snapshot.rulesets) for (const t of rs.tables) for (const c of t.chains) for (const r of c.rules) r.matches.forEach((m) => edit(m as Mutable<Match>));
  return kpx;
}

/** A tracer that ignores `!` on -s/-d (`! -s 10.244.0.0/16` read as `-s 10.244.0.0/16`). */
export function ignoringAddressNegation(dump: OracleDump): Promise<KpxNode> {
  return mutated(dump, (m) => {
    if (m.kind === 'address') (m as Mutable<Extract<Match, { kind: 'address' }>>).negated = false;
  });
}

/** A tracer that treats every `-m statistic --mode random` as always matching. */
export function statisticAlwaysMatching(dump: OracleDump): Promise<KpxNode> {
  return mutated(dump, (m) => {
    if (m.kind === 'statistic' && m.mode === 'random') (m as Mutable<Extract<Match, { kind: 'statistic'; mode: 'random' }>>).probability = 1;
  });
}
