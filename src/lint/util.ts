/** Small helpers shared by rules. */
import type { Chain, Rule } from '../model/netfilter.js';
import type { ServicePort } from '../kube/types.js';
import type { LintContext, TableIndex } from './context.js';

/** The Service port a rule belongs to: by its chain, else by the chain it jumps to. */
export function serviceOfRule(ctx: LintContext, r: Rule): ServicePort | undefined {
  const own = ctx.serviceOfChain(r.file, r.table, r.chain);
  if (own) return own;
  const t = r.target && (r.target.kind === 'jump' || r.target.kind === 'goto') ? r.target.chain : undefined;
  return t ? ctx.serviceOfChain(r.file, r.table, t) : undefined;
}

export function serviceLabelOf(ctx: LintContext, s: ServicePort | undefined): { service?: string } {
  return s ? { service: ctx.serviceLabel(s) } : {};
}

/** Every rule of every table, in dump order. */
export function* allRules(ctx: LintContext): Generator<{ t: TableIndex; r: Rule }> {
  for (const t of ctx.tables) for (const c of t.table.chains) for (const r of c.rules) yield { t, r };
}

export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** Position of the chain holding the last rule a truncated table kept (-1: none); iptables-save prints rules in chain order. */
export function lastRuleChain(chains: readonly Chain[]): number {
  let last = -1;
  let line = -1;
  chains.forEach((c, i) => {
    const r = c.rules[c.rules.length - 1];
    if (r && r.line > line) {
      line = r.line;
      last = i;
    }
  });
  return last;
}
