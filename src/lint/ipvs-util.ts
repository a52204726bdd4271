/** IPVS helpers shared by the ipvs-* rules: virtual servers deduplicated across listings. */
import { cutVirtualServer, virtualServerKey, type VirtualServer } from '../model/ipvs.js';
import type { LintContext } from './context.js';

/** Virtual servers of every listing (not connection tables), first listing with weights wins per key. */
export function virtualServers(ctx: LintContext): { key: string; vs: VirtualServer }[] {
  const byKey = new Map<string, VirtualServer>();
  for (const d of ctx.snapshot.ipvs) {
    if (d.view === 'connections') continue;
    for (const vs of d.virtualServers) {
      const key = virtualServerKey(vs);
      const prev = byKey.get(key);
      if (!prev || (prev.scheduler === undefined && vs.scheduler !== undefined)) byKey.set(key, vs);
    }
  }
  return [...byKey].map(([key, vs]) => ({ key, vs }));
}

/** Virtual servers a cut listing ends in (their real servers may go on past the cut), and whether any listing was cut. */
export function cutListings(ctx: LintContext): { readonly cut: ReadonlySet<VirtualServer>; readonly any: boolean } {
  const cut = new Set<VirtualServer>();
  for (const d of ctx.snapshot.ipvs) {
    const vs = cutVirtualServer(d);
    if (vs) cut.add(vs);
  }
  return { cut, any: cut.size > 0 };
}

export function vsText(vs: VirtualServer): string {
  const host = vs.address ?? '';
  const h = vs.family === 6 ? `[${host}]` : host;
  return vs.protocol === 'FWM' ? `FWM  ${vs.fwmark ?? ''} ${vs.scheduler ?? ''}`.trim() : `${vs.protocol}  ${h}:${vs.port ?? vs.portName ?? ''} ${vs.scheduler ?? ''}`.trim();
}

export function serviceOfVs(ctx: LintContext, key: string): { service?: string } {
  const s = ctx.serviceOfVirtualServer(key);
  return s ? { service: ctx.serviceLabel(s) } : {};
}

/** Virtual servers grouped by the Service port they belong to (a virtual server kpx cannot tie to one stands alone). */
export function byServicePort(ctx: LintContext, list: readonly { key: string; vs: VirtualServer }[]): { service?: string; items: { key: string; vs: VirtualServer }[] }[] {
  const groups = new Map<unknown, { service?: string; items: { key: string; vs: VirtualServer }[] }>();
  for (const it of list) {
    const s = ctx.serviceOfVirtualServer(it.key);
    const k = s ?? it.key;
    const g = groups.get(k) ?? { ...(s ? { service: ctx.serviceLabel(s) } : {}), items: [] };
    g.items.push(it);
    groups.set(k, g);
  }
  return [...groups.values()];
}
