import { sourceMode } from '../migration-util.js';
import { createRule } from '../rule.js';

/** What a switch to nftables mode keeps, in one line (KEP-3866: "functionally mostly identical"). */
export default createRule({
  id: 'migrate-unchanged',
  meta: {
    category: 'migration',
    description: 'What stays the same when this node switches to nftables mode, in one line.',
    severity: 'info',
    docs: [
      'Besides what the other migrate-* findings name, nftables mode serves the same Services the same way:',
      'ClusterIPs, ports, NodePorts (on the addresses `nodePortAddresses` allows), externalIPs and LoadBalancer IPs,',
      'the same endpoints with random, equal shares (as iptables mode; IPVS `rr` becomes random), traffic policies,',
      'session affinity and its timeout, loadBalancerSourceRanges, masquerading. nftables mode adds two things:',
      'a port of a ClusterIP that no Service defines is rejected, and an unallocated ClusterIP in the Service CIDR',
      'is dropped (kubernetes.io, *Virtual IPs and Service Proxies*; KEP-3866 "Service IP behaviour").',
      '',
      '**Fix:** nothing to fix.',
    ].join('\n'),
    messages: {
      same: '{{ports}} Service ports keep their addresses, ports, NodePorts, endpoints, traffic policies and session affinity; new connections spread {{how}}; new: ports no Service defines on a ClusterIP are rejected, unallocated ClusterIPs dropped',
      already: 'this node already runs kube-proxy in nftables mode: nothing to migrate',
    },
  },
  check(ctx) {
    const mode = sourceMode(ctx);
    const file = ctx.snapshot.files.find((f) => f.format === 'iptables-save' || f.format === 'nft' || f.format === 'ipvsadm')?.path ?? ctx.snapshot.files[0]?.path ?? ctx.snapshot.name;
    if (mode === 'nftables') {
      ctx.report({ messageId: 'already', file, line: 0 });
      return;
    }
    if (!mode) return;
    ctx.report({ messageId: 'same', data: { ports: ctx.resolution.services.length, how: mode === 'ipvs' ? 'at random with equal shares (IPVS rr takes turns)' : 'at random with equal shares, as today' }, file, line: 0 });
  },
});
