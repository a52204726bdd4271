/**
 * `ip rule` as the kernel prints it (text and -j), read by kpx, and policy routing decided as the
 * kernel decides it: for each probe, kpx's policyLookup is compared with `ip route get`.
 */
import { describe, expect, it } from 'vitest';
import { requireKernel, withNetns } from '../helpers/netns.js';
import { extractIpRule, extractIpRuleJson } from '../../src/extract/iprule.js';
import { extractIpRoute } from '../../src/extract/iproute.js';
import { policyLookup } from '../../src/model/policy.js';
import { parseIp } from '../../src/model/addr.js';

const kernel = requireKernel();

describe.runIf(kernel)('ip rule, read and applied like the kernel', () => {
  it('parses text and JSON alike, and picks the same route as `ip route get` for every probe', async () => {
    await withNetns('iprule', (ns) => {
      const ip = (...a: string[]) => ns.exec('ip', a);
      // Input-path lookups (`from … iif …`) are answered only when the namespace forwards.
      ns.exec('sysctl', ['-qw', 'net.ipv4.ip_forward=1']);
      ip('link', 'add', 'br0', 'type', 'bridge');
      ip('link', 'set', 'br0', 'up');
      ip('addr', 'add', '10.1.0.1/24', 'dev', 'br0');
      ip('link', 'add', 'br1', 'type', 'bridge');
      ip('link', 'set', 'br1', 'up');
      ip('addr', 'add', '10.2.0.1/24', 'dev', 'br1');
      ip('route', 'add', 'default', 'via', '10.1.0.254', 'dev', 'br0');
      ip('route', 'add', 'default', 'via', '10.2.0.254', 'dev', 'br1', 'table', '100');
      ip('route', 'add', '10.50.0.0/16', 'via', '10.2.0.253', 'dev', 'br1', 'table', '2004');
      ip('route', 'add', 'throw', '10.60.0.0/16', 'table', '100');
      ip('rule', 'add', 'from', '10.244.0.0/16', 'lookup', '100', 'pref', '100');
      ip('rule', 'add', 'fwmark', '0x200/0xf00', 'lookup', '2004', 'pref', '9');
      ip('rule', 'add', 'to', '10.9.0.0/16', 'unreachable', 'pref', '200');
      const text = ns.exec('ip', ['rule', 'show']);
      const json = ns.exec('ip', ['-j', 'rule', 'show']);
      const a = extractIpRule(text, 'ip-rule.txt');
      const b = extractIpRuleJson(json, 'ip-rule.json');
      expect(a.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
      expect(a.data.rules.map((r) => [r.priority, r.action, r.table ?? null])).toEqual([
        [0, 'lookup', 'local'],
        [9, 'lookup', '2004'],
        [100, 'lookup', '100'],
        [200, 'unreachable', null],
        [32766, 'lookup', 'main'],
        [32767, 'lookup', 'default'],
      ]);
      const strip = (r: (typeof a.data.rules)[number]) => ({ ...r, line: 0, file: '', text: '' });
      expect(b.data.rules.map(strip)).toEqual(a.data.rules.map(strip));
      const routes = extractIpRoute(ns.exec('ip', ['route', 'show', 'table', 'all']), 'ip-route.txt').dump.routes;
      const probes: { dst: string; src?: string; mark?: string }[] = [
        { dst: '8.8.8.8' },
        { dst: '8.8.8.8', src: '10.244.1.5' },
        { dst: '10.60.1.1', src: '10.244.1.5' },
        { dst: '10.50.1.1', mark: '0x200' },
        { dst: '10.50.1.1', mark: '0x300' },
        { dst: '10.50.1.1' },
        { dst: '10.9.1.1' },
        { dst: '10.1.0.7', src: '10.244.1.5' },
      ];
      for (const p of probes) {
        const args = ['route', 'get', p.dst, ...(p.src ? ['from', p.src, 'iif', 'br0'] : []), ...(p.mark ? ['mark', p.mark] : [])];
        const r = ns.run('ip', args);
        const d = policyLookup(a.data.rules, routes, { dst: parseIp(p.dst)!, ...(p.src ? { src: parseIp(p.src)!, iif: 'br0' } : {}), ...(p.mark ? { mark: Number(p.mark) } : {}) });
        const label = `ip ${args.join(' ')}`;
        if (r.status !== 0) {
          // The kernel refused (unreachable rule): kpx must end on that rule with no route.
          expect(d.route, label).toBeUndefined();
          expect(d.rule?.action, label).toBe('unreachable');
          continue;
        }
        const via = /via (\S+)/.exec(r.stdout)?.[1];
        const dev = /dev (\S+)/.exec(r.stdout)?.[1];
        expect([d.route?.via?.address, d.route?.dev], label).toEqual([via, dev]);
      }
    });
  });
});
