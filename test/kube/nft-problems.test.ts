/**
 * nftables resolver problems are typed codes with fields (issue 15); only src/render/problems.ts words
 * them. Each fragment below is a kube-proxy `nft list ruleset` table with one kind of defect; the
 * chain names carry their real hashes (nftNameHash) so that only the defect under test is reported.
 */
import { describe, expect, it } from 'vitest';
import { nftNameHash } from '../../src/kube/resolve-nft.js';
import { resolveServices } from '../../src/kube/resolve.js';
import type { ServicePort } from '../../src/kube/types.js';
import { problemText } from '../../src/render/problems.js';
import { snapshotOf } from '../lint/helpers.js';

/** A kube-proxy object name: `<role>-<HASH>-<rest>`, HASH as kube-proxy computes it. */
const named = (role: string, rest: string) => `${role}-${nftNameHash(rest)}-${rest}`;

const SVC = named('service', 'demo/web/tcp/http');
const EP1 = named('endpoint', 'demo/web/tcp/http__10.244.1.5/8080');
const EP2 = named('endpoint', 'demo/web/tcp/http__10.244.2.6/8080');
const AFF1 = named('affinity', 'demo/web/tcp/http__10.244.1.5/8080');

function table(opts: { serviceChain: string; endpoint1: string; affinitySet: string; noEndpoints?: string }): string {
  return `table ip kube-proxy {
	comment "rules for kube-proxy"
	map service-ips {
		type ipv4_addr . inet_proto . inet_service : verdict
		comment "ClusterIP, ExternalIP and LoadBalancer IP traffic"
		elements = { 10.96.0.50 . tcp . 80 : goto ${SVC} }
	}

	map no-endpoint-services {
		type ipv4_addr . inet_proto . inet_service : verdict
		comment "vmap to drop or reject packets to services with no endpoints"
		elements = { ${opts.noEndpoints ?? '10.96.0.51 . tcp . 80 comment "demo/empty:http" : goto reject-chain'} }
	}

	set ${AFF1} {
		type ipv4_addr
		size 65535
		flags dynamic,timeout
${opts.affinitySet}	}

	chain nat-prerouting {
		type nat hook prerouting priority dstnat; policy accept;
		jump services
	}

	chain filter-prerouting {
		type filter hook prerouting priority dstnat - 10; policy accept;
		ip daddr . meta l4proto . th dport vmap @no-endpoint-services
	}

	chain services {
		ip daddr . meta l4proto . th dport vmap @service-ips
	}

	chain reject-chain {
		reject
	}

	chain mark-for-masquerade {
		meta mark set meta mark | 0x00004000
	}

	chain ${SVC} {
		ip daddr 10.96.0.50 tcp dport 80 ip saddr != 10.244.0.0/16 jump mark-for-masquerade
		ip saddr @${AFF1} goto ${EP1}
${opts.serviceChain}
	}

	chain ${EP1} {
		ip saddr 10.244.1.5 jump mark-for-masquerade
		update @${AFF1} { ip saddr }
${opts.endpoint1}
	}

	chain ${EP2} {
		ip saddr 10.244.2.6 jump mark-for-masquerade
		meta l4proto tcp dnat to 10.244.2.6:8080
	}
}
`;
}

const HEALTHY = {
  serviceChain: `\t\tnumgen random mod 2 vmap { 0 : goto ${EP1}, 1 : goto ${EP2} }`,
  endpoint1: '\t\tmeta l4proto tcp dnat to 10.244.1.5:8080',
  affinitySet: '\t\ttimeout 3h\n',
};

async function web(opts: Partial<typeof HEALTHY> & { noEndpoints?: string } = {}): Promise<{ web: ServicePort; all: readonly ServicePort[] }> {
  const res = await resolveServices(await snapshotOf({ 'nft-ruleset.txt': table({ ...HEALTHY, ...opts }) }));
  const web = res.services.find((s) => s.clusterIP === '10.96.0.50');
  expect(web).toBeDefined();
  return { web: web!, all: res.services };
}

