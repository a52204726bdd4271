/**
 * Hairpin: a pod that is itself an endpoint of the Service it calls. The harness refuses a
 * source that is a DNAT target (those addresses live in its pods namespace), so this sends
 * from the pods namespace directly with the harness's own sender.mjs, and reads the node's
 * conntrack table the way the harness does.
 *
 * Like a CNI bridge with `hairpinMode` (kubelet's hairpin-veth), the pods' bridge port gets
 * `hairpin on`: with br_netfilter the DNATed frame is BRIDGED back out of the port it came
 * in by, which a bridge refuses unless the port is in hairpin mode (every endpoint sits
 * behind the same port here).
 * The pods namespace also gets `accept_local=1` (IPv4): when the packet is DNATed to ANOTHER
 * endpoint in the same namespace, it arrives there with a local source address, which the
 * kernel would otherwise drop as a martian (a test-topology artefact: on a real node the two
 * pods are different hosts). The self outcome needs nothing: kube-proxy masquerades it.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatIp, parseIp } from '../../../src/model/addr.js';
import { outcomeKey, parseConntrack, type KernelCase, type KernelNode, type KernelObservation } from '../harness/index.js';

const SENDER = join(dirname(fileURLToPath(import.meta.url)), '../harness/sender.mjs');
/** Above the harness's range (20000–59999), so the two never collide. */
const FIRST_SPORT = 60001;

const canon = (ip: string) => {
  const p = parseIp(ip);
  return p ? formatIp(p) : ip;
};

/** Send c.packets NEW connections from `src` (a DNAT target) inside the pods namespace. */
export function sendFromEndpoint(node: KernelNode, c: Omit<KernelCase, 'from'>, src: string): KernelObservation {
  if (c.proto === 'sctp') throw new Error('hairpin: tcp/udp only');
  if (c.packets > 65535 - FIRST_SPORT) throw new Error(`hairpin: at most ${65535 - FIRST_SPORT} packets`);
  const pods = node.namespaces.pods;
  const family = parseIp(c.dst)!.family;
  if (!node.targets.addresses.includes(canon(src))) throw new Error(`hairpin: ${src} is not a DNAT target of the dump`);
  const nsExec = (args: string[]) => spawnSync('ip', ['netns', 'exec', pods, ...args], { encoding: 'utf8' });
  for (const dev of ['all', 'default', 'eth0']) nsExec(['sh', '-c', `echo 1 > /proc/sys/net/ipv4/conf/${dev}/accept_local`]);

  node.nodeExec('ip', ['link', 'set', 'vpods', 'type', 'bridge_slave', 'hairpin', 'on']);
  node.nodeExec('sh', ['-c', 'conntrack -F 2>/dev/null; conntrack -F -f ipv6 2>/dev/null; true']);
  const ports = Array.from({ length: c.packets }, (_, i) => FIRST_SPORT + i);
  const timeoutMs = c.timeoutMs ?? (c.proto === 'tcp' ? 1000 : 700);
  const spec = { proto: c.proto, family, dst: canon(c.dst), dport: c.dport, src: canon(src), ports, timeoutMs, sequential: false, clear: [] };
  const r = spawnSync('ip', ['netns', 'exec', pods, process.execPath, SENDER, JSON.stringify(spec)], {
    encoding: 'utf8',
    timeout: timeoutMs + 30_000,
    killSignal: 'SIGKILL',
  });
  if (r.status !== 0) throw new Error(`hairpin sender failed (${r.status ?? r.signal}): ${r.stderr}`);
  const { results } = JSON.parse(r.stdout.trim().split('\n').pop()!) as { results: { sport: number; status: string; reply?: string }[] };

  const raw = node.nodeExec('conntrack', ['-L', '-p', c.proto, ...(family === 6 ? ['-f', 'ipv6'] : [])]);
  const bySport = new Map<number, ReturnType<typeof parseConntrack>[number]>();
  for (const e of parseConntrack(raw)) {
    if (e.proto !== c.proto || canon(e.orig.dst) !== canon(c.dst) || e.orig.dport !== c.dport || canon(e.orig.src) !== canon(src)) continue;
    if (e.orig.sport !== undefined) bySport.set(e.orig.sport, e);
  }
  const obs: KernelObservation = { total: results.length, outcomes: {}, masqueraded: {}, snatTo: {}, echoed: {}, senderStatus: {}, packets: [], source: canon(src), raw };
  const inc = (m: Record<string, number>, k: string) => (m[k] = (m[k] ?? 0) + 1);
  for (const p of results) {
    const e = bySport.get(p.sport);
    let outcome: string;
    let snat: string | undefined;
    if (e) {
      outcome = outcomeKey(e.reply.src, e.reply.sport);
      if (canon(e.reply.dst) !== canon(e.orig.src)) snat = canon(e.reply.dst);
    } else outcome = p.status === 'refused' || p.status === 'unreachable' ? 'REJECT' : 'DROP';
    inc(obs.outcomes, outcome);
    inc(obs.senderStatus, p.status);
    if (snat) {
      inc(obs.masqueraded, outcome);
      const l = (obs.snatTo[outcome] ??= []);
      if (!l.includes(snat)) l.push(snat);
    }
    obs.packets.push({ sport: p.sport, outcome, status: p.status as KernelObservation['packets'][number]['status'], ...(snat ? { snat } : {}), ...(p.reply ? { reply: p.reply } : {}) });
  }
  return obs;
}
