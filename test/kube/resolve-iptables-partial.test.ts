/**
 * Honest answers from partial iptables evidence (issue 15): fragments shaped like the pastes in
 * public issue threads — a grep without the endpoint chains, a table cut before COMMIT, an old
 * kube-proxy's XLB drop and hashes, a block pasted twice, chains without comments. Each case
 * asserts what `services` says and what lint says about the same dump.
 */
import { describe, expect, it } from 'vitest';
import { resolveServices } from '../../src/kube/resolve.js';
import { judgeNode } from '../../src/judge/index.js';
import { endpointHash, portProtoHash } from '../../src/kube/hash.js';
import { problemText } from '../../src/render/problems.js';
import { lintSnapshot } from '../../src/lint/run.js';
import { KIND, lineOf, snapshotOf } from '../lint/helpers.js';

async function resolve(text: string) {
  const snapshot = await snapshotOf({ 'iptables-save.txt': text });
  const res = await resolveServices(snapshot);
  const lint = await lintSnapshot(snapshot, { resolution: res });
  return { res, lint, one: (id: string) => res.services.find((s) => s.id === id)! };
}

const codes = (s: { problems: readonly { code: string }[] }) => s.problems.map((p) => p.code);

// kube-dns:dns as a `grep KUBE-SVC-TCOU7JCQXEZGVUNU` of the kind sample shows it: the Service chain, no SEP chains.
const GREP = KIND.split('\n').filter((l) => l.includes('KUBE-SVC-TCOU7JCQXEZGVUNU') && !l.startsWith(':')).join('\n');