describe('nftables problems are typed', () => {
  it('the healthy fragment has no problems (so each case below reports only its defect)', async () => {
    const { web: s, all } = await web();
    expect(s.state).toBe('healthy');
    expect(s.problems).toEqual([]);
    expect(all.length).toBeGreaterThan(1);
    for (const x of all) expect(x.problems).toEqual([]);
  });

  it('numgen holes and dead keys: chain, mod, offset, the keys; the gap share is computed when worded', async () => {
    const { web: s } = await web({ serviceChain: `\t\tnumgen random mod 3 vmap { 0 : goto ${EP1}, 1 : goto ${EP2}, 5 : goto ${EP2} }` });
    expect(s.problems).toEqual([
      { code: 'nft-numgen-dead-keys', chain: SVC, mod: 3, offset: 0, keys: ['5'] },
      { code: 'nft-numgen-gap', chain: SVC, mod: 3, missing: [2] },
    ]);
    expect(s.problems.map(problemText)).toEqual([
      `${SVC}: numgen random mod 3 never yields 5; those map entries are dead`,
      `${SVC}: numgen random mod 3 has no entry for 2: 33.33% of new connections get no endpoint`,
    ]);
  });

  it('a numgen element that is not a goto: the key and the verdict as listed', async () => {
    const { web: s } = await web({ serviceChain: `\t\tnumgen random mod 2 vmap { 0 : goto ${EP1}, 1 : accept }` });
    expect(s.problems).toContainEqual({ code: 'nft-numgen-not-endpoint-goto', chain: SVC, key: '1', verdict: 'accept' });
    expect(s.problems.map(problemText)).toContain(`${SVC}: numgen key 1 has verdict accept, not a goto to an endpoint chain`);
  });

  it('an endpoint chain DNATs elsewhere than its name says: both addresses and ports', async () => {
    const { web: s } = await web({ endpoint1: '\t\tmeta l4proto tcp dnat to 10.244.1.99:8081' });
    expect(s.problems).toEqual([{ code: 'nft-endpoint-dnat-mismatch', chain: EP1, namedIp: '10.244.1.5', namedPort: 8080, ip: '10.244.1.99', port: 8081 }]);
    expect(s.problems.map(problemText)).toEqual([`${EP1} is named for 10.244.1.5/8080 but DNATs to 10.244.1.99:8081`]);
  });

  it('an endpoint chain without dnat', async () => {
    const { web: s } = await web({ endpoint1: '' });
    expect(s.problems).toContainEqual({ code: 'nft-endpoint-no-dnat', chain: EP1 });
    expect(s.problems.map(problemText)).toContain(`${EP1} has no dnat rule`);
  });

  it('an affinity set without timeout', async () => {
    const { web: s } = await web({ affinitySet: '' });
    expect(s.problems).toEqual([{ code: 'nft-affinity-no-timeout', set: AFF1 }]);
    expect(s.problems.map(problemText)).toEqual([`${AFF1} has no timeout: affinity never expires`]);
  });

  it('a renamed service chain: the hash found and the one expected', async () => {
    const bad = SVC.replace(nftNameHash('demo/web/tcp/http'), 'BADHASH2');
    const res = await resolveServices(await snapshotOf({ 'nft-ruleset.txt': table(HEALTHY).replaceAll(SVC, bad) }));
    const s = res.services.find((x) => x.clusterIP === '10.96.0.50')!;
    expect(s.problems).toEqual([{ code: 'nft-hash-mismatch', chain: bad, hash: 'BADHASH2', expected: nftNameHash('demo/web/tcp/http') }]);
    expect(s.problems.map(problemText)).toEqual([`${bad}: hash BADHASH2 does not match its name (expected ${nftNameHash('demo/web/tcp/http')}): renamed or hand-edited?`]);
  });

  it('a no-endpoint element that accepts: the map, the element key, the verdict', async () => {
    const { all } = await web({ noEndpoints: '10.96.0.51 . tcp . 80 comment "demo/empty:http" : accept' });
    const empty = all.find((s) => s.clusterIP === '10.96.0.51')!;
    expect(empty.problems).toContainEqual({ code: 'nft-no-endpoint-verdict-passes', set: 'no-endpoint-services', element: '10.96.0.51 . tcp . 80', verdict: 'accept' });
    expect(empty.problems.map(problemText)).toContain(
      'no-endpoint-services element 10.96.0.51 . tcp . 80 has verdict accept: traffic to a Service without endpoints is not rejected or dropped',
    );
  });

  it('no problem is a sentence wrapped in a placeholder code any more', async () => {
    const { all } = await web({ serviceChain: `\t\tnumgen random mod 3 vmap { 0 : goto ${EP1}, 1 : accept, 7 : goto ${EP2} }`, endpoint1: '', affinitySet: '' });
    const problems = all.flatMap((s) => s.problems);
    expect(problems.length).toBeGreaterThan(3);
    for (const p of problems) {
      expect(p.code).toMatch(/^(nft-|chain-unreached$)/);
      expect(Object.keys(p)).not.toContain('text');
    }
  });
});
