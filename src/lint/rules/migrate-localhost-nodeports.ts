import { routeLocalnetSwitch } from '../../model/switches.js';
import { decisive, evidenceLine } from '../kernel-util.js';
import { kubeProxyConfigs, natRules, configRelated } from '../kube-proxy-util.js';
import { nodePortDispatch, sourceMode } from '../migration-util.js';
import { ruleRelated } from '../context.js';
import { createRule, type Related } from '../rule.js';

/**
 * iptables mode serves NodePorts on 127.0.0.1 (route_localnet=1, the LOCAL dispatch of KUBE-SERVICES);
 * nftables mode does not (KEP-3866 "localhost NodePorts"; virtual-ips.md, "Migrating from iptables mode to nftables").
 */
export default createRule({
  id: 'migrate-localhost-nodeports',
  meta: {
    category: 'migration',
    description: 'A NodePort answers on 127.0.0.1 today (iptables mode, route_localnet=1); kube-proxy in nftables mode does not serve NodePorts on localhost.',
    severity: 'warning',
    requires: ['iptables'],
    relevant: (ctx) => sourceMode(ctx) === 'iptables',
    docs: [
      'In iptables mode kube-proxy serves NodePorts on every local address — 127.0.0.1 included, unless',
      '`--iptables-localhost-nodeports=false` (`iptables.localhostNodePorts`) or a `nodePortAddresses` without',
      'loopback — and sets `net.ipv4.conf.all.route_localnet=1` so the DNATed packet may leave with a 127.0.0.1',
      'source. nftables mode does not: "In `nftables` mode (and `ipvs` mode), this will not work" (kubernetes.io,',
      '*Virtual IPs and Service Proxies*, "Migrating from iptables mode to nftables"; KEP-3866 decided not to',
      'support localhost NodePorts, since route_localnet is what made CVE-2020-8558 possible). A client on the node',
      'that connects to `127.0.0.1:NODEPORT` gets "connection refused" after the switch.',
      '',
      'One finding per Service port with a NodePort, at its KUBE-NODEPORTS rule, with the rule that sends local',
      "destinations to KUBE-NODEPORTS and the route_localnet sysctl. kube-proxy's metric",
      '`kubeproxy_iptables_localhost_nodeports_accepted_packets_total` says whether any client uses it.',
      '',
      "**Fix:** point those clients at the node's own address (or the Service's ClusterIP) before switching.",
    ].join('\n'),
    messages: {
      localhost: '127.0.0.1:{{nodePort}}/{{protocol}} reaches {{service}} today (iptables mode serves NodePorts on localhost{{why}}); in nftables mode it will not answer',
    },
  },
  check(ctx) {
    if (sourceMode(ctx) !== 'iptables') return;
    if (kubeProxyConfigs(ctx).some((c) => c.localhostNodePorts?.value === false)) return;
    const { local, addresses } = nodePortDispatch(ctx);
    // Localhost is served when KUBE-SERVICES dispatches every LOCAL destination, or lists 127.0.0.1.
    const dispatch = local[0] ?? addresses.get('127.0.0.1');
    if (!dispatch) return;
    const related: Related[] = [ruleRelated(dispatch)];
    const sw = routeLocalnetSwitch(ctx.snapshot.sysctls, undefined);
    if (sw.known && sw.effect === 'drop') return; // off: 127.0.0.1 NodePorts do not work today either
    const at = decisive(sw.evidence);
    if (at) related.push({ file: at.file, line: at.line, text: evidenceLine(at) });
    const cfg = kubeProxyConfigs(ctx).find((c) => c.localhostNodePorts?.value === true);
    if (cfg?.localhostNodePorts) related.push(configRelated(cfg, cfg.localhostNodePorts));
    const why = at ? `, route_localnet=1` : ', route_localnet not in the dumps';
    const byPort = new Map(natRules(ctx, 'KUBE-NODEPORTS').map((r) => [portOf(r.raw), r] as const));
    for (const s of ctx.resolution.services) {
      if (s.nodePort === null || s.family !== 4) continue;
      const rule = byPort.get(`${s.protocol}/${s.nodePort}`);
      const loc = rule ?? dispatch;
      ctx.report({
        messageId: 'localhost',
        data: { nodePort: s.nodePort, protocol: s.protocol ?? 'tcp', service: ctx.serviceLabel(s), why },
        file: loc.file,
        line: loc.line,
        column: loc.column,
        text: loc.raw,
        service: ctx.serviceLabel(s),
        related: rule ? related : related.slice(1),
      });
    }
  },
});

/** `-A KUBE-NODEPORTS -p tcp … --dport 30080 -j …` → `tcp/30080`. */
function portOf(raw: string): string | undefined {
  const proto = /\s-p\s+(tcp|udp|sctp)\b/.exec(raw)?.[1];
  const port = /--dport\s+(\d+)/.exec(raw)?.[1];
  return proto && port ? `${proto}/${port}` : undefined;
}
