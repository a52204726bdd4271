/**
 * Shared by the kube-proxy-* lint rules: kube-proxy's logs and configuration in the snapshot, and
 * what the dumps say kube-proxy wrote (the pod network of its masquerade rules, its mark bit, how
 * it dispatches NodePorts), each with the dump line that shows it.
 */
import type { ConfigValue, KubeProxyConfig, KubeProxyLog, LogPlace } from '../model/kube-proxy.js';
import type { Rule } from '../model/netfilter.js';
import type { LintContext } from './context.js';
import type { Related } from './rule.js';
import { ruleRelated } from './context.js';

export const kubeProxyLogs = (ctx: LintContext): readonly KubeProxyLog[] => ctx.snapshot.kubeProxy?.logs ?? [];
export const kubeProxyConfigs = (ctx: LintContext): readonly KubeProxyConfig[] => ctx.snapshot.kubeProxy?.configs ?? [];

export const placeRelated = (p: LogPlace): Related => ({ file: p.file, line: p.line, text: p.text });
export const configRelated = (c: KubeProxyConfig, v: ConfigValue<unknown>): Related => ({ file: c.file, line: v.line, text: v.text });

/** Rules of kube-proxy's chains in the nat table of every iptables dump. */
export function natRules(ctx: LintContext, chain: string): Rule[] {
  const out: Rule[] = [];
  for (const t of ctx.tables) {
    if (t.table.name !== 'nat') continue;
    for (const c of t.table.chains) if (c.name === chain) out.push(...c.rules);
  }
  return out;
}

/**
 * The pod network kube-proxy's rules reveal: the CIDRs of `! -s CIDR … -j KUBE-MARK-MASQ` in
 * KUBE-SERVICES (detectLocalMode ClusterCIDR: traffic from outside the cluster CIDR is masqueraded).
 */
export function masqueradeCidrs(ctx: LintContext): { cidrs: Map<string, Related> } {
  const cidrs = new Map<string, Related>();
  for (const t of ctx.tables) {
    if (t.table.name !== 'nat') continue;
    for (const c of t.table.chains) {
      if (!/^KUBE-(SERVICES|SVC-|EXT-)/.test(c.name)) continue;
      for (const r of c.rules) {
        if (!(r.target?.kind === 'jump' && r.target.chain === 'KUBE-MARK-MASQ')) continue;
        for (const m of r.matches) if (m.kind === 'address' && m.dir === 'src' && m.negated && !cidrs.has(m.text)) cidrs.set(m.text, ruleRelated(r));
      }
    }
  }
  return { cidrs };
}

/** KUBE-MARK-MASQ's `-j MARK --or-mark 0x4000`: the mark kube-proxy sets, and its bit. */
export function markMasqBits(ctx: LintContext): { bit: number | undefined; value: number; rule: Rule }[] {
  const out: { bit: number | undefined; value: number; rule: Rule }[] = [];
  for (const r of natRules(ctx, 'KUBE-MARK-MASQ')) {
    if (r.target?.kind !== 'mark') continue;
    const v = r.target.value;
    const bit = v > 0 && (v & (v - 1)) === 0 ? Math.log2(v) : undefined;
    out.push({ bit, value: v, rule: r });
  }
  return out;
}

/**
 * A configuration pasted in part (a fragment without apiVersion and kind, the lines someone changed):
 * a field it does not set may be set in the rest of the file, so it is unknown, not the default.
 */
export const partialConfig = (c: KubeProxyConfig): boolean => c.form === 'fragment';

/** kube-proxy's mode: the default on Linux when `mode` is empty or unset; undefined when a fragment does not say. */
export function configuredMode(c: KubeProxyConfig): string | undefined {
  if (!c.mode && partialConfig(c)) return undefined;
  const m = c.mode?.value.trim().toLowerCase() ?? '';
  return m === '' ? 'iptables' : m;
}
