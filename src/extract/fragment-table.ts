/**
 * Which table a pasted rule belongs to when the paste has no `*table` line (`iptables-save | grep …`).
 * The table is inferred from what the rule is, never taken as a default when the rule says: a DNAT,
 * a MASQUERADE, a jump to kube-proxy's per-Service chains (KUBE-SVC/SVL/SEP/EXT/XLB-…) or to
 * KUBE-MARK-MASQ lives in nat; REJECT and DROP cannot be written in nat (iptables refuses them there:
 * "The "nat" table is not intended for filtering") and kube-proxy writes them in filter, as it writes
 * KUBE-FORWARD / KUBE-EXTERNAL-SERVICES / KUBE-PROXY-FIREWALL. Rules that say neither follow the
 * other rules of their chain. A grep that holds both kinds is two tables, each inferred.
 */
import type { LineSyntax } from '../../grammars/common/iptables-syntax.js';

type RuleLine = Extract<LineSyntax, { kind: 'rule' }>;
export type FragmentTable = 'nat' | 'filter';

/** Chains only nat has (kube-proxy's and the built-in ones): a rule appended to one is in nat. */
const NAT_CHAIN = /^(PREROUTING|POSTROUTING|KUBE-(SVC|SVL|SEP|EXT|XLB)-|KUBE-MARK-MASQ$|KUBE-POSTROUTING$|KUBE-NODE-PORT$|KUBE-LOAD-BALANCER$)/;
/** …and filter's. */
const FILTER_CHAIN = /^(FORWARD$|KUBE-FORWARD$|KUBE-EXTERNAL-SERVICES$|KUBE-PROXY-FIREWALL$)/;
/** Targets only nat takes. */
const NAT_TARGET = /^(DNAT|SNAT|MASQUERADE|REDIRECT|NETMAP|KUBE-MARK-MASQ|KUBE-POSTROUTING|KUBE-(SVC|SVL|SEP|EXT|XLB)-.+)$/;
/** Targets nat refuses or that kube-proxy writes only in filter. */
const FILTER_TARGET = /^(REJECT|DROP|KUBE-FORWARD|KUBE-EXTERNAL-SERVICES|KUBE-PROXY-FIREWALL)$/;

/** What a rule's own chain and target say about its table (undefined: they do not say). */
export function ruleTable(r: RuleLine): { table: FragmentTable; why: string } | undefined {
  if (NAT_CHAIN.test(r.chain)) return { table: 'nat', why: `chain ${r.chain}` };
  if (FILTER_CHAIN.test(r.chain)) return { table: 'filter', why: `chain ${r.chain}` };
  for (const i of r.items) {
    if (i.kind !== 'target') continue;
    if (NAT_TARGET.test(i.name)) return { table: 'nat', why: `-j ${i.name}` };
    if (FILTER_TARGET.test(i.name)) return { table: 'filter', why: `-j ${i.name}` };
  }
  return undefined;
}

/** How the table of a fragment's rules was chosen: `content` names the first rule that said; `default`: none said. */
export interface TableInference {
  readonly basis: 'content' | 'default';
  readonly line?: number;
  readonly why?: string;
}

/** The fragment's rules split by table (indexes into `rules`), each table with how it was inferred. */
export function splitFragment(rules: readonly RuleLine[], lines: readonly number[]): { table: FragmentTable; rules: number[]; inferred: TableInference }[] {
  const said: (FragmentTable | undefined)[] = [];
  const first = new Map<FragmentTable, TableInference>();
  const byChain = new Map<string, { nat: number; filter: number }>();
  rules.forEach((r, i) => {
    const t = ruleTable(r);
    said.push(t?.table);
    if (!t) return;
    if (!first.has(t.table)) first.set(t.table, { basis: 'content', line: lines[i], why: t.why });
    const c = byChain.get(r.chain) ?? { nat: 0, filter: 0 };
    c[t.table]++;
    byChain.set(r.chain, c);
  });
  if (first.size === 0) return [{ table: 'filter', rules: rules.map((_, i) => i), inferred: { basis: 'default' } }];
  const total = { nat: 0, filter: 0 };
  for (const t of said) if (t) total[t]++;
  const majority: FragmentTable = total.nat >= total.filter ? 'nat' : 'filter';
  const out = new Map<FragmentTable, number[]>();
  rules.forEach((r, i) => {
    let t = said[i];
    if (!t) {
      const c = byChain.get(r.chain);
      t = c && c.nat !== c.filter ? (c.nat > c.filter ? 'nat' : 'filter') : majority;
    }
    const list = out.get(t) ?? [];
    list.push(i);
    out.set(t, list);
  });
  return [...out].map(([table, list]) => ({ table, rules: list, inferred: first.get(table)! }));
}
