/**
 * Issue 28, bullet by bullet: the first line of `trace`, the STATE/REASON of `services` and lint
 * never contradict what kpx knows, and absence is claimed only from complete evidence. Each case
 * runs the commands as a user would (in this process), on a staged incident from the generator
 * (src/generate: realistic kube-proxy dumps), a real public paste (test/fixtures/…/*.source) or a
 * sample, and asserts the honest answer in text and in JSON (and the exit code).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { traceAction } from '../../src/cli/commands/trace.js';
import { servicesAction } from '../../src/cli/commands/services.js';
import { lintSnapshot } from '../../src/lint/run.js';
import { loadSnapshot } from '../../src/load/snapshot.js';
import { plain, reportDocument } from '../../src/render/report/index.js';
import { kubeProxyRestorePayload, planPort } from '../../src/generate/index.js';
import { kubeProxyLogOf, natPayloadWithBadRule } from '../helpers/kube-proxy-payload.js';
import { cleanup, flat, folder, judged, once, run, stage, type Files } from './helpers.js';
import { unwrappedText } from '../helpers/columns.js';

// What the text says, line by line: lines whole (the layout is test/render/width.test.ts's).
unwrappedText();

afterAll(cleanup);

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const fixture = (p: string) => readFileSync(join(ROOT, 'test/fixtures', p), 'utf8');
const KIND = readFileSync(join(ROOT, 'samples/iptables-mode-kind/iptables-save.txt'), 'utf8');

type TraceDoc = { schemaVersion: number; traces: { services: string[]; outcomes: { verdict: string; probability: number; destination: string }[]; judgement: Record<string, unknown> & { verdict: string; cannotTell: boolean } }[] };
type ServicesDoc = { schemaVersion: number; services: { id: string; state: string; endpoints: { ip: string; local: boolean | null }[]; judgement?: { reason: string | null; more: number; unknown: { share: number | null; reasons: { code: string; message: string }[] } | null; caveats: { code: string; message: string }[] } }[]; problems: { message: string }[]; judgement: Record<string, unknown> };

const trace = (dest: string, input: string[], extra: Record<string, unknown> = {}) => run(() => traceAction(dest, { input, output: 'text', from: 'pod', ...extra }));
const traceJson = async (dest: string, input: string[], extra: Record<string, unknown> = {}) => {
  const r = await run(() => traceAction(dest, { input, output: 'json', from: 'pod', ...extra }));
  return { ...r, doc: JSON.parse(r.out) as TraceDoc };
};
const services = (input: string[], extra: Record<string, unknown> = {}) => run(() => servicesAction([], { input, output: 'text', ...extra }));
const servicesJson = async (input: string[], extra: Record<string, unknown> = {}) => {
  const r = await run(() => servicesAction([], { input, output: 'json', ...extra }));
  return { ...r, doc: JSON.parse(r.out) as ServicesDoc };
};
/** The verdict line (and what follows it before `packet`), folded lines joined. */
const verdictOf = (text: string) => flat(text.slice(text.indexOf('  verdict'), text.indexOf('  packet')));

const SMALL = { seed: 11, services: 6, nodes: 3 } as const;

