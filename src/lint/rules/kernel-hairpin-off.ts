import type { Related } from '../rule.js';
import { bridgeNfSwitch, hairpinSwitch } from '../../model/switches.js';
import { bridges } from '../kernel-util.js';
import { createRule } from '../rule.js';

export default createRule({
  id: 'kernel-hairpin-off',
  meta: {
    description: 'Bridge ports with hairpin off while br_netfilter is on: a pod cannot reach itself through its own Service.',
    severity: 'warning',
    relevant: (ctx) => ctx.modes.length > 0,
    docs: [
      'With br_netfilter on, the DNAT of a pod\'s packet to a Service happens on the bridged frame; when the endpoint',
      'chosen is the calling pod itself, the bridge has to send the frame back out of the port it came in on, which it',
      'does only with hairpin mode on that port (kubelet\'s `--hairpin-mode=hairpin-veth` sets it; `promiscuous-bridge`',
      'does not). Off, the frame is dropped: a pod behind a single-endpoint Service times out talking to itself.',
      '`kpx trace --from POD-IP` to its own Service shows `DROP: dropped by hairpin off on cni0\'s ports`. Needs',
      '`bridge -d link`, `ip -d link` or the sysfs `brif/*/hairpin_mode` listing, and a sysctl dump showing br_netfilter on.',
      '',
      '**Fix:** `bridge link set dev PORT hairpin on` for the pod ports (or kubelet `--hairpin-mode=hairpin-veth`;',
      'CNI bridge plugin: `"hairpinMode": true`).',
    ].join('\n'),
    messages: {
      off: 'hairpin is off on {{count}} of {{total}} ports of {{bridge}} while bridged frames traverse iptables: pods behind them cannot reach themselves through their Service',
    },
  },
  check(ctx) {
    for (const br of bridges(ctx)) {
      const nf = bridgeNfSwitch(ctx.snapshot.sysctls, 4, br);
      // Only bridged (br_netfilter on) DNAT sends the frame back out of its port; off or not shown, hairpin is moot or unproven.
      if (nf.effect !== 'pass') continue;
      const hp = hairpinSwitch(ctx.snapshot.bridgePorts, br.name);
      const off = hp.ports.filter((p) => p.hairpin === false);
      if (off.length === 0) continue;
      const related: Related[] = off.slice(1, 20).map((p) => ({ file: p.file, line: p.line, text: p.text ?? `${p.port} hairpin off` }));
      ctx.report({
        messageId: 'off',
        data: { count: off.length, total: hp.ports.length, bridge: br.name },
        file: off[0].file,
        line: off[0].line,
        column: 1,
        text: off[0].text ?? `${off[0].port} hairpin off`,
        related,
      });
    }
  },
});
