import { lookupRoute } from '../../model/route.js';
import { formatIp, parseIp } from '../../model/addr.js';
import { isUp, type NetInterface } from '../../model/iface.js';
import { REJECT_TYPES, type Route } from '../../model/route.js';
import { createRule, type Related } from '../rule.js';

function routeText(r: Route): string {
  const parts = [r.type !== 'unicast' ? r.type : '', r.dstText, r.via ? `via ${r.via.address}` : '', r.dev ? `dev ${r.dev}` : '', r.table !== 'main' ? `table ${r.table}` : '', ...r.flags];
  return parts.filter(Boolean).join(' ');
}

export default createRule({
  id: 'endpoint-unroutable',
  meta: {
    description: 'A Service endpoint (DNAT target or IPVS real server) has no route, a blackhole/unreachable/prohibit route, or a route over an interface that is down.',
    severity: 'error',
    docs: [
      'After kube-proxy rewrites a packet\'s destination to an endpoint, the kernel routes it like any other',
      'packet. If the endpoint\'s address has no route, or matches a `blackhole`, `unreachable` or `prohibit`',
      'route, or a route through an interface that is down (or flagged `linkdown`), every connection the',
      'ladder sends to that endpoint fails, while the others work: the classic "one in N requests times out".',
      'Typical causes: the CNI lost the route to another node\'s pod CIDR (node deleted and re-added, BGP',
      'session down, a VXLAN device recreated), a stale endpoint of a pod that has moved, or a route added by',
      'hand.',
      '',
      '**Fix:** compare `ip route get ENDPOINT_IP` on the node with the pod\'s node (`kubectl get pod -o wide`);',
      'restart the CNI agent to restore its routes; if the endpoint is stale, check the EndpointSlice controller',
      'and kube-proxy\'s sync. Needs an `ip route` dump (and `ip addr` for interface state).',
    ].join('\n'),
    requires: ['routes'],
    relevant: (ctx) => ctx.modes.length > 0,
    messages: {
      noRoute: 'endpoint {{ip}} of {{service}} has no route: connections sent to it fail',
      reject: 'endpoint {{ip}} of {{service}} matches a {{type}} route ({{route}}): connections sent to it fail',
      down: 'endpoint {{ip}} of {{service}} is routed over {{dev}}, which is down ({{route}}): connections sent to it fail',
    },
  },
  check(ctx) {
    const snap = ctx.snapshot;
    const ifaces = new Map<string, NetInterface>(snap.interfaces.map((i) => [i.name, i]));
    const nodeAddrs = new Set<string>();
    for (const i of snap.interfaces) for (const a of i.addresses) nodeAddrs.add(formatIp(a.ip));
    for (const ip of snap.extraNodeIps) nodeAddrs.add(formatIp(ip));
    const verdicts = new Map<string, { messageId: string; data: Record<string, string>; related: Related[] } | null>();
    const judge = (ipText: string) => {
      const cached = verdicts.get(ipText);
      if (cached !== undefined) return cached;
      let out: { messageId: string; data: Record<string, string>; related: Related[] } | null = null;
      const ip = parseIp(ipText);
      if (ip && !nodeAddrs.has(formatIp(ip)) && !(ip.family === 4 && ip.value >> 24n === 127n)) {
        const r = lookupRoute(snap.routes, ip);
        if (!r) out = { messageId: 'noRoute', data: {}, related: [] };
        else {
          const rel: Related[] = [{ file: r.file, line: r.line, text: routeText(r) }];
          if (REJECT_TYPES.has(r.type) && r.type !== 'throw') out = { messageId: 'reject', data: { type: r.type, route: routeText(r) }, related: rel };
          else if (r.type === 'unicast') {
            const dev = r.dev ?? r.nexthops?.[0]?.dev;
            const iface = dev ? ifaces.get(dev) : undefined;
            if (dev && ((iface && !isUp(iface)) || r.flags.includes('linkdown') || r.flags.includes('dead'))) {
              out = { messageId: 'down', data: { dev, route: routeText(r) }, related: iface ? [...rel, { file: iface.file, line: iface.line, text: `${iface.name}: <${iface.flags.join(',')}>${iface.state ? ` state ${iface.state}` : ''}` }] : rel };
            }
          }
        }
      }
      verdicts.set(ipText, out);
      return out;
    };
    for (const s of ctx.resolution.services) {
      const done = new Set<string>();
      for (const ep of s.endpoints) {
        if (done.has(ep.ip)) continue;
        done.add(ep.ip);
        const v = judge(ep.ip);
        if (!v) continue;
        const anchor = ep.evidence.find((e) => /DNAT/.test(e.text) && e.text.includes(ep.ip)) ?? ep.evidence.find((e) => e.text.includes(ep.ip)) ?? ep.evidence[ep.evidence.length - 1] ?? s.evidence[0];
        if (!anchor) continue;
        const label = ctx.serviceLabel(s);
        ctx.report({
          messageId: v.messageId,
          data: { ...v.data, ip: ep.ip, service: label },
          file: anchor.file,
          line: anchor.line,
          column: 1,
          text: anchor.text,
          service: label,
          related: v.related,
        });
      }
    }
  },
});