describe('a conntrack pin is the verdict', () => {
  // kubernetes/kubernetes#48370's own conntrack -L entry (its .source), beside the kind sample with its VIP.
  const bundle = folder({ 'iptables-save.txt': KIND.split('10.96.0.10').join('10.15.240.10'), 'conntrack.txt': fixture('conntrack/k8s-48370-translated.txt') });
  const opts = { from: '10.12.0.14', sport: '43145', established: true };

  it('text: the first answer is the pinned destination and its fate, blackholed for the seconds the entry has left', async () => {
    const r = await trace('10.15.240.10:53/udp', [bundle], opts);
    expect(r.code).toBe(0);
    expect(verdictOf(r.out)).toMatch(/^ verdict PINNED by conntrack → 10\.12\.0\.11:53, which is no endpoint now: blackholed for 29 s unless a packet refreshes the entry \(conntrack\.txt:1\)/);
    expect(r.out).not.toMatch(/ACCEPT 100%/);
    expect(r.out).toMatch(/conntrack\/entry:1\s+conntrack entry: the connection's NAT binding sends it to 10\.12\.0\.11:53/);
  });

  it('JSON: verdict PINNED, fate blackholed, and the outcome goes where the entry says', async () => {
    const { doc } = await traceJson('10.15.240.10:53/udp', [bundle], opts);
    expect(doc.schemaVersion).toBe(2);
    const t = doc.traces[0];
    expect(t.judgement).toMatchObject({ verdict: 'PINNED', pinned: { to: '10.12.0.11:53', fate: 'blackholed', seconds: 29, cite: { file: join(bundle, 'conntrack.txt'), line: 1 } }, cannotTell: false });
    expect(t.outcomes.map((o) => [o.verdict, o.destination, o.probability])).toEqual([['DNAT', '10.12.0.11:53', 1]]);
  });

  it('staged: a generated node whose kube-dns flow is pinned to a deleted pod (and the same flow, NEW, goes to the endpoints)', async () => {
    let vip = '';
    const dir = stage('iptables', { ...SMALL, shapes: ['kube-dns'] }, (f, cluster) => {
      const dns = cluster.services.find((s) => s.name === 'kube-dns')!;
      vip = dns.clusterIP;
      f['conntrack.txt'] = `udp      17 117 src=10.244.1.200 dst=${vip} sport=45000 dport=53 src=10.244.9.99 dst=10.244.1.200 sport=53 dport=45000 [ASSURED] mark=0 use=1\n`;
    });
    const pinned = await traceJson(`${vip}:53/udp`, [dir], { from: '10.244.1.200', sport: '45000', established: true });
    expect(pinned.doc.traces[0].judgement).toMatchObject({ verdict: 'PINNED', pinned: { to: '10.244.9.99:53', fate: 'blackholed', seconds: 117 } });
    const fresh = await traceJson(`${vip}:53/udp`, [dir], { from: '10.244.1.200', sport: '45001' });
    expect(fresh.doc.traces[0].judgement.verdict).toBe('DNAT');
    expect(fresh.doc.traces[0].outcomes.every((o) => o.destination !== '10.244.9.99:53')).toBe(true);
  });
});

describe('a jump to a missing KUBE-SEP chain is an UNKNOWN share, and the dump cannot be whole', () => {
  let hash = '';
  let vip = '';
  let sep = '';
  const dir = stage('iptables', { ...SMALL, shapes: ['three-endpoints'] }, (f, cluster) => {
    const svc = cluster.services.find((s) => s.name === 'three-endpoints')!;
    const plan = planPort(cluster, svc, svc.ports[0]);
    hash = plan.hash;
    vip = `${svc.clusterIP}:${svc.ports[0].port}`;
    const save = f['iptables-save.txt']!;
    sep = /-j (KUBE-SEP-[A-Z2-7]{16})/.exec(save.split('\n').find((l) => l.startsWith(`-A KUBE-SVC-${hash} `) && l.includes('0.33333'))!)![1];
    // The chain's declaration and rules are gone; the balancing rule still jumps to it.
    f['iptables-save.txt'] = save.split('\n').filter((l) => !l.startsWith(`:${sep} `) && !l.startsWith(`-A ${sep} `)).join('\n');
  });

  it('trace: DNAT two thirds, UNKNOWN one third (never 50/50), saying the dump cannot be a whole iptables-save', async () => {
    const r = await trace(`${vip}/tcp`, [dir]);
    expect(verdictOf(r.out)).toMatch(/verdict DNAT 66\.67% · UNKNOWN 33\.33% .* unknown 33\.33%: iptables-save\.txt jumps to KUBE-SEP-[A-Z2-7]{16}, which it does not hold: such a dump cannot be a whole iptables-save \(the kernel refuses a jump to a chain that does not exist\): it was cut or edited/);
    // No outcome takes half: the missing third is not shared out between the other two.
    expect(r.out).not.toMatch(/^\s+50%\s+DNAT/m);
    const { doc } = await traceJson(`${vip}/tcp`, [dir]);
    const j = doc.traces[0].judgement as unknown as { verdict: string; shares: { verdict: string; share: number }[]; unknown: { share: number; reasons: { code: string; chains: string[] }[] } };
    expect(j.verdict).toBe('MIXED');
    expect(j.shares.map((x) => x.verdict)).toEqual(['DNAT', 'UNKNOWN']);
    expect(j.shares[0].share).toBeCloseTo(2 / 3, 9);
    expect(j.unknown.share).toBeCloseTo(1 / 3, 9);
    expect(j.unknown.reasons).toEqual([expect.objectContaining({ code: 'dump-not-whole', chains: [sep] })]);
  });

  it('services: partial (not healthy), REASON dump-not-whole, the unknown third in JSON; lint: the dangling jump, which agrees', async () => {
    const t = await services([dir]);
    expect(t.out).toMatch(/^shapes\/three-endpoints:http\s+\S+\s+80\/TCP\s+3 \(\d local\)\s+partial\s+dump-not-whole \+1$/m);
    const { doc } = await servicesJson([dir]);
    const s = doc.services.find((x) => x.id === 'shapes/three-endpoints:http/tcp')!;
    expect(s.state).toBe('partial');
    expect(s.judgement!.reason).toBe('dump-not-whole');
    expect(s.judgement!.unknown!.share).toBeCloseTo(1 / 3, 9);
    expect(s.judgement!.unknown!.reasons.map((x) => x.code)).toEqual(['dump-not-whole', 'endpoint-chains-absent']);
    const lint = await lintSnapshot(await loadSnapshot([dir]));
    expect(lint.findings.filter((f) => f.ruleId === 'dangling-jump').map((f) => f.message)).toEqual([expect.stringContaining(`jump to ${sep} in table nat`)]);
    expect(lint.findings.filter((f) => f.ruleId === 'service-no-endpoints' && f.service === 'shapes/three-endpoints:http')).toEqual([]);
  });
});

describe('IPVS: a virtual server without real servers refuses at once (ip_vs_leave), it does not drop', () => {
  let vip = '';
  const dir = stage('ipvs', { ...SMALL, shapes: ['no-endpoints'] }, (_f, cluster) => {
    const svc = cluster.services.find((s) => s.name === 'no-endpoints')!;
    vip = `${svc.clusterIP}:${svc.ports[0].port}`;
  });
  it('trace: REJECT with ICMP port unreachable, the kernel function named; services no-endpoints; lint says refused', async () => {
    const r = await trace(`${vip}/tcp`, [dir]);
    expect(verdictOf(r.out)).toBe(' verdict REJECT 100% ');
    expect(flat(r.out)).toContain(`REJECT refused: IPVS virtual server TCP ${vip} rr has no real servers; the kernel answers ICMP port unreachable (ip_vs_leave): connection refused at once`);
    expect(r.out).not.toMatch(/\bDROP\b|dropped/);
    const { doc } = await traceJson(`${vip}/tcp`, [dir]);
    expect(doc.traces[0].judgement.verdict).toBe('REJECT');
    const lint = await lintSnapshot(await loadSnapshot([dir]));
    expect(lint.findings.filter((f) => f.ruleId === 'ipvs-no-real-servers' && f.message.includes(vip)).map((f) => f.message)).toEqual([`virtual server TCP/${vip} has no real servers: new connections to it are refused (ICMP port unreachable)`]);
  });
});

describe('one ruleset, two views, counted once', () => {
  it("iptables-save beside kube-proxy's own iptables-restore input: the same Services, warnings and trace header as the dump alone", async () => {
    const one = stage('iptables', { ...SMALL, shapes: ['kube-dns', 'no-endpoints', 'three-endpoints'] });
    const two = stage('iptables', { ...SMALL, shapes: ['kube-dns', 'no-endpoints', 'three-endpoints'] }, (f) => {
      f['restore-input.txt'] = kubeProxyRestorePayload(f['iptables-save.txt']!);
    });
    const a = await servicesJson([one]);
    const b = await servicesJson([two]);
    expect(b.doc.services.length).toBe(a.doc.services.length);
    expect(b.doc.services.map((s) => [s.id, s.state])).toEqual(a.doc.services.map((s) => [s.id, s.state]));
    expect(b.doc.judgement.secondViews).toEqual([expect.objectContaining({ kind: 'iptables-restore-input', file: join(two, 'restore-input.txt'), of: join(two, 'iptables-save.txt'), differingCount: 0 })]);
    const la = await lintSnapshot(await loadSnapshot([one]));
    const lb = await lintSnapshot(await loadSnapshot([two]));
    expect(lb.findings.map((f) => `${f.ruleId} ${f.message}`)).toEqual(la.findings.map((f) => `${f.ruleId} ${f.message}`));
    const dns = a.doc.services.find((s) => s.id === 'kube-system/kube-dns:dns/udp')!;
    const t = await trace(`${(dns as unknown as { clusterIP: string }).clusterIP}:53/udp`, [two]);
    expect(t.out.split('\n')[0 + t.out.split('\n').findIndex((l) => l.startsWith('kube-system/'))]).toMatch(/^kube-system\/kube-dns:dns {2}/);
    expect(t.out).not.toMatch(/kube-dns:dns, kube-system\/kube-dns:dns/);
    expect(t.out).toMatch(/^note: restore-input\.txt is a second view of iptables-save\.txt \(iptables-restore-input\): its \d+ rules are all in iptables-save\.txt; read once$/m);
  });

  it('nft list ruleset beside the nft -f transaction: the same Services, once', async () => {
    const one = stage('nftables', SMALL);
    const two = stage('nftables', SMALL, undefined, { loadForms: true });
    const a = await servicesJson([one]);
    const b = await servicesJson([two]);
    expect(b.doc.services.length).toBe(a.doc.services.length);
    expect(b.doc.judgement.secondViews).toEqual([expect.objectContaining({ kind: 'nft-transaction', differingCount: 0 })]);
  });
});

describe("locality from the API's EndpointSlices and Nodes", () => {
  it('with --node-ip and no ip addr/route, endpoints are local or not as the API says; the report counts them', async () => {
    let nodeIp = '';
    const dir = stage('iptables', { ...SMALL, shapes: ['kube-dns', 'three-endpoints'] }, (f, cluster) => {
      nodeIp = cluster.node.ip;
      f['ip-addr.txt'] = undefined;
      f['ip-route.txt'] = undefined;
    }, { api: true });
    const withRoutes = stage('iptables', { ...SMALL, shapes: ['kube-dns', 'three-endpoints'] });
    const truth = (await servicesJson([withRoutes])).doc.services;
    const { doc } = await servicesJson([dir], { nodeIp: [nodeIp] });
    const locals = (d: ServicesDoc['services']) => d.flatMap((s) => s.endpoints.map((e) => `${s.id} ${e.ip} ${e.local}`)).sort();
    expect(locals(doc.services)).toEqual(locals(truth));
    expect(doc.services.flatMap((s) => s.endpoints).filter((e) => e.local === true).length).toBeGreaterThan(0);
    const node = await judged([dir], [nodeIp]);
    const blocks = reportDocument({ node, lint: null, version: 'x', generatedAt: 'x' });
    const others = blocks.find((b) => b.kind === 'section' && b.id === 'other-services');
    const table = others?.kind === 'section' ? others.blocks.find((b) => b.kind === 'table') : undefined;
    const dns = table?.kind === 'table' ? table.rows.find((r) => plain(r[0]) === 'kube-system/kube-dns:dns') : undefined;
    const want = truth.find((s) => s.id === 'kube-system/kube-dns:dns/udp')!.endpoints;
    expect(dns && plain(dns[3])).toBe(`${want.length} (${want.filter((e) => e.local).length} local)`);
  });
});

describe('leftover chains on an IPVS node are leftovers, said once, never a state', () => {
  /** An IPVS node's iptables-save with an earlier iptables mode's KUBE-SVC/SEP chains and rules left in nat. */
  function withLeftovers(f: Files, iptablesSave: string) {
    const old = iptablesSave.split('\n');
    const decl = old.filter((l) => /^:KUBE-(SVC|SEP)-/.test(l));
    const rules = old.filter((l) => /^-A KUBE-(SVC|SEP)-/.test(l));
    const save = f['iptables-save.txt']!.split('\n');
    const nat = save.indexOf('*nat');
    const commit = save.indexOf('COMMIT', nat);
    f['iptables-save.txt'] = [...save.slice(0, nat + 1), ...decl, ...save.slice(nat + 1, commit), ...rules, ...save.slice(commit)].join('\n');
  }
  let vip = '';
  const old = readFileSync(join(stage('iptables', { ...SMALL, shapes: ['kube-dns', 'no-endpoints'] }), 'iptables-save.txt'), 'utf8');
  const plain = stage('ipvs', { ...SMALL, shapes: ['kube-dns', 'no-endpoints'] });
  const dir = stage('ipvs', { ...SMALL, shapes: ['kube-dns', 'no-endpoints'] }, (f, cluster) => {
    withLeftovers(f, old);
    vip = cluster.services.find((s) => s.name === 'no-endpoints')!.clusterIP;
  });

  it('services: the IPVS Services only (as without the leftovers), and one note saying the leftovers', async () => {
    const a = await servicesJson([plain]);
    const b = await servicesJson([dir]);
    expect(b.doc.services.map((s) => [s.id, s.state])).toEqual(a.doc.services.map((s) => [s.id, s.state]));
    expect(b.doc.services.every((s) => (s as unknown as { mode: string }).mode === 'ipvs')).toBe(true);
    expect(b.doc.judgement.leftovers).toEqual([expect.objectContaining({ table: 'nat', servicePorts: expect.any(Number), message: expect.stringMatching(/reached by no hook: leftovers of an earlier proxy mode that act on no packet/) })]);
    const t = await services([dir]);
    expect(t.out.match(/^note: \d+ kube-proxy iptables-mode chains in iptables-save\.txt .* reached by no hook/gm)?.length).toBe(1);
  });

  it('trace to an IPVS VIP whose Service has no endpoints: REJECT 100% (ip_vs_leave), no lost outcome, no leftover chain walked', async () => {
    const { doc } = await traceJson(`${vip}:80/tcp`, [dir]);
    expect(doc.traces[0].outcomes.map((o) => [o.verdict, o.probability])).toEqual([['REJECT', 1]]);
    expect(JSON.stringify(doc.traces[0].outcomes)).not.toMatch(/KUBE-SVC-/);
  });

  it('lint says the leftovers once, as inert', async () => {
    const lint = await lintSnapshot(await loadSnapshot([dir]));
    expect(lint.findings.filter((f) => f.ruleId === 'stale-proxy-mode').map((f) => f.message)).toEqual([expect.stringMatching(/^iptables-mode chains \(\d+ KUBE-SVC\/SEP\/… chains\) beside \d+ IPVS virtual servers: no hook reaches them, so they act on no packet/)]);
  });
});

describe('a grep without *nat: the table is inferred from the rules, and absence is never concluded', () => {
  // kubernetes/kubernetes#50083 (see its .source): kube-dns' KUBE-SERVICES and KUBE-SEP lines, no header.
  const paste = join(ROOT, 'test/fixtures/judge/k8s-50083-grep.iptables');
  it('services: kube-dns is there (unknown), not "No Kubernetes Services found"; exit 3', async () => {
    const r = await services([paste]);
    expect(r.out).not.toMatch(/No Kubernetes Services found/);
    expect(r.out).toMatch(/^kube-system\/kube-dns:dns\s+10\.96\.0\.10\s+53\/UDP\s+0\s+unknown\s+service-chain-absent$/m);
    expect(r.code).toBe(3);
  });
  it('trace to the VIP: UNKNOWN (its chain is not in the paste), not "no Service matches"; exit 3', async () => {
    const r = await trace('10.96.0.10:53/udp', [paste]);
    expect(r.out.split('\n')[0]).toBe('kube-system/kube-dns:dns  10.96.0.10:53/udp');
    expect(r.out).not.toMatch(/no Service on this node matches/);
    expect(r.code).toBe(3);
  });
  it('trace to a VIP the grep does not show: UNKNOWN with what is partial, never "no Service matches"', async () => {
    // 10.96.0.99 is a typo away from the grep's 10.96.0.10: "no Service here, did you mean" would be a claim of absence.
    const near = await run(() => traceAction('10.96.0.99:80/tcp', { input: [paste], output: 'json', from: 'pod' }));
    expect(near.code).toBe(3);
    const doc = JSON.parse(near.out) as { traces: unknown[]; noMatch: { judgement: unknown } };
    expect(doc.traces).toEqual([]);
    expect(doc.noMatch.judgement).toMatchObject({ evidence: 'partial', partial: [{ kind: 'grep', table: 'nat', inferred: { basis: 'content' } }] });
    const r = await trace('10.96.0.99:80/tcp', [paste]);
    expect(flat(r.out)).toMatch(/^UNKNOWN: no Service resolved for 10\.96\.0\.99:80\/tcp, but the evidence cannot show that none matches; k8s-50083-grep\.iptables \(table nat\) is a paste without its table line/);
    // Far from every VIP, the address is traced as asked: the walk ends where the grep ends, UNKNOWN.
    const far = await traceJson('192.0.2.7:80/tcp', [paste]);
    expect(far.code).toBe(3);
    expect(far.doc.traces[0].judgement).toMatchObject({ verdict: 'UNKNOWN', cannotTell: true, noService: { evidence: 'partial', partial: [{ kind: 'grep', table: 'nat' }] } });
    const farText = await trace('192.0.2.7:80/tcp', [paste]);
    expect(farText.out.split('\n')[0]).toBe('no Service resolved (the evidence is partial)  192.0.2.7:80/tcp');
  });
  it('the class: a grep of only dispatch rules is nat (kubernetes-sigs/kubespray#1258), guessed tables never give absence', async () => {
    const rs = (await loadSnapshot([join(ROOT, 'test/fixtures/judge/kubespray-1258-grep.iptables')])).rulesets[0];
    expect(rs.tables.map((t) => [t.name, t.inferred?.basis])).toEqual([['nat', 'content']]);
    const none = folder({ 'grep.txt': '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS\n' });
    const r = await services([none]);
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/cannot tell which Services this node implements: no Service was resolved, and the evidence cannot show there are none: .*no rule says which table: filter is a guess/);
  });
});

