/** What the conntrack lint rules share: entry quoting, labels, and a cap on findings per Service port. */
import { formatEntry, type ConntrackTable } from '../model/conntrack.js';
import type { FrontEndKind } from '../kube/facts.js';
import type { ServicePort } from '../kube/types.js';
import type { RuleContext } from './rule.js';

/** Findings per Service port and rule before the rest are summed up in one (a storm of stale entries is one problem). */
export const PER_SERVICE_CAP = 50;

export const FRONT_LABEL: Readonly<Record<FrontEndKind, string>> = {
  'cluster-ip': 'ClusterIP',
  'external-ip': 'external IP',
  'load-balancer-ip': 'load-balancer IP',
  'node-port': 'NodePort',
};

/** `udp 10.0.0.5:41000 → 10.96.0.10:53`: the original direction of entry i. */
export function flowOf(t: ConntrackTable, i: number): string {
  const e = t.entry(i);
  const hp = (ip: string, port: number | undefined): string => (port === undefined ? ip : ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);
  return `${e.proto} ${hp(e.orig.src, e.orig.sport)} → ${hp(e.orig.dst, e.orig.dport)}`;
}

export function entryText(t: ConntrackTable, i: number): string {
  return formatEntry(t.entry(i));
}

/** Counts findings per (service, rule) and reports the overflow once per Service port at the end. */
export class Capped {
  private readonly counts = new Map<ServicePort, { n: number; table: ConntrackTable; first: number }>();
  /** True when the entry may be reported individually. */
  take(s: ServicePort, t: ConntrackTable, i: number): boolean {
    const c = this.counts.get(s) ?? { n: 0, table: t, first: i };
    c.n++;
    this.counts.set(s, c);
    return c.n <= PER_SERVICE_CAP;
  }
  flush(ctx: RuleContext, messageId: string): void {
    for (const [s, c] of this.counts) {
      if (c.n <= PER_SERVICE_CAP) continue;
      ctx.report({ messageId, data: { more: c.n - PER_SERVICE_CAP, total: c.n, service: ctx.serviceLabel(s) }, file: c.table.file, line: c.table.lineOf(c.first), service: ctx.serviceLabel(s) });
    }
  }
}

export function tablesOf(ctx: RuleContext): readonly ConntrackTable[] {
  return ctx.snapshot.conntrack?.tables ?? [];
}

export function hasConntrack(ctx: { snapshot: { conntrack?: unknown } }): boolean {
  return ctx.snapshot.conntrack !== undefined;
}
