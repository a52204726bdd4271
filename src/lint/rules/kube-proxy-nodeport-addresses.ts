import type { Rule } from '../../model/netfilter.js';
import { cidrContains, parseCidr, parseIp } from '../../model/addr.js';
import { createRule } from '../rule.js';
import { ruleRelated } from '../context.js';
import { configRelated, kubeProxyConfigs, natRules, partialConfig } from '../kube-proxy-util.js';

/** How KUBE-SERVICES hands packets to KUBE-NODEPORTS: on every local address, or on listed ones. */
function nodePortDispatch(rules: readonly Rule[]): { local: Rule[]; addresses: Map<string, Rule> } {
  const local: Rule[] = [];
  const addresses = new Map<string, Rule>();
  for (const r of rules) {
    if (!(r.target?.kind === 'jump' && r.target.chain === 'KUBE-NODEPORTS')) continue;
    if (r.matches.some((m) => m.kind === 'addrtype' && m.dir === 'dst' && !m.negated && m.types.includes('LOCAL'))) local.push(r);
    for (const m of r.matches) if (m.kind === 'address' && m.dir === 'dst' && !m.negated) addresses.set(m.text, r);
  }
  return { local, addresses };
}

export default createRule({
  id: 'kube-proxy-nodeport-addresses',
  meta: {
    description: "kube-proxy's nodePortAddresses and the NodePort rules disagree: NodePorts open on every local address, or only on others than configured.",
    severity: 'warning',
    requires: ['kube-proxy-config'],
    relevant: () => false,
    docs: [
      'By default kube-proxy serves NodePorts on every local address (`-m addrtype --dst-type LOCAL -j',
      'KUBE-NODEPORTS` at the end of KUBE-SERVICES). With `nodePortAddresses` (`--nodeport-addresses`) set to',
      'CIDRs, it writes one `-d ADDRESS/32 -j KUBE-NODEPORTS` per node address inside them instead, so NodePorts',
      'are not exposed on other interfaces (a management network, localhost). When the configuration restricts',
      'NodePorts and the rules still dispatch on every local address — or the reverse — the configuration in hand',
      'is not what the node runs: NodePorts are exposed where they should not be, or missing where they should be.',
      '',
      '**Fix:** restart kube-proxy after changing `nodePortAddresses`; check that the CIDRs contain an address of',
      'the node (kube-proxy ignores CIDRs that match none) and, from 1.29, consider `nodePortAddresses: ["primary"]`.',
      '',
      '**Example** (rancher/rancher#23552): kube-proxy\'s logged flags show `--nodeport-addresses="[]"`: NodePorts',
      'on every address, which the rules show as the `--dst-type LOCAL` jump.',
    ].join('\n'),
    messages: {
      everywhere: 'kube-proxy is configured to serve NodePorts only on {{configured}}, but KUBE-SERVICES sends every local address to KUBE-NODEPORTS',
      outside: 'KUBE-SERVICES serves NodePorts on {{address}}, which is not in the configured nodePortAddresses ({{configured}})',
      restricted: 'kube-proxy\'s configuration does not restrict NodePorts, but KUBE-SERVICES serves them only on {{addresses}}',
    },
  },
  check(ctx) {
    const { local, addresses } = nodePortDispatch(natRules(ctx, 'KUBE-SERVICES'));
    if (!local.length && !addresses.size) return;
    for (const c of kubeProxyConfigs(ctx)) {
      const cidrs = (c.nodePortAddresses?.value ?? []).filter((x) => x !== 'primary');
      if (c.nodePortAddresses?.value.includes('primary')) continue;
      if (cidrs.length && local.length) {
        const r = local[0];
        ctx.report({ messageId: 'everywhere', data: { configured: cidrs.join(', ') }, file: r.file, line: r.line, column: r.column, text: r.raw, related: [configRelated(c, c.nodePortAddresses!)] });
      } else if (cidrs.length) {
        for (const [addr, r] of addresses) {
          if (cidrs.some((cidr) => contains(cidr, addr))) continue;
          ctx.report({ messageId: 'outside', data: { address: addr, configured: cidrs.join(', ') }, file: r.file, line: r.line, column: r.column, text: r.raw, related: [configRelated(c, c.nodePortAddresses!), ruleRelated(r)] });
        }
      } else if (!local.length && addresses.size && !partialConfig(c)) {
        const r = [...addresses.values()][0];
        ctx.report({ messageId: 'restricted', data: { addresses: [...addresses.keys()].join(', ') }, file: r.file, line: r.line, column: r.column, text: r.raw });
      }
    }
  },
});

/** Is `address` (`a.b.c.d/32` as iptables-save prints it) inside `cidr`? */
function contains(cidr: string, address: string): boolean {
  const net = parseCidr(cidr.includes('/') ? cidr : `${cidr}/${cidr.includes(':') ? 128 : 32}`);
  const ip = parseIp(address.split('/')[0]);
  return net !== undefined && ip !== undefined && net.family === ip.family && cidrContains(net, ip);
}