describe('endpoint chains cut out of a paste', () => {
  it('leave the endpoints unknown (older comments without "-> IP:port"): unknown, not no-endpoints, and lint does not say the traffic is rejected', async () => {
    // kube-proxy before the "-> IP:port" comments named only the Service port on the balancing rules.
    const old = GREP.replace(/ -> [0-9.]+:\d+"/g, '"');
    expect(old).not.toBe(GREP);
    const { one, lint } = await resolve(`${old}\n`);
    const dns = one('kube-system/kube-dns:dns/udp');
    expect(dns.state).toBe('unknown');
    expect(dns.endpoints).toEqual([]);
    expect(codes(dns)).toContain('endpoint-chain-absent');
    expect(dns.problems.map(problemText)).toContain('KUBE-SVC-TCOU7JCQXEZGVUNU goes to KUBE-SEP-6E7XQMQ4RAYOWTTM, which is not in the dumps: its endpoint is unknown');
    expect(lint.findings.filter((f) => f.ruleId === 'service-no-endpoints')).toEqual([]);
  });

  it('with "-> IP:port" comments, list the endpoints from them and say the chains are missing (partial)', async () => {
    const { one } = await resolve(`${GREP}\n`);
    const dns = one('kube-system/kube-dns:dns/udp');
    expect(dns.state).toBe('partial');
    expect(dns.endpoints.map((e) => `${e.ip}:${e.port} ${e.probability}`)).toEqual(['10.244.0.3:53 0.5', '10.244.0.4:53 0.5']);
    expect(dns.problems).toContainEqual({ code: 'endpoint-chain-absent', chain: 'KUBE-SEP-WXWGHGKZOCNYRYI7', from: 'KUBE-SVC-TCOU7JCQXEZGVUNU' });
  });
});

describe('a table cut before COMMIT', () => {
  // The kind sample's nat table, cut after KUBE-SERVICES (iptables-save prints the Service chains' rules after it).
  const natStart = KIND.indexOf('*nat');
  const cutAt = KIND.indexOf('-A KUBE-SVC-');
  const CUT = KIND.slice(0, cutAt);

  it('makes the endpoints after the cut unknown, says where the cut is, and keeps lint quiet about those chains', async () => {
    expect(natStart).toBeGreaterThanOrEqual(0);
    expect(cutAt).toBeGreaterThan(natStart);
    const { one, lint } = await resolve(CUT);
    const dns = one('kube-system/kube-dns:dns/udp');
    expect(dns.state).toBe('unknown');
    expect(dns.problems).toContainEqual({ code: 'table-truncated', table: 'nat', file: 'iptables-save.txt', line: lineOf(CUT, 'dst-type LOCAL -j KUBE-NODEPORTS') });
    const findings = lint.findings.filter((f) => ['orphan-chain', 'service-no-endpoints'].includes(f.ruleId));
    expect(findings).toEqual([]);
  });

  it('the same chains in the whole table are healthy (the cut, not the rules, made them unknown)', async () => {
    const { one } = await resolve(KIND);
    expect(one('kube-system/kube-dns:dns/udp').state).toBe('healthy');
  });
});

describe("kube-proxy ≤1.23's XLB chain without local endpoints", () => {
  const hash = portProtoHash('default/web:http', 'tcp');
  const text = [
    '*nat',
    ':KUBE-SERVICES - [0:0]',
    ':KUBE-NODEPORTS - [0:0]',
    ':KUBE-MARK-DROP - [0:0]',
    `:KUBE-XLB-${hash} - [0:0]`,
    `-A KUBE-NODEPORTS -p tcp -m comment --comment "default/web:http" -m tcp --dport 30080 -j KUBE-XLB-${hash}`,
    `-A KUBE-XLB-${hash} -m comment --comment "default/web:http has no local endpoints" -j KUBE-MARK-DROP`,
    'COMMIT',
    '',
  ].join('\n');

  it('is no-local-endpoints (dropped), not no-endpoints (rejected)', async () => {
    const { one, lint } = await resolve(text);
    const web = one('default/web:http/tcp');
    expect(web).toMatchObject({ state: 'no-local-endpoints', externalTrafficPolicy: 'Local', nodePort: 30080, hashVerified: true });
    expect(lint.findings.filter((f) => f.ruleId === 'service-no-endpoints')).toEqual([]);
    expect(lint.findings.filter((f) => f.ruleId === 'local-policy-no-local-endpoints').length).toBe(1);
  });
});

describe('chain names of every kube-proxy hash generation', () => {
  // Up to ~1.9 ServicePortName.String() kept the colon of an unnamed port: "default/web:" + "tcp".
  for (const spn of ['default/web', 'default/web:']) {
    it(`accepts the names hashed over ${JSON.stringify(spn)}`, async () => {
      const svc = `KUBE-SVC-${portProtoHash(spn, 'tcp')}`;
      const sep = `KUBE-SEP-${endpointHash(spn, 'tcp', '10.244.1.5:8080')}`;
      const text = [
        '*nat',
        ':KUBE-SERVICES - [0:0]',
        `:${svc} - [0:0]`,
        `:${sep} - [0:0]`,
        `-A KUBE-SERVICES -d 10.96.7.7/32 -p tcp -m comment --comment "default/web: cluster IP" -m tcp --dport 80 -j ${svc}`,
        `-A ${svc} -m comment --comment "default/web:" -j ${sep}`,
        `-A ${sep} -p tcp -m comment --comment "default/web:" -m tcp -j DNAT --to-destination 10.244.1.5:8080`,
        'COMMIT',
        '',
      ].join('\n');
      const { one } = await resolve(text);
      const web = one('default/web/tcp');
      expect(web).toMatchObject({ hashVerified: true, state: 'healthy', problems: [] });
    });
  }

  it('still flags a name no generation gives', async () => {
    const text = [
      '*nat',
      ':KUBE-SERVICES - [0:0]',
      ':KUBE-SVC-AAAAAAAAAAAAAAAA - [0:0]',
      '-A KUBE-SERVICES -d 10.96.7.7/32 -p tcp -m comment --comment "default/web: cluster IP" -m tcp --dport 80 -j KUBE-SVC-AAAAAAAAAAAAAAAA',
      'COMMIT',
      '',
    ].join('\n');
    const { one } = await resolve(text);
    expect(one('default/web/tcp').hashVerified).toBe(false);
  });
});

describe('a block pasted twice', () => {
  // The kind sample's kube-dns:dns Service chain rules, repeated as a paste done twice repeats them.
  const svcRules = KIND.split('\n').filter((l) => l.startsWith('-A KUBE-SVC-TCOU7JCQXEZGVUNU'));
  const text = KIND.replace(svcRules.join('\n'), [...svcRules, ...svcRules].join('\n'));

  it('is read once: two endpoints at 50%, and a problem says the rules repeat', async () => {
    expect(text).not.toBe(KIND);
    const { one } = await resolve(text);
    const dns = one('kube-system/kube-dns:dns/udp');
    expect(dns.endpoints.map((e) => e.probability)).toEqual([0.5, 0.5]);
    expect(dns.problems).toContainEqual({ code: 'repeated-rules', chain: 'KUBE-SVC-TCOU7JCQXEZGVUNU', times: 2, rules: svcRules.length });
  });
});

describe('Service chains without comments', () => {
  // kube-dns:dns and :dns-tcp with every comment removed (above 1000 endpoints kube-proxy drops them), SVC and SEP chains only.
  const strip = (l: string) => l.replace(/ -m comment --comment "[^"]*"/g, '');
  const keep = KIND.slice(KIND.indexOf('*nat')).split('\n').filter((l) => /^(:|-A )KUBE-(SVC|SEP)-/.test(l) || l === '*nat' || l === 'COMMIT').map(strip);
  const natOnly = keep.slice(0, keep.indexOf('COMMIT') + 1).join('\n') + '\n';

  it('get the protocol of their DNAT rules (a UDP chain is not tcp) and ids of their own', async () => {
    const { res } = await resolve(natOnly);
    const unnamed = res.services.filter((s) => s.name === null);
    expect(unnamed.length).toBeGreaterThan(1);
    const dns = unnamed.find((s) => s.chains.svc === 'KUBE-SVC-TCOU7JCQXEZGVUNU')!;
    expect(dns.protocol).toBe('udp');
    expect(new Set(unnamed.map((s) => s.id)).size).toBe(unnamed.length);
    expect(dns.id).toBe('KUBE-SVC-TCOU7JCQXEZGVUNU/udp');
  });
});

describe('no endpoints without a REJECT rule', () => {
  // A NodePort whose external chain is declared but empty: no endpoint, and no rule rejects.
  const hash = portProtoHash('default/web:http', 'tcp');
  // A whole dump (the hooks declared and reaching KUBE-NODEPORTS): the empty chain is all there is.
  const text = [
    '*nat',
    ':PREROUTING ACCEPT [0:0]',
    ':KUBE-SERVICES - [0:0]',
    ':KUBE-NODEPORTS - [0:0]',
    `:KUBE-EXT-${hash} - [0:0]`,
    '-A PREROUTING -j KUBE-SERVICES',
    '-A KUBE-SERVICES -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS',
    `-A KUBE-NODEPORTS -p tcp -m comment --comment "default/web:http" -m tcp --dport 30080 -j KUBE-EXT-${hash}`,
    'COMMIT',
    '',
  ].join('\n');

  it('lint does not claim the connections are rejected', async () => {
    const { one, lint } = await resolve(text);
    expect(one('default/web:http/tcp').state).toBe('no-endpoints');
    const f = lint.findings.filter((x) => x.ruleId === 'service-no-endpoints');
    expect(f.map((x) => x.message)).toEqual(['Service default/web:http has no endpoints: nothing in these dumps delivers connections to NodePort 30080']);
  });

  it('from restore input (kube-proxy\'s chains only, a partial sync may leave unchanged ones out), the same chains are unknown, and lint claims nothing', async () => {
    const payload = text.split('\n').filter((l) => !/PREROUTING/.test(l)).join('\n');
    const { lint } = await resolve(payload);
    expect(lint.findings.filter((x) => x.ruleId === 'service-no-endpoints')).toEqual([]);
    const snap = await snapshotOf({ 'payload.txt': payload });
    const node = judgeNode(snap, await resolveServices(snap));
    expect(node.resolution.services.map((x) => [x.id, x.state])).toEqual([['default/web:http/tcp', 'unknown']]);
  });
});
