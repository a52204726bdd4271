/**
 * The real `ip` tool and kernel as the oracle: build interfaces, addresses and routes of many
 * kinds in a throw-away namespace, dump them in every form kpx reads, and check that the parsed
 * values are what was created, that text and JSON agree, and that lookupRoute() picks what
 * `ip route get` picks. (This kernel has no `dummy` or `ipip` module: veth, bridge and vxlan
 * devices stand in; kube-ipvs0 is a bridge here, which is only a name for kpx.)
 */
import { describe, expect, it } from 'vitest';
import { ipAddrJsonParser, ipAddrParser } from '../../src/extract/ipaddr.js';
import { ipRouteJsonParser, ipRouteParser } from '../../src/extract/iproute.js';
import { formatIp, parseIp } from '../../src/model/addr.js';
import { interfaceRole, isUp, localAddresses, type NetInterface } from '../../src/model/iface.js';
import { lookupRoute, type Route } from '../../src/model/route.js';
import { requireKernel, withNetns, type Netns } from '../helpers/netns.js';
import { ipAddrSniffer, ipAddrJsonSniffer } from '../../grammars/ipaddr/sniff.js';
import { ipRouteJsonSniffer, ipRouteSniffer } from '../../grammars/iproute/sniff.js';

const kernel = requireKernel();

function setup(ns: Netns) {
  const ip = (...args: string[]) => ns.exec('ip', args);
  // No duplicate address detection: link-local addresses (and their local routes) appear at once,
  // so successive dumps see the same state.
  ns.exec('sysctl', ['-q', '-w', 'net.ipv6.conf.all.accept_dad=0', 'net.ipv6.conf.default.accept_dad=0']);
  ip('link', 'add', 'va', 'type', 'veth', 'peer', 'name', 'vb');
  ip('link', 'add', 'cali0a1b2c3d4e5', 'type', 'veth', 'peer', 'name', 'eth0p');
  ip('link', 'add', 'cni0', 'type', 'bridge');
  ip('link', 'add', 'kube-ipvs0', 'type', 'bridge');
  ip('link', 'add', 'flannel.1', 'type', 'vxlan', 'id', '1', 'dstport', '8472', 'nolearning');
  for (const d of ['va', 'vb', 'cali0a1b2c3d4e5', 'eth0p', 'cni0', 'flannel.1']) ip('link', 'set', d, 'up');
  ip('link', 'set', 'dev', 'va', 'mtu', '1450');
  ip('link', 'property', 'add', 'dev', 'va', 'altname', 'ens5');
  ip('addr', 'add', '10.0.2.15/24', 'brd', '+', 'dev', 'va');
  ip('addr', 'add', '10.2.0.1/24', 'dev', 'va', 'label', 'va:1');
  ip('-6', 'addr', 'add', 'fd00:1::15/64', 'dev', 'va', 'nodad');
  ip('-6', 'addr', 'add', '2001:db8:5::5/64', 'dev', 'va', 'nodad', 'valid_lft', '1000', 'preferred_lft', '500');
  ip('addr', 'add', '10.244.0.1/24', 'dev', 'cni0');
  ip('addr', 'add', '10.244.0.0/32', 'dev', 'flannel.1');
  ip('addr', 'add', '10.96.0.1/32', 'dev', 'kube-ipvs0');
  ip('addr', 'add', '10.96.0.10/32', 'dev', 'kube-ipvs0');
  ip('addr', 'add', '169.254.1.1', 'peer', '169.254.1.2/32', 'dev', 'cali0a1b2c3d4e5');

  ip('route', 'add', 'default', 'via', '10.0.2.2', 'dev', 'va', 'proto', 'dhcp', 'metric', '100');
  ip('route', 'add', 'blackhole', '10.244.3.0/26', 'proto', 'bird');
  ip('route', 'add', 'unreachable', '10.9.0.0/16');
  ip('route', 'add', 'prohibit', '10.8.0.0/16');
  ip('route', 'add', 'throw', '10.60.0.0/16', 'table', '100');
  ip('route', 'add', 'default', 'via', '10.0.2.1', 'dev', 'va', 'table', '100');
  ip('route', 'add', '10.50.0.0/16', 'proto', 'static', 'metric', '10', 'nexthop', 'via', '10.0.2.2', 'dev', 'va', 'weight', '1', 'nexthop', 'via', '10.0.2.3', 'dev', 'va', 'weight', '2');
  ip('route', 'add', '10.244.1.0/24', 'via', '10.244.1.0', 'dev', 'flannel.1', 'onlink');
  ip('route', 'add', '10.244.2.0/24', 'via', '10.0.2.3', 'dev', 'va', 'proto', 'bird');
  ip('route', 'add', '10.75.0.0/16', 'via', '10.0.2.2', 'dev', 'va', 'proto', '250');
  ip('route', 'add', '10.76.0.0/16', 'via', '10.0.2.2', 'dev', 'va', 'proto', 'static');
  ip('route', 'add', '10.77.0.0/16', 'via', '10.0.2.3', 'dev', 'va', 'metric', '30');
  ip('route', 'add', '10.77.0.0/16', 'via', '10.0.2.2', 'dev', 'va', 'metric', '20');
  ip('route', 'add', '10.51.0.0/16', 'via', '10.0.2.2', 'dev', 'va', 'mtu', 'lock', '1400', 'advmss', '1300');
  ip('route', 'add', '10.70.0.0/16', 'via', 'inet6', 'fd00:1::2', 'dev', 'va');
  ip('route', 'add', '10.80.0.0/16', 'via', '10.0.2.2', 'dev', 'va');
  ip('route', 'add', '10.80.1.0/24', 'via', '10.0.2.3', 'dev', 'va');
  ip('route', 'add', '10.80.1.128/25', 'dev', 'cali0a1b2c3d4e5', 'scope', 'link');
  ip('route', 'add', '172.27.198.195', 'dev', 'cali0a1b2c3d4e5', 'scope', 'link');
  ip('route', 'add', '10.92.0.0/16', 'via', '10.0.2.2', 'dev', 'va', 'table', '200', 'proto', '77', 'metric', '5');
  ip('-6', 'route', 'add', '2001:db8:1::/64', 'via', 'fd00:1::2', 'dev', 'va', 'proto', 'bird');
  ip('-6', 'route', 'add', 'blackhole', 'fd00:10:244:3::/64');
  ip('-6', 'route', 'add', 'unreachable', '2001:db8:9::/48');
  ip('-6', 'route', 'add', '2001:db8::/64', 'nexthop', 'via', 'fd00:1::2', 'dev', 'va', 'nexthop', 'via', 'fd00:1::3', 'dev', 'va');
  ip('-6', 'route', 'add', 'default', 'via', 'fd00:1::1', 'dev', 'va', 'metric', '1024');
}