describe('referenced but not pasted is not empty: affinity checks naming endpoint chains the grep left out', () => {
  it('each referenced chain is an endpoint whose address is unknown; state unknown, never 0 endpoints or no endpoint rules', async () => {
    // `iptables-save | grep rcheck` of a generated node (its affinity Services), comments without "-> IP:port".
    const dir = stage('iptables', { ...SMALL, shapes: ['affinity', 'affinity-local'] }, (f) => {
      f['iptables-save.txt'] = f['iptables-save.txt']!
        .split('\n')
        .filter((l) => l.includes('--rcheck'))
        .map((l) => l.replace(/ -> [0-9.:]+"/, '"'))
        .join('\n');
      f['ip-addr.txt'] = undefined;
      f['ip-route.txt'] = undefined;
    });
    const { doc, code } = await servicesJson([dir]);
    expect(code).toBe(3);
    const aff = doc.services.find((s) => s.id === 'shapes/affinity:http/tcp')!;
    expect(aff.state).toBe('unknown');
    expect(aff.judgement!.unknown!.reasons.map((r) => r.code)).toContain('endpoint-address-unknown');
    const t = await services([dir]);
    expect(t.out).toMatch(/^shapes\/affinity:http\s+\S+\s+\S+\s+(\d+) \(\1 address(es)? unknown\)\s+unknown\s+/m);
    expect(t.out).not.toMatch(/no-endpoint-rules|balancing-chain-empty/);
    const lint = await lintSnapshot(await loadSnapshot([dir]));
    expect(lint.findings.filter((f) => /no endpoints|no endpoint rules/.test(f.message))).toEqual([]);
  });
});

describe('"no Service matches" with the VIP in plain sight', () => {
  // Constructed (a unit case, not a real paste): save lines of kube-dns beside `iptables -t nat -L KUBE-SERVICES -n -v`
  // rows naming weave's 10.32.0.10:53 (kubernetes#48370's shape). Listings are read (issue 30): the Service is named,
  // and the chain the listing does not show makes the way UNKNOWN.
  const mix = [
    '-A KUBE-SERVICES -d 10.32.0.1/32 -p tcp -m comment --comment "default/kubernetes:https cluster IP" -m tcp --dport 443 -j KUBE-SVC-NPX46M4PTMTKRN6Y',
    'Chain KUBE-SERVICES (2 references)',
    ' pkts bytes target     prot opt in     out     source               destination',
    '    0     0 KUBE-SVC-TCOU7JCQXEZGVUNU  udp  --  *      *       0.0.0.0/0            10.32.0.10           /* kube-system/kube-dns:dns cluster IP */ udp dpt:53',
    '',
  ].join('\n');
  it('trace of a listing+save mix: the Service named, UNKNOWN 100% for the chain not shown, exit 3', async () => {
    const dir = folder({ 'paste.txt': mix });
    const r = await trace('10.32.0.10:53/udp', [dir]);
    expect(r.code).toBe(3);
    expect(r.out).not.toMatch(/no Service on this node matches/);
    expect(r.out.split('\n')[0]).toMatch(/^kube-system\/kube-dns:dns\s+10\.32\.0\.10:53\/udp$/);
    expect(flat(r.out)).toMatch(/verdict UNKNOWN 100% unknown 100%: chain KUBE-SVC-TCOU7JCQXEZGVUNU is not in the evidence/);
  });
  // The line that names the target is one kpx cannot read (an option iptables-restore refuses): the answer says so.
  const unread = [
    mix.split('\n')[0],
    '-A KUBE-SERVICES -d 10.32.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU --bogus-option',
    '',
  ].join('\n');
  it('trace: UNKNOWN with the unread line that names the target, exit 3; JSON says the same', async () => {
    const dir = folder({ 'paste.txt': unread });
    const r = await trace('10.32.0.10:53/udp', [dir]);
    expect(r.code).toBe(3);
    expect(r.out).not.toMatch(/no Service on this node matches/);
    expect(flat(r.out)).toMatch(/UNKNOWN: no Service resolved for 10\.32\.0\.10:53\/udp, but the evidence cannot show that none matches.*1 line kpx could not read names? 10\.32\.0\.10:53\/udp: paste\.txt:2 `-A KUBE-SERVICES -d 10\.32\.0\.10\/32/);
    const json = await run(() => traceAction('10.32.0.10:53/udp', { input: [dir], output: 'json', from: 'pod' }));
    expect(json.code).toBe(3);
    expect((JSON.parse(json.out) as { noMatch: { judgement: unknown } }).noMatch.judgement).toMatchObject({ evidence: 'partial', mentions: [{ line: 2 }] });
  });
});

describe("what the logs know: failing syncs make trace and services say the rules may be stale", () => {
  it('real log (kubernetes/kubernetes#104234): since when, and which payload lines the tool named', async () => {
    const sample = join(ROOT, 'samples/iptables-mode-node');
    const log = join(ROOT, 'test/fixtures/kube-proxy/klog-sync-failed.log');
    const t = await trace('10.96.0.10:53/udp', [sample, log]);
    expect(t.out.split('\n')[0]).toMatch(/^note: kube-proxy's log \(klog-sync-failed\.log:1\) shows its iptables-restore failing 5 times, from 0809 05:37:21\.484590 to 0809 07:32:42\.616867: the rules shown may be stale since 0809 05:37:21\.484590; its last failure refused payload line 52 \(others named: 51, 53; the payload is not in the log/);
    expect(verdictOf(t.out)).toMatch(/ stale the rules shown may be stale since 0809 05:37:21\.484590/);
    const s = await services([sample, log]);
    expect(s.out.split('\n')[0]).toMatch(/^note: kube-proxy's log .* the rules shown may be stale since 0809 05:37:21\.484590/);
    const { doc } = await servicesJson([sample, log]);
    expect(doc.judgement.stale).toMatchObject({ tool: 'iptables-restore', count: 5, since: '0809 05:37:21.484590', refused: { line: 52, named: [51, 53, 52] } });
  });

  it('staged: a logged payload with a refused rule names that rule and its Service, on the trace and on that Service', async () => {
    let service = '';
    const dir = stage('iptables', { ...SMALL, shapes: ['kube-dns'] }, (f) => {
      const p = natPayloadWithBadRule(f['iptables-save.txt']!, 'KUBE-MARK-DROP-MISSING', 'kube-system/kube-dns:dns');
      service = p.service;
      f['kube-proxy.log'] = kubeProxyLogOf(p.lines, `iptables-restore: line ${p.badLine} failed`, 1);
    });
    expect(service).toBe('kube-system/kube-dns:dns');
    const { doc } = await servicesJson([dir]);
    const dns = doc.services.find((s) => s.id === 'kube-system/kube-dns:dns/udp')!;
    expect(dns.judgement?.caveats.map((c) => c.code)).toEqual(['rules-may-be-stale']);
    expect(dns.judgement?.caveats[0].message).toMatch(/refused payload line \d+ `-A KUBE-SVC-[A-Z2-7]{16} -m comment --comment "kube-system\/kube-dns:dns" -j KUBE-MARK-DROP-MISSING` \(Service kube-system\/kube-dns:dns\)/);
    const t = await traceJson(`${(dns as unknown as { clusterIP: string }).clusterIP}:53/udp`, [dir]);
    expect(t.doc.traces[0].judgement.caveats).toEqual([expect.objectContaining({ code: 'rules-may-be-stale', refused: expect.objectContaining({ service: 'kube-system/kube-dns:dns' }) })]);
  });
});

describe('a draining (weight-0) IPVS real server and the conn_reuse_mode trap, on the outcome line', () => {
  it('trace: the outcome line of the virtual server names the draining server and conn_reuse_mode=0', async () => {
    let vip = '';
    const dir = stage('ipvs', { ...SMALL, shapes: ['three-endpoints'] }, (f, cluster) => {
      const svc = cluster.services.find((s) => s.name === 'three-endpoints')!;
      vip = `${svc.clusterIP}:${svc.ports[0].port}`;
      const lines = f['ipvsadm-Ln.txt']!.split('\n');
      const at = lines.findIndex((l) => l.startsWith(`TCP  ${vip} `));
      lines[at + 1] = once(lines[at + 1], /Masq {4}1 /, 'Masq    0 ');
      f['ipvsadm-Ln.txt'] = lines.join('\n');
      f['sysctl.txt'] = 'net.ipv4.vs.conn_reuse_mode = 0\n';
    });
    const r = await trace(`${vip}/tcp`, [dir]);
    expect(r.code).toBe(0);
    expect(flat(r.out)).toMatch(/50% DNAT → \S+ .* note: \S+ is draining \(weight 0\): no new connection is scheduled there; net\.ipv4\.vs\.conn_reuse_mode=0: a new connection that reuses the source port of one of its connections is sent to it, terminating or not/);
    const { doc } = await traceJson(`${vip}/tcp`, [dir]);
    expect((doc.traces[0].judgement.outcomeCaveats as unknown[]).length).toBe(2);
    expect(doc.traces[0].judgement.outcomeCaveats).toEqual([
      { outcome: 0, caveat: expect.objectContaining({ code: 'draining-real-servers', connReuseMode: '0' }) },
      { outcome: 1, caveat: expect.objectContaining({ code: 'draining-real-servers', connReuseMode: '0' }) },
    ]);
  });
});

describe('a cap on scenarios is an UNKNOWN share with its reason, never a lost outcome', () => {
  it('an IPVS node without its ipset listing (every set match undecided) beside leftovers: the ways past the cap are one UNKNOWN scenario; the REJECT stays', async () => {
    let vip = '';
    // Every kube-proxy shape (load balancers, node ports, external IPs): enough undecided set matches to pass the cap.
    const dir = stage('ipvs', { seed: 3, services: 20, nodes: 3 }, (f, cluster) => {
      vip = cluster.services.find((s) => s.name === 'no-endpoints')!.clusterIP;
      f['ipset-list.txt'] = undefined;
      f['ip-addr.txt'] = undefined;
    });
    const { doc, code } = await traceJson(`${vip}:80/tcp`, [dir]);
    expect(code).toBe(0);
    const t = doc.traces[0] as TraceDoc['traces'][number] & { scenarios: { notFollowed?: number; outcomes: number[] }[]; outcomes: { verdict: string; unknown?: { code: string } }[] };
    const capped = t.scenarios.filter((s) => s.notFollowed !== undefined);
    expect(capped).toHaveLength(1);
    expect(capped[0].notFollowed).toBeGreaterThan(0);
    expect(t.outcomes[capped[0].outcomes[0]]).toMatchObject({ verdict: 'UNKNOWN', unknown: { code: 'too-many-scenarios' } });
    // The virtual server has no real servers: its REJECT is among the outcomes, not dropped at the cap.
    expect(t.outcomes.some((o) => o.verdict === 'REJECT')).toBe(true);
    expect(t.judgement).toMatchObject({ verdict: 'DEPENDS', unknown: { share: null, reasons: [expect.objectContaining({ code: 'scenarios-not-followed', limit: 64 })] } });
    const r = await trace(`${vip}:80/tcp`, [dir]);
    expect(verdictOf(r.out)).toMatch(/verdict depends on \d+ scenarios: .* unknown a share the evidence does not give: more than 64 ways the undecided matches can go: the ways not followed are unknown $/);
    expect(r.out).toMatch(/the ways the trace did not follow \(at least \d+\): unknown/);
  });
});
