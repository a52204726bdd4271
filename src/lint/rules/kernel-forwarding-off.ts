import { forwardingSwitch } from '../../model/switches.js';
import { decisive, evidenceLine, ingressInterfaces } from '../kernel-util.js';
import { createRule } from '../rule.js';

export default createRule({
  id: 'kernel-forwarding-off',
  meta: {
    description: 'Forwarding is off (net.ipv4.ip_forward, an interface\'s forwarding, net.ipv6.conf.all.forwarding): Service traffic DNATed to a pod is dropped at the routing decision.',
    severity: 'error',
    requires: ['sysctl'],
    standalone: true,
    relevant: (ctx) => ctx.modes.length > 0,
    docs: [
      'After PREROUTING\'s DNAT sends a Service packet to a pod, the kernel forwards it — only if forwarding is on for',
      'the interface it came in on (IPv4: `net.ipv4.conf.IFACE.forwarding`, which `net.ipv4.ip_forward` sets for every',
      'interface; IPv6: `net.ipv6.conf.all.forwarding`). Off, the packet is dropped at the routing decision, before the',
      'FORWARD chain and without an ICMP error: connections to Services time out. `kpx trace` shows it as',
      '`DROP: dropped by forwarding off on IFACE`, with the sysctl line; this rule uses the same reading',
      '(src/model/switches.ts), per interface that traffic can come in on.',
      '',
      '**Fix:** `sysctl -w net.ipv4.ip_forward=1` (and `net.ipv6.conf.all.forwarding=1` for IPv6) and make it',
      'persistent in /etc/sysctl.d/; find what turned it off (a hardening baseline, a network manager, a host',
      'firewall reinstall).',
    ].join('\n'),
    messages: {
      off: 'forwarding is off for traffic arriving on {{iface}} ({{evidence}}): kpx trace drops forwarded Service traffic at the routing decision',
    },
  },
  check(ctx) {
    const s = ctx.snapshot.sysctls;
    const report = (r: ReturnType<typeof forwardingSwitch>, iface: string) => {
      const at = decisive(r.evidence);
      if (at) ctx.report({ messageId: 'off', data: { iface, evidence: r.evidence.map(evidenceLine).join(', ') }, file: at.file, line: at.line, column: 1, text: evidenceLine(at) });
    };
    // ip_forward off: once, at its line (writing it turned every interface off too); otherwise each interface turned off on its own.
    const global = forwardingSwitch(s, 4, undefined);
    if (global.known && global.effect === 'drop') report(global, 'any interface');
    else {
      for (const i of ingressInterfaces(ctx)) {
        const r = forwardingSwitch(s, 4, i.name);
        if (r.known && r.effect === 'drop' && r.iface) report(r, i.name);
      }
    }
    const v6 = ctx.snapshot.rulesets.some((r) => r.family === 6) || ctx.snapshot.nft.some((n) => n.tables.some((t) => t.family === 'ip6' || t.family === 'inet'));
    const six = forwardingSwitch(s, 6, undefined);
    if (v6 && six.known && six.effect === 'drop') report(six, 'any interface (IPv6)');
  },
});
