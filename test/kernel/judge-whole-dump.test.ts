/**
 * The judgement's "this dump cannot be a whole iptables-save" against the kernel and its tools
 * (issue 28): a generated dump restored into a network namespace and saved back by the kernel's
 * own iptables-save is judged whole (every Service port as healthy as the generator's truth says);
 * the same dump with one KUBE-SEP chain removed — its balancing rule still jumping to it — is refused
 * by iptables-restore (the kernel cannot hold a jump to a chain that does not exist), and kpx judges
 * it `edited`: the Service partial, REASON dump-not-whole, the missing third an UNKNOWN share.
 */
import { describe, expect, it } from 'vitest';
import { generateCluster, groundTruth, iptablesSave, planPort } from '../../src/generate/index.js';
import { judgeNode } from '../../src/judge/index.js';
import { resolveServices } from '../../src/kube/resolve.js';
import { requireKernel, withNetns } from '../helpers/netns.js';
import { snapshotOf } from '../lint/helpers.js';

const kernel = requireKernel();

describe.skipIf(!kernel)('the judgement of a whole dump, by the kernel', () => {
  const cluster = generateCluster({ seed: 31, services: 8, nodes: 3, shapes: ['kube-dns', 'three-endpoints', 'no-endpoints'] });
  const dump = iptablesSave(cluster);

  it("the kernel's own iptables-save of the dump is judged whole, and every Service port is in the state the truth gives", async () => {
    const saved = await withNetns('judge', (ns) => {
      ns.exec('iptables-restore', [], dump);
      return ns.exec('iptables-save', []);
    });
    const snap = await snapshotOf({ 'iptables-save.txt': saved });
    const node = judgeNode(snap, await resolveServices(snap));
    expect(node.evidence.filter((e) => e.file === 'iptables-save.txt').map((e) => e.kind)).toEqual(node.evidence.filter((e) => e.file === 'iptables-save.txt').map(() => 'whole'));
    expect(node.evidence.length).toBeGreaterThan(1);
    const truth = new Map(groundTruth(cluster).services.map((s) => [`${s.namespace}/${s.name}:${s.portName ?? ''}/${s.protocol}`, s.state]));
    const judged = node.resolution.services.filter((s) => s.namespace !== null).map((s) => [`${s.namespace}/${s.name}:${s.portName ?? ''}/${s.protocol}`, s.state]);
    expect(judged.length).toBe(truth.size);
    for (const [id, state] of judged) expect(state, id as string).toBe(truth.get(id as string));
  });

  it('the dump with a KUBE-SEP chain removed is refused by iptables-restore, and judged not whole (dump-not-whole)', async () => {
    const svc = cluster.services.find((s) => s.name === 'three-endpoints')!;
    const hash = planPort(cluster, svc, svc.ports[0]).hash;
    const ladder = dump.split('\n').find((l) => l.startsWith(`-A KUBE-SVC-${hash} `) && l.includes('0.33333'))!;
    const sep = /-j (KUBE-SEP-[A-Z2-7]{16})/.exec(ladder)![1];
    const edited = dump
      .split('\n')
      .filter((l) => !l.startsWith(`:${sep} `) && !l.startsWith(`-A ${sep} `))
      .join('\n');
    // (Not --test: iptables-nft checks a jump's chain only when the transaction is committed.)
    const refused = await withNetns('judge', (ns) => ns.run('iptables-restore', [], edited));
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(new RegExp(`${sep}|Couldn't load target|does not exist`));
    const snap = await snapshotOf({ 'iptables-save.txt': edited });
    const node = judgeNode(snap, await resolveServices(snap));
    expect(node.evidence.find((e) => e.table === 'nat')).toMatchObject({ kind: 'edited', missing: [expect.objectContaining({ chain: sep })] });
    const s = node.resolution.services.find((x) => x.name === 'three-endpoints')!;
    expect(s.state).toBe('partial');
    expect(node.judgementOf(s)).toMatchObject({ reason: 'dump-not-whole', unknown: { reasons: [expect.objectContaining({ code: 'dump-not-whole', chains: [sep] }), expect.objectContaining({ code: 'endpoint-chains-absent' })] } });
    expect(node.judgementOf(s).unknown!.share).toBeCloseTo(1 / 3, 9);
  });
});