function noErrors(r: { diagnostics: readonly { severity: string; message: string; line: number }[] }) {
  expect(r.diagnostics.filter((d) => d.severity !== 'info').map((d) => `${d.line}: ${d.message}`)).toEqual([]);
}

function find(routes: readonly Route[], dstText: string, table = 'main', family?: 4 | 6): Route {
  const r = routes.filter((x) => x.dstText === dstText && x.table === table && (family === undefined || x.family === family));
  expect(r, `${dstText} in table ${table}`).toHaveLength(1);
  return r[0];
}

/** A route without its position, for comparing text with JSON (`ip -j` does not print `lock`). */
function comparable(r: Route) {
  return {
    ...r,
    lockedMetrics: undefined,
    // `expires` counts down between two dumps.
    extra: { ...r.extra, ...(r.extra.expires ? { expires: 'Nsec' } : {}) },
    line: 0,
    file: '',
    nexthops: r.nexthops?.map((h) => ({ ...h, line: 0 })),
  };
}

function comparableIface(i: NetInterface) {
  return {
    index: i.index,
    name: i.name,
    link: i.link,
    flags: i.flags,
    state: i.state,
    mtu: i.mtu,
    mac: i.mac,
    linkType: i.linkType,
    master: i.master,
    altnames: i.altnames,
    addresses: i.addresses.map((a) => ({ ...a, line: 0 })),
  };
}

