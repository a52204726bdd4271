import type { VirtualServer } from '../../model/ipvs.js';
import { kubeProxyConfigs, configRelated } from '../kube-proxy-util.js';
import { byServicePort, serviceOfVs, virtualServers, vsText } from '../ipvs-util.js';
import { sourceMode } from '../migration-util.js';
import { createRule, type Related } from '../rule.js';

/** IPVS schedulers that use the real servers' weights (rr, lc, dh, sh only tell weight 0 from the rest). */
const WEIGHTED = new Set(['wrr', 'wlc', 'sed', 'nq', 'lblc', 'lblcr', 'mh', 'fo', 'ovf']);

const rsRelated = (vs: VirtualServer): Related[] => vs.realServers.slice(0, 4).map((r) => ({ file: vs.file, line: r.line, text: `-> ${r.address}${r.port !== undefined ? `:${r.port}` : ''} weight ${r.weight ?? '?'}` }));

/**
 * nftables mode picks an endpoint with `numgen random mod N`: random, equal shares (proxier.go
 * writeServiceToEndpointRules; KEP-3866), no schedulers, no weights (PR #122355 "allow numgen inc" was closed).
 */
export default createRule({
  id: 'migrate-ipvs-scheduling',
  meta: {
    category: 'migration',
    description: 'An IPVS virtual server uses a scheduler other than round-robin, or weighs its real servers unequally: nftables mode picks endpoints at random, with equal shares.',
    severity: 'warning',
    requires: ['ipvs'],
    relevant: (ctx) => sourceMode(ctx) === 'ipvs',
    docs: [
      'IPVS mode balances with the scheduler of `--ipvs-scheduler` (`ipvs.scheduler`, default `rr`), and',
      'weighted schedulers (wrr, wlc, sed, nq, lblc, lblcr, mh, fo, ovf) follow the real servers\' weights.',
      'nftables mode has neither: each Service port picks an endpoint with `numgen random mod N` (kubernetes',
      'pkg/proxy/nftables/proxier.go, writeServiceToEndpointRules; KEP-3866), every endpoint with the same',
      'share. Least-connection, source hashing (`sh`: the same client to the same pod), and hand-set weights',
      'stop working after the switch; round-robin becomes random (the same shares on average).',
      '',
      'One finding per Service port for its scheduler (at its first virtual server, with the others), one per',
      'virtual server for unequal weights, at the `ipvsadm -Ln` lines, with the real servers. With `rr` (and lc, dh, sh) unequal non-zero weights change nothing today and are not',
      'flagged; weight 0 (a terminating endpoint kube-proxy quiesces) has its nftables counterpart.',
      '',
      '**Fix:** nothing carries a scheduler over; for client stickiness use `sessionAffinity: ClientIP` on the',
      'Service (nftables mode implements it), for weighting scale the Deployment instead.',
    ].join('\n'),
    messages: {
      scheduler: '{{vs}}{{more}} {{verb}} the {{scheduler}} scheduler; nftables mode picks among the {{count}} endpoint(s) at random, equal shares',
      weights: '{{vs}} ({{scheduler}}) weighs its real servers {{weights}}; nftables mode gives every endpoint an equal share',
    },
  },
  check(ctx) {
    if (sourceMode(ctx) !== 'ipvs') return;
    const cfg = kubeProxyConfigs(ctx).find((c) => c.ipvsScheduler && c.ipvsScheduler.value !== '' && c.ipvsScheduler.value !== 'rr');
    const cfgRel = cfg?.ipvsScheduler ? [configRelated(cfg, cfg.ipvsScheduler)] : [];
    const odd = virtualServers(ctx).filter(({ vs }) => vs.protocol !== 'FWM' && vs.scheduler && vs.scheduler !== 'rr');
    const weighted = new Set<unknown>();
    for (const { key, vs } of odd) {
      const weights = vs.realServers.map((r) => r.weight ?? 1).filter((w) => w > 0);
      if (!WEIGHTED.has(vs.scheduler!) || new Set(weights).size < 2) continue;
      weighted.add(key);
      ctx.report({ messageId: 'weights', data: { vs: vsText(vs), scheduler: vs.scheduler!, weights: weights.join('/') }, file: vs.file, line: vs.line, column: vs.column, text: vsText(vs), ...serviceOfVs(ctx, key), related: [...rsRelated(vs), ...cfgRel] });
    }
    for (const g of byServicePort(ctx, odd.filter((x) => !weighted.has(x.key)))) {
      const [first, ...rest] = g.items;
      const vs = first.vs;
      const more = rest.length ? ` and ${rest.length} other virtual server${rest.length === 1 ? '' : 's'}` : '';
      const related = [...rsRelated(vs), ...rest.slice(0, 4).map((x) => ({ file: x.vs.file, line: x.vs.line, text: vsText(x.vs) })), ...cfgRel];
      ctx.report({ messageId: 'scheduler', data: { vs: vsText(vs), more, verb: rest.length ? 'use' : 'uses', scheduler: vs.scheduler!, count: vs.realServers.length }, file: vs.file, line: vs.line, column: vs.column, text: vsText(vs), ...(g.service ? { service: g.service } : {}), related });
    }
  },
});
