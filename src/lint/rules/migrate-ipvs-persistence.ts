import { byServicePort, virtualServers, vsText } from '../ipvs-util.js';
import { sourceMode } from '../migration-util.js';
import { createRule } from '../rule.js';

/**
 * nftables mode's session affinity: one `affinity-…` set per endpoint with the Service's timeout,
 * "recorded … to a particular ServicePort (without regard to which service IP was used to reach the
 * service)" (proxier.go, syncProxyRules); IPVS keeps a persistence table per virtual server.
 */
export default createRule({
  id: 'migrate-ipvs-persistence',
  meta: {
    category: 'migration',
    description: "An IPVS virtual server is persistent (sessionAffinity: ClientIP): nftables mode keeps the affinity and its timeout, but per Service port, not per virtual server.",
    severity: 'info',
    requires: ['ipvs'],
    relevant: (ctx) => sourceMode(ctx) === 'ipvs',
    docs: [
      'kube-proxy writes `persistent TIMEOUT` on the virtual servers of a Service with `sessionAffinity:',
      'ClientIP`. nftables mode implements the same affinity with one `affinity-…` set per endpoint and the same',
      'timeout, recorded "for connections from a particular source IP (without regard to source port) to a',
      'particular ServicePort (without regard to which service IP was used to reach the service)" (kubernetes',
      'pkg/proxy/nftables/proxier.go). Today each virtual server (ClusterIP, each NodePort address, each',
      'LoadBalancer IP) keeps its own persistence table: a client reaching the ClusterIP and then the NodePort',
      'may land on two pods; after the switch it lands on one. Existing persistence entries are not carried over.',
      '',
      'One finding per Service port, at the `ipvsadm -Ln` line of its first persistent virtual server, with the others.',
      '',
      '**Fix:** nothing to do unless clients depend on separate affinity per address; expect clients to be',
      're-balanced once when kube-proxy switches modes.',
    ].join('\n'),
    messages: {
      persistent: '{{vs}}{{more}} {{verb}} clients on one real server for {{timeout}}s, each in its own table; nftables mode keeps the same timeout, one table for every address of the Service port',
    },
  },
  check(ctx) {
    if (sourceMode(ctx) !== 'ipvs') return;
    const persistent = virtualServers(ctx).filter((x) => x.vs.persistent !== undefined);
    for (const g of byServicePort(ctx, persistent)) {
      const [first, ...rest] = g.items;
      const vs = first.vs;
      const more = rest.length ? ` and ${rest.length} other virtual server${rest.length === 1 ? '' : 's'}` : '';
      const related = rest.slice(0, 6).map((x) => ({ file: x.vs.file, line: x.vs.line, text: vsText(x.vs) }));
      ctx.report({ messageId: 'persistent', data: { vs: vsText(vs), more, verb: rest.length ? 'keep' : 'keeps', timeout: vs.persistent! }, file: vs.file, line: vs.line, column: vs.column, text: vsText(vs), ...(g.service ? { service: g.service } : {}), related });
    }
  },
});