describe.runIf(kernel)('ip route / ip addr against the real tools', () => {
  it('parses every dump form and agrees with what was created and with the kernel', async () => {
    await withNetns('iproute', (ns) => {
      setup(ns);
      const ipOut = (...args: string[]) => ns.exec('ip', args);

      // ---- ip route show table all (both families) --------------------------------------
      const allText = ipOut('route', 'show', 'table', 'all');
      expect(ipRouteSniffer.sniff(allText.split('\n'))).toBeGreaterThan(0.8);
      expect(ipAddrSniffer.sniff(allText.split('\n'))).toBe(0);
      const all = ipRouteParser.parse(allText, 'route-all.txt');
      noErrors(all);
      const routes = all.data.routes;
      expect(all.counts.routes).toBe(routes.length);

      const def = find(routes, 'default', 'main', 4);
      expect(def).toMatchObject({ type: 'unicast', family: 4, dev: 'va', proto: 'dhcp', metric: 100, via: { family: 4, address: '10.0.2.2' } });
      expect(def.dst.prefix).toBe(0);
      expect(find(routes, '10.244.3.0/26')).toMatchObject({ type: 'blackhole', proto: 'bird' });
      expect(find(routes, '10.9.0.0/16').type).toBe('unreachable');
      expect(find(routes, '10.8.0.0/16').type).toBe('prohibit');
      expect(find(routes, '10.60.0.0/16', '100').type).toBe('throw');
      expect(find(routes, 'default', '100').via?.address).toBe('10.0.2.1');
      expect(find(routes, '10.92.0.0/16', '200')).toMatchObject({ proto: '77', metric: 5, dev: 'va' });
      const mp = find(routes, '10.50.0.0/16');
      expect(mp).toMatchObject({ proto: 'static', metric: 10 });
      expect(mp.via).toBeUndefined();
      expect(mp.nexthops?.map((h) => [h.via?.address, h.dev, h.weight])).toEqual([
        ['10.0.2.2', 'va', 1],
        ['10.0.2.3', 'va', 2],
      ]);
      expect(find(routes, '10.244.1.0/24')).toMatchObject({ dev: 'flannel.1', flags: ['onlink'], via: { address: '10.244.1.0' } });
      expect(find(routes, '10.244.2.0/24').proto).toBe('bird');
      expect(find(routes, '10.75.0.0/16').proto).toBe('250');
      expect(find(routes, '10.76.0.0/16').proto).toBe('static');
      expect(routes.filter((r) => r.dstText === '10.77.0.0/16').map((r) => [r.metric, r.via?.address])).toEqual(
        expect.arrayContaining([
          [20, '10.0.2.2'],
          [30, '10.0.2.3'],
        ]),
      );
      const m = find(routes, '10.51.0.0/16');
      expect(m.metrics).toEqual({ mtu: '1400', advmss: '1300' });
      expect(m.lockedMetrics).toEqual(['mtu']);
      expect(find(routes, '10.70.0.0/16').via).toMatchObject({ family: 6, address: 'fd00:1::2' });
      expect(find(routes, '10.80.1.128/25')).toMatchObject({ dev: 'cali0a1b2c3d4e5', scope: 'link' });
      expect(find(routes, '172.27.198.195').dst.prefix).toBe(32);
      expect(find(routes, '10.96.0.1', 'local')).toMatchObject({ type: 'local', dev: 'kube-ipvs0', proto: 'kernel', scope: 'host', src: '10.96.0.1' });
      expect(find(routes, '10.0.2.255', 'local').type).toBe('broadcast');
      expect(find(routes, '10.0.2.0/24')).toMatchObject({ dev: 'va', proto: 'kernel', scope: 'link', src: '10.0.2.15' });
      // IPv6 in the same dump.
      expect(find(routes, '2001:db8:1::/64')).toMatchObject({ family: 6, proto: 'bird', metric: 1024, extra: { pref: 'medium' } });
      expect(find(routes, 'fd00:10:244:3::/64')).toMatchObject({ type: 'blackhole', family: 6, dev: 'lo' });
      expect(find(routes, '2001:db8:9::/48').type).toBe('unreachable');
      expect(find(routes, 'default', 'main', 6).via?.address).toBe('fd00:1::1');
      expect(find(routes, '2001:db8::/64').nexthops?.map((h) => h.via?.address)).toEqual(['fd00:1::2', 'fd00:1::3']);
      expect(find(routes, 'fd00:1::15', 'local', 6).type).toBe('local');

      // ---- JSON view agrees with the text view ---------------------------------------------
      const jsonText = ipOut('-j', 'route', 'show', 'table', 'all');
      expect(ipRouteJsonSniffer.sniff(jsonText.split('\n'))).toBe(1);
      expect(ipAddrJsonSniffer.sniff(jsonText.split('\n'))).toBe(0);
      const json = ipRouteJsonParser.parse(jsonText, 'route.json');
      noErrors(json);
      expect(json.data.routes.map(comparable)).toEqual(routes.map(comparable));
      const pretty = ipRouteJsonParser.parse(ipOut('-j', '-p', 'route', 'show', 'table', 'all'), 'route-pretty.json');
      noErrors(pretty);
      expect(pretty.data.routes.map(comparable)).toEqual(routes.map(comparable));
      // In the pretty form each route starts on its own line.
      expect(new Set(pretty.data.routes.map((r) => r.line)).size).toBe(pretty.data.routes.length);

      // ---- ip -6 route show table all ------------------------------------------------------
      const six = ipRouteParser.parse(ipOut('-6', 'route', 'show', 'table', 'all'), 'route6.txt');
      noErrors(six);
      expect(six.data.routes.every((r) => r.family === 6)).toBe(true);
      expect(six.data.routes.map(comparable).map((r) => ({ ...r }))).toEqual(routes.filter((r) => r.family === 6).map(comparable));

      // ---- ip -d route: explicit unicast, proto boot, scope global ------------------------
      const detailed = ipRouteParser.parse(ipOut('-d', 'route'), 'route-d.txt');
      noErrors(detailed);
      const plain = ipRouteParser.parse(ipOut('route'), 'route.txt');
      noErrors(plain);
      expect(detailed.data.routes.map((r) => [r.type, r.dstText, r.via?.address, r.dev, r.metric])).toEqual(
        plain.data.routes.map((r) => [r.type, r.dstText, r.via?.address, r.dev, r.metric]),
      );
      expect(find(detailed.data.routes, '10.80.0.0/16')).toMatchObject({ type: 'unicast', proto: 'boot', scope: 'global' });
      expect(find(detailed.data.routes, '10.244.3.0/26')).toMatchObject({ type: 'blackhole', proto: 'bird', scope: 'global' });

      // ---- lookupRoute vs ip route get ------------------------------------------------------
      const cases: [string, string][] = [
        ['10.80.1.200', 'dev cali0a1b2c3d4e5'],
        ['10.80.1.5', 'via 10.0.2.3'],
        ['10.80.9.9', 'via 10.0.2.2'],
        ['8.8.8.8', 'via 10.0.2.2'],
        ['10.77.1.1', 'via 10.0.2.2'],
        ['10.244.1.7', 'via 10.244.1.0'],
        ['10.70.1.1', 'via fd00:1::2'],
        ['10.0.2.99', 'dev va'],
        ['10.96.0.1', 'local'],
        ['10.0.2.15', 'local'],
        ['172.27.198.195', 'dev cali0a1b2c3d4e5'],
        ['2001:db8:1::5', 'via fd00:1::2'],
        ['2606:4700::1', 'via fd00:1::1'],
        ['fd00:1::77', 'dev va'],
      ];
      for (const [dst, expected] of cases) {
        const got = ipRouteParser.parse(ns.exec('ip', ['route', 'get', dst]), 'get.txt');
        noErrors(got);
        expect(got.data.routes).toHaveLength(1);
        const k = got.data.routes[0];
        expect(k.origin, dst).toBe('get');
        const ours = lookupRoute(routes, parseIp(dst)!);
        expect(ours, dst).toBeDefined();
        const describeK = k.type === 'local' ? 'local' : k.via ? `via ${k.via.address}` : `dev ${k.dev}`;
        expect(describeK, `ip route get ${dst}`).toBe(expected);
        const describeOurs = ours!.type === 'local' ? 'local' : ours!.via ? `via ${ours!.via.address}` : ours!.nexthops ? 'multipath' : `dev ${ours!.dev}`;
        expect(describeOurs, `lookupRoute ${dst}`).toBe(expected);
        if (k.type !== 'local') expect(ours!.dev).toBe(k.dev);
      }
      // Rejecting routes: the kernel answers with an error, lookupRoute returns the route.
      const rejects: [string, string, string][] = [
        ['10.244.3.5', 'blackhole', 'Invalid argument'],
        ['10.9.1.1', 'unreachable', 'No route to host'],
        ['10.8.1.1', 'prohibit', 'Permission denied'],
        ['fd00:10:244:3::1', 'blackhole', 'Invalid argument'],
        ['2001:db8:9::1', 'unreachable', 'No route to host'],
      ];
      for (const [dst, type, err] of rejects) {
        const r = ns.run('ip', ['route', 'get', dst]);
        expect(r.status).not.toBe(0);
        expect(r.stderr).toContain(err);
        expect(lookupRoute(routes, parseIp(dst)!)?.type, dst).toBe(type);
      }
      // Multipath: the kernel picks one of the hops; ours is the multipath route itself.
      const mpGet = ipRouteParser.parse(ns.exec('ip', ['route', 'get', '10.50.3.3']), 'get.txt').data.routes[0];
      const mpOurs = lookupRoute(routes, parseIp('10.50.3.3')!)!;
      expect(mpOurs.nexthops?.map((h) => h.via?.address)).toContain(mpGet.via?.address);
      // Table 100 (throw) only when asked for.
      expect(lookupRoute(routes, parseIp('10.60.0.1')!, { tables: ['100'] })?.type).toBe('throw');
      expect(lookupRoute(routes, parseIp('10.61.0.1')!, { tables: ['100'] })?.via?.address).toBe('10.0.2.1');

      // ---- ip addr, ip -o addr, ip -j addr ------------------------------------------------
      const addrText = ipOut('addr');
      expect(ipAddrSniffer.sniff(addrText.split('\n'))).toBeGreaterThan(0.8);
      expect(ipRouteSniffer.sniff(addrText.split('\n'))).toBe(0);
      const addr = ipAddrParser.parse(addrText, 'addr.txt');
      noErrors(addr);
      const ifs = addr.data.interfaces;
      const byName = (n: string) => {
        const i = ifs.find((x) => x.name === n);
        expect(i, n).toBeDefined();
        return i!;
      };
      const va = byName('va');
      expect(va).toMatchObject({ link: 'vb', mtu: 1450, state: 'UP', linkType: 'ether', altnames: ['ens5'] });
      expect(va.flags).toEqual(expect.arrayContaining(['UP', 'LOWER_UP', 'BROADCAST', 'MULTICAST']));
      expect(va.mac).toMatch(/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/);
      const vaAddrs = va.addresses.map((a) => `${a.address}/${a.prefix} ${a.scope} ${a.label ?? '-'} ${a.flags.join(',')}`);
      expect(vaAddrs).toEqual(
        expect.arrayContaining(['10.0.2.15/24 global va ', '10.2.0.1/24 global va:1 ', 'fd00:1::15/64 global - nodad', '2001:db8:5::5/64 global - nodad,dynamic']),
      );
      expect(va.addresses.find((a) => a.address === '10.0.2.15')?.brd).toBe('10.0.2.255');
      const tmp = va.addresses.find((a) => a.address === '2001:db8:5::5')!;
      expect(tmp.validLft).toMatch(/^\d+sec$/);
      expect(Number(tmp.validLft!.replace('sec', ''))).toBeLessThanOrEqual(1000);
      const cali = byName('cali0a1b2c3d4e5');
      expect(cali.link).toBe('eth0p');
      expect(cali.addresses[0]).toMatchObject({ address: '169.254.1.1', peer: '169.254.1.2', prefix: 32 });
      expect(interfaceRole(cali.name)).toBe('pod-veth');
      expect(interfaceRole('cni0')).toBe('bridge');
      expect(interfaceRole('flannel.1')).toBe('tunnel');
      expect(interfaceRole('kube-ipvs0')).toBe('ipvs-dummy');
      expect(byName('kube-ipvs0').addresses.map((a) => a.address)).toEqual(['10.96.0.1', '10.96.0.10']);
      expect(isUp(byName('kube-ipvs0'))).toBe(false);
      expect(isUp(va)).toBe(true);
      expect(byName('lo')).toMatchObject({ index: 1, linkType: 'loopback', state: 'UNKNOWN' });
      const locals = localAddresses(ifs).map(formatIp);
      expect(locals).toEqual(expect.arrayContaining(['127.0.0.1', '::1', '10.0.2.15', '10.96.0.1', '10.244.0.0', 'fd00:1::15']));
      // Every local address has a `local` route in table local.
      for (const a of ifs.flatMap((i) => i.addresses)) {
        expect(lookupRoute(routes, a.ip, { tables: ['local'] })?.type, a.address).toBe('local');
      }

      const jsonAddrText = ipOut('-j', 'addr');
      expect(ipAddrJsonSniffer.sniff(jsonAddrText.split('\n'))).toBe(1);
      expect(ipRouteJsonSniffer.sniff(jsonAddrText.split('\n'))).toBe(0);
      const jaddr = ipAddrJsonParser.parse(jsonAddrText, 'addr.json');
      noErrors(jaddr);
      // Lifetimes tick between the two dumps; compare them only in kind.
      const noLft = (i: NetInterface) => ({
        ...comparableIface(i),
        addresses: comparableIface(i).addresses.map((a) => ({ ...a, validLft: /sec$/.test(a.validLft ?? '') ? 'Nsec' : a.validLft, preferredLft: /sec$/.test(a.preferredLft ?? '') ? 'Nsec' : a.preferredLft })),
      });
      expect(jaddr.data.interfaces.map(noLft)).toEqual(ifs.map(noLft));
      expect(jaddr.counts).toEqual(addr.counts);

      const oText = ipOut('-o', 'addr');
      expect(ipAddrSniffer.sniff(oText.split('\n'))).toBeGreaterThan(0.8);
      const o = ipAddrParser.parse(oText, 'addr-o.txt');
      noErrors(o);
      // -o lists only interfaces with addresses, without @peer, flags or link details.
      const withAddrs = ifs.filter((i) => i.addresses.length);
      expect(o.data.interfaces.map((i) => [i.index, i.name])).toEqual(withAddrs.map((i) => [i.index, i.name]));
      expect(o.data.interfaces.map((i) => i.addresses.map((a) => ({ ...a, line: 0, validLft: 'x', preferredLft: 'x' })))).toEqual(
        withAddrs.map((i) => i.addresses.map((a) => ({ ...a, line: 0, validLft: 'x', preferredLft: 'x' }))),
      );

      const br = ipAddrParser.parse(ipOut('-br', 'addr'), 'addr-br.txt');
      noErrors(br);
      expect(br.data.interfaces.map((i) => [i.name, i.state, i.addresses.map((a) => `${a.address}/${a.prefix}`)])).toEqual(
        ifs.map((i) => [i.name, i.state, i.addresses.map((a) => `${a.address}/${a.prefix}`)]),
      );

      // ip -d addr: detail lines are kept as text, addresses unchanged.
      const d = ipAddrParser.parse(ipOut('-d', 'addr'), 'addr-d.txt');
      noErrors(d);
      expect(d.data.interfaces.map((i) => i.addresses.length)).toEqual(ifs.map((i) => i.addresses.length));
      expect(d.data.interfaces.find((i) => i.name === 'flannel.1')?.extra.details).toMatch(/vxlan id 1/);
    });
  });

  it('reads a veth whose peer lives in another namespace (NAME@ifN, link-netns)', async () => {
    await withNetns('peer-a', async (a) => {
      await withNetns('peer-b', (b) => {
        a.exec('ip', ['link', 'add', 'veth1', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', b.name]);
        a.exec('ip', ['addr', 'add', '10.244.0.1/32', 'dev', 'veth1']);
        const text = a.exec('ip', ['addr']);
        const parsed = ipAddrParser.parse(text, 'a.txt');
        noErrors(parsed);
        const v = parsed.data.interfaces.find((i) => i.name === 'veth1')!;
        expect(v.link).toMatch(/^if\d+$/);
        expect(v.linkNetns ?? String(v.linkNetnsId)).toMatch(/^(kpxt-peer-b.*|\d+)$/);
        const j = ipAddrJsonParser.parse(a.exec('ip', ['-j', 'addr']), 'a.json');
        noErrors(j);
        const jv = j.data.interfaces.find((i) => i.name === 'veth1')!;
        expect(jv.link ?? `if${jv.extra.link_index}`).toBe(v.link);
      });
    });
  });
});
