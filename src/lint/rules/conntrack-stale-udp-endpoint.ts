import { IPPROTO } from '../../model/conntrack.js';
import { canonicalIp, kubeProxyCleanup } from '../../kube/conntrack.js';
import { createRule } from '../rule.js';
import { Capped, entryText, flowOf, hasConntrack, tablesOf } from '../conntrack-util.js';

/**
 * UDP (and SCTP) entries pinned to an address that is not a serving endpoint: exactly the entries
 * kube-proxy's conntrack reconciliation deletes (kubernetes/kubernetes pkg/proxy/conntrack/cleanup.go,
 * via src/kube/conntrack.ts kubeProxyCleanup). Untranslated [UNREPLIED] entries (reply from the VIP
 * itself) are left to conntrack-unreplied-untranslated, which says more about them.
 */
export default createRule({
  id: 'conntrack-stale-udp-endpoint',
  meta: {
    description: "UDP conntrack entries of a Service whose reply source is not one of its current endpoints: what kube-proxy's conntrack cleanup deletes (and SCTP entries it no longer deletes).",
    severity: 'warning',
    docs: [
      'Rules decide only a flow\'s first packet; conntrack sends the rest where the first went. A UDP client that keeps',
      'its socket (DNS resolvers, statsd, syslog) stays pinned to the endpoint its entry names even after the pod is',
      'gone, and its packets are blackholed until the entry expires — which never happens while it keeps sending',
      '(kubernetes/kubernetes#48744, #125467). kube-proxy therefore deletes, after each sync, every UDP entry whose',
      'original destination is a Service front end (ClusterIP:port, load-balancer IP:port, external IP:port, or the',
      'NodePort on any address) and whose reply source is not a serving endpoint of that Service port — but only for',
      'Service ports that have at least one serving endpoint (`pkg/proxy/conntrack/cleanup.go`, `CleanStaleEntries`).',
      'kpx applies the same test to the `conntrack -L` / `/proc/net/nf_conntrack` dump and the endpoints in the rules.',
      'An entry kpx flags is one kube-proxy has not (yet) deleted: its sync is failing, it lacks the `conntrack`',
      'binary/netlink permission (older versions shelled out to `conntrack -D`), or the dump was taken in between.',
      '',
      'SCTP entries to a front end with the same mismatch are reported too (as info): kube-proxy before v1.30',
      'flushed them as well, the current cleanup handles UDP only, so they stay until the association closes.',
      '',
      'Assumption: kpx knows the endpoints the rules dispatch to; kube-proxy also counts serving-but-terminating',
      'endpoints that the rules may not list, so an entry to such an endpoint may be flagged here and kept by kube-proxy.',
      '',
      'Public example: kubernetes/kubernetes#48744 ("kube-dns pods get traffic after they\'re gone").',
      '',
      '**Fix:** check kube-proxy\'s log for sync or conntrack errors (`kpx lint` with the log), make sure the',
      '`conntrack` tool / netlink access is available to it, and delete the entries by hand meanwhile:',
      '`conntrack -D -p udp --orig-dst VIP --orig-port-dst PORT --reply-src OLD_POD_IP`.',
    ].join('\n'),
    requires: ['conntrack'],
    relevant: hasConntrack,
    messages: {
      stale:
        '{{flow}} ({{service}}, {{front}}) is pinned to {{replySrc}}, which is not a serving endpoint now ({{endpoints}}); kube-proxy\'s conntrack cleanup deletes this entry — until then the flow\'s packets go to {{replySrc}}{{until}}',
      sctp: '{{flow}} ({{service}}) is pinned to {{replySrc}}, which is not an endpoint now ({{endpoints}}); current kube-proxy does not delete SCTP entries, so the association stays on {{replySrc}}{{until}}',
      more: '… and {{more}} more stale entries of {{service}} ({{total}} in all)',
    },
  },
  check(ctx) {
    const services = ctx.resolution.services;
    const capped = new Capped();
    for (const t of tablesOf(ctx)) {
      for (const v of kubeProxyCleanup(t, services)) {
        const i = v.index;
        if (canonicalIp(t.replySrc(i)) === canonicalIp(t.origDst(i)) && (t.flags(i) & 1) !== 0 && v.via === 'service-ip') continue;
        if (!capped.take(v.service, t, i)) continue;
        const e = t.entry(i);
        ctx.report({
          messageId: 'stale',
          data: {
            flow: flowOf(t, i),
            service: ctx.serviceLabel(v.service),
            front: v.via === 'node-port' ? `NodePort ${v.service.nodePort}` : 'Service IP',
            replySrc: e.reply.src,
            endpoints: [...v.servingIps].join(', '),
            until: e.timeout !== undefined ? `, for ${e.timeout}s more unless the client sends again (each packet restarts the timer)` : '',
          },
          file: t.file,
          line: e.line,
          text: entryText(t, i),
          service: ctx.serviceLabel(v.service),
        });
      }
      // SCTP: the same test, reported as information (kube-proxy < 1.30 flushed these too).
      const sctp = services.filter((s) => s.protocol === 'sctp' && s.endpoints.length > 0 && s.clusterIP);
      if (sctp.length === 0) continue;
      const byFront = new Map(sctp.map((s) => [`${canonicalIp(s.clusterIP!)}:${s.port}`, s]));
      for (let i = 0; i < t.size; i++) {
        if (t.protoNum(i) !== IPPROTO.sctp) continue;
        const s = byFront.get(`${canonicalIp(t.origDst(i))}:${t.origDport(i)}`);
        if (!s) continue;
        const rs = canonicalIp(t.replySrc(i));
        if (s.endpoints.some((ep) => canonicalIp(ep.ip) === rs)) continue;
        if (!capped.take(s, t, i)) continue;
        const e = t.entry(i);
        ctx.report({
          messageId: 'sctp',
          severity: 'info',
          data: { flow: flowOf(t, i), service: ctx.serviceLabel(s), replySrc: e.reply.src, endpoints: s.endpoints.map((x) => x.ip).join(', '), until: e.timeout !== undefined ? ` (entry expires in ${e.timeout}s)` : '' },
          file: t.file,
          line: e.line,
          text: entryText(t, i),
          service: ctx.serviceLabel(s),
        });
      }
    }
    capped.flush(ctx, 'more');
  },
});
