import { cidrContains, formatIp, parseCidr } from '../../model/addr.js';
import type { ServicePort } from '../../kube/types.js';
import { vsText, virtualServers } from '../ipvs-util.js';
import { configuredNodePortCidrs, inCidrs, localAddresses, nodePortDispatch, nodePortList, nodePorts, primaryAddresses, sourceMode, type LocalAddress } from '../migration-util.js';
import { ruleRelated } from '../context.js';
import { createRule, type Related } from '../rule.js';
import type { LintContext } from '../context.js';
import { kubeProxyConfigs, masqueradeCidrs } from '../kube-proxy-util.js';

/** The pod network (kube-proxy's clusterCIDR, or the `! -s CIDR -j KUBE-MARK-MASQ` rules): a bridge/tunnel address there is seldom a NodePort client's. */
function podNetworks(ctx: LintContext) {
  const texts = [...kubeProxyConfigs(ctx).flatMap((c) => c.clusterCIDR?.value ?? []), ...masqueradeCidrs(ctx).cidrs.keys()];
  return texts.map((t) => parseCidr(t)).filter((c) => c !== undefined);
}

/** The addresses NodePorts answer on today, each with the dump lines that show it. */
function servedToday(ctx: LintContext, locals: readonly LocalAddress[]): { local: LocalAddress; ports: Map<string, ServicePort[]>; evidence: Related[] }[] {
  const all = nodePorts(ctx);
  if (sourceMode(ctx) === 'iptables') {
    const { local, addresses } = nodePortDispatch(ctx);
    return locals.flatMap((l) => {
      const r = local[0] ?? addresses.get(formatIp(l.addr.ip));
      return r ? [{ local: l, ports: all, evidence: [ruleRelated(r)] }] : [];
    });
  }
  // IPVS: one virtual server per node address and NodePort.
  const out: { local: LocalAddress; ports: Map<string, ServicePort[]>; evidence: Related[] }[] = [];
  const vss = virtualServers(ctx);
  for (const l of locals) {
    const ip = formatIp(l.addr.ip);
    const ports = new Map<string, ServicePort[]>();
    const evidence: Related[] = [];
    for (const { vs } of vss) {
      if (!vs.ip || formatIp(vs.ip) !== ip || vs.port === undefined) continue;
      const k = `${vs.port}/${vs.protocol.toLowerCase()}`;
      const list = all.get(k);
      if (!list) continue;
      ports.set(k, list);
      if (evidence.length < 3) evidence.push({ file: vs.file, line: vs.line, text: vsText(vs) });
    }
    if (ports.size) out.push({ local: l, ports, evidence });
  }
  return out;
}

/**
 * nftables mode defaults to `--nodeport-addresses primary` (kubernetes.io, "Migrating from iptables mode
 * to nftables": "NodePort interfaces"; CHANGELOG-1.30, PR #122724); iptables mode (and IPVS) serve every address.
 */
export default createRule({
  id: 'migrate-nodeport-addresses',
  meta: {
    category: 'migration',
    description: 'NodePorts answer today on an address that nftables mode\'s default `nodePortAddresses: primary` will not serve.',
    severity: 'warning',
    requires: ['addresses'],
    relevant: (ctx) => sourceMode(ctx) === 'iptables' || sourceMode(ctx) === 'ipvs',
    docs: [
      'With `nodePortAddresses` unset, iptables mode serves NodePorts on every local address (`-m addrtype',
      '--dst-type LOCAL -j KUBE-NODEPORTS`) and IPVS mode creates a virtual server per node address and NodePort.',
      'nftables mode defaults to `--nodeport-addresses primary`: "Services using `type: NodePort` are only',
      "reachable on the node's primary IPv4 and/or IPv6 addresses\" (kubernetes.io, *Virtual IPs and Service",
      'Proxies*, "Migrating from iptables mode to nftables"; the default since 1.30, PR #122724). A second NIC, a',
      'bridge address, a VIP that a client or an external load balancer uses stops answering on NodePorts.',
      '',
      "One finding per such address, naming its NodePorts and Services, with the `ip addr` line and the rule or",
      "virtual server that serves it today. The primary address is the node IP kube-proxy uses (the Node's",
      'InternalIP); without `--node-ip` or the Node object kpx assumes the default route\'s address and says so.',
      'An explicit `nodePortAddresses` in kube-proxy\'s configuration is kept by nftables mode: then nothing changes.',
      'An address inside the pod network (a CNI bridge or tunnel address) is reported as info: only pods could use it.',
      '',
      '**Fix:** set `nodePortAddresses` to the CIDRs that must keep serving NodePorts (each finding names them), or',
      '`0.0.0.0/0` / `::/0` for every address, in the KubeProxyConfiguration before switching to nftables mode.',
    ].join('\n'),
    messages: {
      address: 'NodePorts {{ports}} answer on {{address}} ({{iface}}) today; nftables mode serves them only on the primary address {{primary}} ({{how}}): set nodePortAddresses to include {{cidr}} to keep them',
      podNetwork: 'NodePorts {{ports}} answer on {{address}} ({{iface}}, in the pod network) today; nftables mode serves them only on {{primary}} ({{how}}): pods that use this address for NodePorts must use {{primary}}',
    },
  },
  check(ctx) {
    const mode = sourceMode(ctx);
    if (mode !== 'iptables' && mode !== 'ipvs') return;
    // An explicit nodePortAddresses: nftables mode keeps it, nothing changes.
    if (configuredNodePortCidrs(ctx)) return;
    const locals = localAddresses(ctx);
    const primary = primaryAddresses(ctx, locals);
    const isPrimary = (l: LocalAddress) => primary.ips.some((ip) => ip.family === l.addr.ip.family && ip.value === l.addr.ip.value);
    const primaryText = primary.ips.map(formatIp).join(', ') || 'unknown';
    const pods = podNetworks(ctx);
    for (const { local: l, ports, evidence } of servedToday(ctx, locals)) {
      if (isPrimary(l) || ports.size === 0) continue;
      const cidr = `${formatIp({ family: l.addr.cidr.family, value: l.addr.cidr.network })}/${l.addr.cidr.prefix}`;
      const inPods = pods.some((c) => c.family === l.addr.ip.family && cidrContains(c, l.addr.ip));
      ctx.report({
        messageId: inPods ? 'podNetwork' : 'address',
        ...(inPods ? { severity: 'info' as const } : {}),
        data: { ports: nodePortList(ctx, ports), address: formatIp(l.addr.ip), iface: l.iface.name, primary: primaryText, how: primary.how, cidr: inCidrs([cidr], l.addr.ip) ? cidr : formatIp(l.addr.ip) },
        file: l.related.file,
        line: l.related.line,
        text: l.related.text,
        related: evidence,
      });
    }
  },
});
