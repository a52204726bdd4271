import { interfaceRole } from '../../model/iface.js';
import { tunnelShortfall } from '../../model/switches.js';
import { createRule } from '../rule.js';

export default createRule({
  id: 'tunnel-mtu',
  meta: {
    description: 'A tunnel (VXLAN, IPIP, Geneve, WireGuard) whose MTU leaves no room for its encapsulation on its underlay: large packets are fragmented or dropped.',
    severity: 'warning',
    requires: ['links'],
    standalone: true,
    // Worth saying ip -d link is missing only on a node whose interfaces show a tunnel.
    relevant: (ctx) => ctx.snapshot.interfaces.some((i) => interfaceRole(i.name) === 'tunnel'),
    docs: [
      'An overlay adds headers: VXLAN and Geneve 50 bytes over IPv4 (70 over IPv6), IPIP 20, WireGuard 60 (80). The',
      'tunnel\'s MTU plus that must fit the MTU of the interface it is sent on (its `dev`, or the one holding its',
      '`local` address), or every full-size packet between pods on different nodes is fragmented — or dropped where',
      'fragments are (cloud networks, DF set): TLS handshakes and large responses hang while small requests work.',
      '`kpx trace` shows the MTUs along the way and the largest packet that passes unfragmented. Needs `ip -d link`',
      '(and `ip addr` when the tunnel names its underlay by address).',
      '',
      '**Fix:** set the CNI\'s MTU to the underlay\'s less the overhead (Flannel: `--iface-mtu`/network config `MTU`;',
      'Calico: `veth_mtu` / FelixConfiguration `vxlanMTU`, `ipipMTU`, `wireguardMTU`), then recreate the pods (their',
      'veths keep the old MTU).',
    ].join('\n'),
    messages: {
      short: '{{tunnel}} ({{kind}}) has MTU {{mtu}}: with {{overhead}} bytes of encapsulation that is {{total}}, more than {{underlay}}\'s {{underlayMtu}}; packets over {{largest}} bytes are fragmented or dropped',
    },
  },
  check(ctx) {
    const ifaces = ctx.snapshot.interfaces;
    for (const t of ifaces) {
      const m = tunnelShortfall(t, ifaces);
      if (!m) continue;
      ctx.report({
        messageId: 'short',
        data: { tunnel: t.name, kind: m.kind, mtu: m.tunnelMtu, overhead: m.overhead, total: m.tunnelMtu + m.overhead, underlay: m.underlay, underlayMtu: m.underlayMtu, largest: m.underlayMtu - m.overhead },
        file: t.file,
        line: t.linkInfo?.line ?? t.line,
        column: 1,
        text: `${t.name} mtu ${m.tunnelMtu} (${m.kind})`,
      });
    }
  },
});
