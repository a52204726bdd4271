/**
 * The Linux kernel as kpx's test oracle: replay a node's dump in throw-away network
 * namespaces, send real packets at a Service VIP and observe what netfilter did to them
 * (DNAT target, SNAT/masquerade, DROP, REJECT, no match). See README.md beside this file.
 *
 * Topology (per withKernelNode call, deleted afterwards whatever happens):
 *
 *   client ns ("external", also the node's upstream: default route; drops what is not its own)
 *     eth0 198.18.0.2 + external sources ─ veth ─ node ns: eth0 198.18.0.1 + node addresses
 *   node ns (the dump; ip_forward=1): cni0 bridge 198.18.1.1 with ports vpods, vpsrc
 *     vpods ─ veth ─ pods ns: eth0 198.18.1.2 + every DNAT target (responders answer)
 *     vpsrc ─ veth ─ psrc ns: eth0 198.18.1.3 + pod source addresses
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cidrContains, formatIp, parseCidr, parseIp, type Cidr } from '../../../src/model/addr.js';
import { createNetns, deleteNetns, leftoverNetns, type Netns } from '../../helpers/netns.js';
import { parseConntrack, type CtEntry } from './conntrack.js';
import { dnatTargets } from './targets.js';

export { binomialBound, binomialConsistent, chiSquareConsistent, chiSquareSurvival, samplesToDistinguish, DEFAULT_ALPHA } from './stats.js';
export { dnatTargets } from './targets.js';
export { parseConntrack } from './conntrack.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const SENDER = join(HERE, 'sender.mjs');
const RESPONDER = join(HERE, 'responder.mjs');
const SENDER_SCTP = join(HERE, 'sender_sctp.py');

export interface KernelScenario {
  /** iptables-save text for the node (IPv4). */
  iptables?: string;
  /** ip6tables-save text (IPv6). */
  ip6tables?: string;
  /** `ipset save` text, restored BEFORE iptables (rules with -m set need the sets). */
  ipsetSave?: string;
  /** `nft -f` input (nftables mode). Loaded after iptables/ip6tables. */
  nft?: string;
  /** The node's own addresses (so --dst-type LOCAL / fib daddr type local is true for them). */
  nodeAddresses: string[];
  /** Pod CIDR(s), comma-separated for dual stack, e.g. '10.244.0.0/16,fd00:10:244::/64'. */
  podCidr?: string;
}

export type KernelSource = 'external' | 'pod' | 'node' | { ip: string };

export interface KernelCase {
  proto: 'tcp' | 'udp' | 'sctp';
  dst: string;
  dport: number;
  /** external = client ns, pod = psrc ns (an address in podCidr), node = locally generated (OUTPUT path). */
  from: KernelSource;
  /** Distinct source ports, one NEW connection each. */
  packets: number;
  /** How long each packet waits for an answer (default 1000 ms TCP, 700 ms UDP). */
  timeoutMs?: number;
  /**
   * Measure first-packet odds under `-m recent` (session affinity): send one packet at a
   * time and empty every xt_recent table of the node namespace before each. Default false:
   * packets go out in parallel and recent state builds up as it would in reality
   * (tables are always emptied at the start of a case).
   */
  clearRecentEachPacket?: boolean;
  /**
   * Keep the conntrack entries of earlier cases (default false: the table is flushed first), so a
   * test can build up a table from several cases and then change the rules under it.
   */
  keepConntrack?: boolean;
}

export type SenderStatus = 'reply' | 'connected' | 'refused' | 'unreachable' | 'blocked' | 'timeout' | 'error';

export interface PacketResult {
  sport: number;
  /** 'ip:port' after DNAT (original dst when not NATed), 'DROP' or 'REJECT'. */
  outcome: string;
  status: SenderStatus;
  /** Source address the endpoint saw (conntrack reply dst) when SNATed/masqueraded. */
  snat?: string;
  /** Responder's answer: '<local ip> <local port> <remote ip> <remote port>'. */
  reply?: string;
  code?: string;
}

export interface KernelObservation {
  total: number;
  /** outcome key → count; keys 'ip:port' ([v6]:port), 'DROP', 'REJECT'. */
  outcomes: Record<string, number>;
  /** outcome key → how many of them were SNATed/masqueraded (conntrack reply dst ≠ orig src). */
  masqueraded: Record<string, number>;
  /** outcome key → the distinct addresses seen as SNAT source. */
  snatTo: Record<string, string[]>;
  /** Cross-check from the responders: 'ip:port' that actually answered → count. */
  echoed: Record<string, number>;
  /** What the sender saw, per status. */
  senderStatus: Record<string, number>;
  packets: PacketResult[];
  /** The source address used ('' when the kernel chose it: from 'node'). */
  source: string;
  /** conntrack -L text for debugging. */
  raw: string;
}

export interface KernelNode {
  send(c: KernelCase): Promise<KernelObservation>;
  /** Answer on these ports from now on (send() adds its own port; a suite names all of its ports at once, which is faster). */
  listen(ports: readonly number[]): Promise<void>;
  /** Namespace names (for debugging: `ip netns exec NAME iptables-save`). */
  readonly namespaces: { node: string; client: string; pods: string; psrc: string };
  /** DNAT target addresses/ports found in the dump (owned by the pods namespace). */
  readonly targets: { addresses: string[]; ports: number[] };
  /** Run a command in the node namespace (e.g. `nft list ruleset`). */
  nodeExec(cmd: string, args: readonly string[], input?: string): string;
  /**
   * `nft list ruleset` of the node namespace right after the dump was loaded (before the
   * harness's own observer table was added): what the kernel prints back, i.e. what a user
   * would give kpx. With the nf_tables backend of iptables this includes iptables' tables too.
   */
  readonly nftRuleset: string;
  /**
   * How the harness makes the kernel's answers observable on this machine (for reports):
   * the CPU the senders are pinned to and the CPUs RPS moves the node's receive work to, or
   * why that was not possible.
   */
  readonly cpus: CpuPlan;
}

/**
 * Where senders run and where the node's receive work runs. A REJECT's ICMP error travels
 * veth → netif_rx → the per-CPU backlog, which the SENDER's CPU processes in the softirq run
 * at the end of its own connect()/send() syscall — i.e. while connect() still owns the TCP
 * socket's lock. tcp_v6_err then only counts TcpExtLockDroppedIcmps and keeps the error as a
 * soft error: the sender sees nothing until the SYN is retransmitted after the 1 s initial
 * RTO. (tcp_v4_err on this kernel reports the same situation at once, hence IPv4 worked.)
 * Pinning the senders to one CPU and steering the node's receive queues (RPS) to the others
 * moves the node's work — and the ICMP error — off the sender's syscall.
 */
export interface CpuPlan {
  /** CPU the senders are pinned to (taskset), when pinning is possible. */
  readonly sender?: number;
  /** RPS mask (hex) written to the node's rx queues. */
  readonly rpsMask?: string;
  /** Why there is no plan (one CPU, no taskset): then TCP over IPv6 waits for the SYN retransmit. */
  readonly fallback?: string;
}

/** Transfer networks: 198.18.0.0/15 (RFC 2544 benchmarking) and a ULA, unlikely in dumps. */
export const TOPOLOGY = {
  nodeClientLink: { 4: '198.18.0.1', 6: 'fd6b:7078::1' },
  clientLink: { 4: '198.18.0.2', 6: 'fd6b:7078::2' },
  /** cni0 on the node: the address masquerade picks for packets towards the pods. */
  nodePodsLink: { 4: '198.18.1.1', 6: 'fd6b:7078:1::1' },
  podsLink: { 4: '198.18.1.2', 6: 'fd6b:7078:1::2' },
  psrcLink: { 4: '198.18.1.3', 6: 'fd6b:7078:1::3' },
  /** Source of from: 'external' (TEST-NET-3 / documentation prefix). */
  external: { 4: '203.0.113.10', 6: '2001:db8:6b70::10' },
} as const;

const FIRST_SPORT = 20000;
const LAST_SPORT = 59999;

/** Processes this module spawned and has not seen exit (for leftovers()). */
const live = new Set<ChildProcess>();
/** Namespaces created by this module and not yet deleted. */
const ownNamespaces = new Set<string>();

function fam(ip: string): 4 | 6 {
  const p = parseIp(ip);
  if (!p) throw new Error(`not an IP address: ${ip}`);
  return p.family;
}

/** Canonical text of an address (IPv6 compressed lower-case), as conntrack prints it. */
function canon(ip: string): string {
  const p = parseIp(ip);
  return p ? formatIp(p) : ip;
}

export function outcomeKey(ip: string, port: number | undefined): string {
  const c = canon(ip);
  const host = c.includes(':') ? `[${c}]` : c;
  return port === undefined ? host : `${host}:${port}`;
}

function prefixLen(ip: string): string {
  return fam(ip) === 4 ? `${ip}/32` : `${ip}/128`;
}

function sh(ns: Netns, cmd: string, ...args: string[]): string {
  return ns.exec(cmd, args);
}

function sysctls(ns: Netns, settings: Record<string, string>): void {
  // Written from inside the namespace: only namespaced sysctls exist there as files we touch.
  // One shell for all of them (a process start per setting added up over a suite's nodes).
  const script = Object.entries(settings).map(([k, v]) => {
    const path = `/proc/sys/${k.replace(/\./g, '/')}`;
    return `{ test -e ${path} && echo ${v} > ${path} || true; }`;
  });
  ns.exec('sh', ['-c', script.join('; ')]);
}

/**
 * The node's conntrack table is read once, after the last packet of a case: its entries are the
 * observation (which endpoint, masqueraded or not). With the kernel's default timeouts an entry
 * that has seen its answer goes after 120 s (TCP TIME_WAIT, CLOSE 10 s), 30 s (UDP), 3–10 s
 * (SCTP before the association is up): on a loaded machine a case of several hundred packets
 * sent one at a time has lasted longer, its first packets were then missing from the table and
 * counted as DROP. An hour each, in the node namespace only (these sysctls are per namespace since
 * Linux 4.x; the host keeps its own); every case starts from an emptied table (conntrack -F).
 */
const CONNTRACK_KEEP: Record<string, string> = Object.fromEntries(
  [
    'tcp_timeout_syn_sent', 'tcp_timeout_syn_recv', 'tcp_timeout_established', 'tcp_timeout_fin_wait', 'tcp_timeout_close_wait',
    'tcp_timeout_last_ack', 'tcp_timeout_time_wait', 'tcp_timeout_close', 'tcp_timeout_unacknowledged',
    'udp_timeout', 'udp_timeout_stream', 'icmp_timeout', 'icmpv6_timeout',
    'sctp_timeout_closed', 'sctp_timeout_cookie_wait', 'sctp_timeout_cookie_echoed', 'sctp_timeout_established',
    'sctp_timeout_shutdown_sent', 'sctp_timeout_shutdown_recd', 'sctp_timeout_shutdown_ack_sent',
  ].map((k) => [`net.netfilter.nf_conntrack_${k}`, '3600']),
);

function addAddr(ns: Netns, dev: string, ip: string, plen?: number): void {
  const cidr = plen === undefined ? prefixLen(ip) : `${ip}/${plen}`;
  const args = ['addr', 'replace', cidr, 'dev', dev];
  if (fam(ip) === 6) args.push('nodad');
  ns.exec('ip', args);
}

function route(ns: Netns, ip: string, ...rest: string[]): void {
  ns.exec('ip', [...(fam(ip) === 6 ? ['-6'] : []), 'route', 'replace', prefixLen(ip), ...rest]);
}

let cpuPlanCache: CpuPlan | undefined;

/** The CPUs this process may use (taskset -pc), split into the sender's and the node's. */
export function cpuPlan(): CpuPlan {
  if (cpuPlanCache) return cpuPlanCache;
  const r = spawnSync('taskset', ['-pc', String(process.pid)], { encoding: 'utf8' });
  const list = r.status === 0 ? /list:\s*([\d,\-\s]+)$/m.exec(r.stdout)?.[1] : undefined;
  const cpus: number[] = [];
  for (const part of (list ?? '').split(',').map((x) => x.trim()).filter(Boolean)) {
    const [a, b] = part.split('-').map(Number);
    for (let c = a; c <= (b ?? a); c++) cpus.push(c);
  }
  if (r.status !== 0) cpuPlanCache = { fallback: `taskset unavailable (${(r.stderr || String(r.error)).trim()})` };
  else if (cpus.length < 2) cpuPlanCache = { fallback: `only CPU ${cpus.join(',') || '?'} available` };
  else {
    let mask = 0n;
    for (const c of cpus.slice(1)) mask |= 1n << BigInt(c);
    cpuPlanCache = { sender: cpus[0], rpsMask: mask.toString(16) };
  }
  return cpuPlanCache;
}

/** `ip netns exec NS program…`, pinned to the sender CPU when there is one. */
function nsCommand(ns: string, program: string[], pin: boolean): [string, string[]] {
  const plan = cpuPlan();
  const base = ['netns', 'exec', ns, ...program];
  return pin && plan.sender !== undefined ? ['taskset', ['-c', String(plan.sender), 'ip', ...base]] : ['ip', base];
}

function spawnTracked(cmd: string, args: string[]): ChildProcess {
  const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(p);
  p.on('exit', () => live.delete(p));
  p.on('error', () => live.delete(p));
  return p;
}

/** Start a responder in ns; resolves with its process once every socket is bound. */
function startResponder(ns: Netns, addresses: string[], ports: number[]): Promise<ChildProcess> {
  const p = spawnTracked(...nsCommand(ns.name, [process.execPath, RESPONDER, JSON.stringify({ addresses, ports })], false));
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`responder in ${ns.name} not ready: ${err}`)), 10_000);
    p.stderr!.on('data', (d) => (err += String(d)));
    p.stdout!.on('data', (d) => {
      out += String(d);
      const line = out.split('\n').find((l) => l.startsWith('ready'));
      if (line) {
        clearTimeout(timer);
        const failures = JSON.parse(line.slice(6)) as string[];
        if (failures.length) {
          p.kill('SIGKILL');
          reject(new Error(`responder in ${ns.name} could not bind: ${failures.join(', ')}`));
        } else resolve(p);
      }
    });
    p.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`responder in ${ns.name} exited (${code}): ${err}`));
    });
  });
}

function runSender(ns: Netns, spec: object, limitMs: number, program: string[]): Promise<{ results: Omit<PacketResult, 'outcome'>[] }> {
  const p = spawnTracked(...nsCommand(ns.name, [...program, JSON.stringify(spec)], true));
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      p.kill('SIGKILL');
      reject(new Error(`sender in ${ns.name} did not finish within ${limitMs} ms`));
    }, limitMs);
    p.stdout!.on('data', (d) => (out += String(d)));
    p.stderr!.on('data', (d) => (err += String(d)));
    p.on('exit', (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`sender in ${ns.name} failed (${code}): ${err}`));
      try {
        resolve(JSON.parse(out.trim().split('\n').pop()!));
      } catch (e) {
        reject(new Error(`sender output unreadable: ${out} ${err} (${e})`));
      }
    });
  });
}

function kill(p: ChildProcess): void {
  if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
}

async function waitExit(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const t = setTimeout(resolve, 2000);
    p.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
  });
}

function podSource(cidrs: Cidr[], family: 4 | 6, avoid: Set<string>): string {
  const cidr = cidrs.find((c) => c.family === family);
  if (!cidr) throw new Error(`from: 'pod' needs an IPv${family} podCidr in the scenario`);
  const bits = family === 4 ? 32 : 128;
  const size = 1n << BigInt(bits - cidr.prefix);
  let host = size - 2n < 0xfffen ? size - 2n : 0xfffen;
  for (; host > 0n; host--) {
    const ip = formatIp({ family, value: cidr.network + host });
    if (!avoid.has(ip)) return ip;
  }
  throw new Error(`no free pod source address in ${formatIp({ family, value: cidr.network })}/${cidr.prefix}`);
}

class Node implements KernelNode {
  readonly namespaces: KernelNode['namespaces'];
  readonly targets: { addresses: string[]; ports: number[] };
  private readonly nodeAddrs: Set<string>;
  private readonly cidrs: Cidr[];
  private readonly procs: ChildProcess[] = [];
  private anchor?: ChildProcess;
  private readonly listening = new Set<number>();
  private readonly sources = new Set<string>();
  private nextSport = FIRST_SPORT;
  private hairpin = false;
  nftRuleset = '';
  readonly cpus: CpuPlan = cpuPlan();

  constructor(
    private readonly scenario: KernelScenario,
    private readonly ns: { node: Netns; client: Netns; pods: Netns; psrc: Netns },
  ) {
    this.namespaces = { node: ns.node.name, client: ns.client.name, pods: ns.pods.name, psrc: ns.psrc.name };
    this.nodeAddrs = new Set(scenario.nodeAddresses.map(canon));
    this.cidrs = (scenario.podCidr ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .map((s) => {
        const c = parseCidr(s);
        if (!c) throw new Error(`bad podCidr ${s}`);
        return c;
      });
    const t = dnatTargets([scenario.iptables, scenario.ip6tables, scenario.nft]);
    this.targets = { addresses: t.addresses.map(canon), ports: t.ports };
  }

  nodeExec(cmd: string, args: readonly string[], input?: string): string {
    return this.ns.node.exec(cmd, args, input);
  }

  private podTargets(): string[] {
    return this.targets.addresses.filter((a) => !this.nodeAddrs.has(a));
  }

  async setup(): Promise<void> {
    const { node, client, pods, psrc } = this.ns;
    for (const n of [node, client, pods, psrc]) {
      sysctls(n, {
        'net.ipv6.conf.all.accept_dad': '0',
        'net.ipv6.conf.default.accept_dad': '0',
        'net.ipv4.conf.all.rp_filter': '0',
        'net.ipv4.conf.default.rp_filter': '0',
        // ICMP errors (REJECT answers on the node; "no SCTP here" from the pods) must not be
        // rate limited. These sysctls are per namespace: the host is untouched.
        'net.ipv4.icmp_ratelimit': '0',
        'net.ipv4.icmp_msgs_per_sec': '1000000',
        'net.ipv4.icmp_msgs_burst': '1000000',
        'net.ipv6.icmp.ratelimit': '0',
      });
    }
    sysctls(node, {
      'net.ipv4.ip_forward': '1',
      'net.ipv6.conf.all.forwarding': '1',
      'net.ipv4.conf.all.send_redirects': '0',
      'net.ipv4.conf.default.send_redirects': '0',
    });
    // Links are created inside the namespaces: nothing appears on the host, even briefly.
    sh(node, 'ip', 'link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', client.name);
    sh(node, 'ip', 'link', 'add', 'cni0', 'type', 'bridge');
    sh(node, 'ip', 'link', 'add', 'vpods', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', pods.name);
    sh(node, 'ip', 'link', 'add', 'vpsrc', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', psrc.name);
    sh(node, 'ip', 'link', 'set', 'vpods', 'master', 'cni0');
    sh(node, 'ip', 'link', 'set', 'vpsrc', 'master', 'cni0');
    for (const dev of ['eth0', 'cni0', 'vpods', 'vpsrc']) sh(node, 'ip', 'link', 'set', dev, 'up');
    for (const n of [client, pods, psrc]) sh(n, 'ip', 'link', 'set', 'eth0', 'up');
    // The node's receive work (and so every ICMP error / RST it sends back) runs on other
    // CPUs than the senders: see CpuPlan. `ip netns exec` mounts this namespace's own sysfs.
    if (this.cpus.rpsMask) {
      const devs = ['lo', 'eth0', 'vpods', 'vpsrc'].map((d) => `/sys/class/net/${d}/queues/rx-0/rps_cpus`);
      node.exec('sh', ['-c', devs.map((f) => `echo ${this.cpus.rpsMask} > ${f}`).join(' && ')]);
    }

    const T = TOPOLOGY;
    for (const f of [4, 6] as const) {
      const plen = f === 4 ? 24 : 64;
      addAddr(node, 'eth0', T.nodeClientLink[f], plen);
      addAddr(client, 'eth0', T.clientLink[f], plen);
      addAddr(node, 'cni0', T.nodePodsLink[f], plen);
      addAddr(pods, 'eth0', T.podsLink[f], plen);
      addAddr(psrc, 'eth0', T.psrcLink[f], plen);
      const v = f === 6 ? ['-6'] : [];
      sh(client, 'ip', ...v, 'route', 'replace', 'default', 'via', T.nodeClientLink[f]);
      sh(pods, 'ip', ...v, 'route', 'replace', 'default', 'via', T.nodePodsLink[f]);
      sh(psrc, 'ip', ...v, 'route', 'replace', 'default', 'via', T.nodePodsLink[f]);
    }
    for (const a of this.nodeAddrs) addAddr(node, 'eth0', a);
    // Unclaimed traffic (a VIP no rule matched) leaves by the default route to the client
    // namespace (the "upstream"), so its conntrack entry is confirmed and seen without NAT;
    // the client silently drops whatever is not addressed to it (no ICMP, no loop).
    for (const f of [4, 6] as const) {
      const mine = [...this.nodeAddrs].find((a) => fam(a) === f);
      const v = f === 6 ? ['-6'] : [];
      sh(node, 'ip', ...v, 'route', 'replace', 'default', 'via', T.clientLink[f], 'dev', 'eth0', ...(mine ? ['src', mine] : []));
    }
    const up = client.run('nft', ['-f', '-'], [
      'table inet kpxt_upstream {',
      '  chain pre { type filter hook prerouting priority -500; policy accept; fib daddr type unicast drop; }',
      '}',
      '',
    ].join('\n'));
    if (up.status !== 0) throw new Error(`client upstream drop table: ${up.stderr}`);
    for (const c of this.cidrs) {
      const text = `${formatIp({ family: c.family, value: c.network })}/${c.prefix}`;
      sh(node, 'ip', ...(c.family === 6 ? ['-6'] : []), 'route', 'replace', text, 'dev', 'cni0');
    }
    for (const a of this.podTargets()) {
      addAddr(pods, 'eth0', a);
      route(node, a, 'dev', 'cni0');
    }

    // The dump: ipset first (rules refer to sets), then iptables, ip6tables, nft.
    const load = (what: string, cmd: string, args: string[], text: string | undefined) => {
      if (!text) return;
      const r = node.run(cmd, args, text.endsWith('\n') ? text : text + '\n');
      if (r.status !== 0) throw new Error(`${what} failed in ${node.name}: ${r.stderr.trim()}`);
    };
    load('ipset restore', 'ipset', ['restore'], this.scenario.ipsetSave);
    load('iptables-restore', 'iptables-restore', [], this.scenario.iptables);
    load('ip6tables-restore', 'ip6tables-restore', [], this.scenario.ip6tables);
    load('nft -f', 'nft', ['-f', '-'], this.scenario.nft);
    // What the kernel prints back (before the observer below exists): what users give kpx.
    this.nftRuleset = node.exec('nft', ['list', 'ruleset']);
    // Make sure conntrack runs in this namespace even when the dump has no NAT/ct rule
    // (a `ct` expression registers it); the chains only count, they decide nothing.
    load('nft -f (observer)', 'nft', ['-f', '-'], [
      'table inet kpxt_observe {',
      '  chain pre { type filter hook prerouting priority 0; ct state new counter; }',
      '  chain out { type filter hook output priority 0; ct state new counter; }',
      '}',
    ].join('\n'));
    // Now that conntrack runs here (its sysctls exist once it does): keep entries for the case.
    sysctls(node, CONNTRACK_KEEP);

    const ports = this.targets.ports;
    this.anchor = await startResponder(node, [...this.nodeAddrs], ports);
    this.procs.push(this.anchor);
    if (ports.length) this.procs.push(await startResponder(pods, this.podTargets(), ports));
    ports.forEach((p) => this.listening.add(p));
  }

  /**
   * Make the responders answer on these ports too (DNAT without a port keeps the original one).
   * One responder per namespace for all of them: a responder is a process to start (~0.2 s
   * quiet, over a second on a busy machine), so a suite names its ports once (listen()).
   */
  async listen(ports: readonly number[]): Promise<void> {
    const fresh = [...new Set(ports)].filter((p) => !this.listening.has(p));
    if (!fresh.length) return;
    fresh.forEach((p) => this.listening.add(p));
    const pt = this.podTargets();
    const started = [startResponder(this.ns.node, [...this.nodeAddrs], fresh), ...(pt.length ? [startResponder(this.ns.pods, pt, fresh)] : [])];
    this.procs.push(...(await Promise.all(started)));
  }

  private source(from: KernelSource, family: 4 | 6): { ns: Netns; ip: string | null } {
    const T = TOPOLOGY;
    if (from === 'node') return { ns: this.ns.node, ip: null };
    if (from === 'external') return this.addSource(this.ns.client, T.external[family]);
    if (from === 'pod') {
      const avoid = new Set([...this.targets.addresses, ...this.nodeAddrs]);
      return this.addSource(this.ns.psrc, podSource(this.cidrs, family, avoid));
    }
    const ip = canon(from.ip);
    if (fam(ip) !== family) throw new Error(`source ${ip} and destination are of different families`);
    if (this.nodeAddrs.has(ip)) return { ns: this.ns.node, ip };
    if (this.targets.addresses.includes(ip)) {
      // An endpoint calling a Service (hairpin): sent from the pods namespace itself.
      this.enableHairpin();
      return { ns: this.ns.pods, ip };
    }
    const p = parseIp(ip)!;
    const inPods = this.cidrs.some((c) => cidrContains(c, p));
    return this.addSource(inPods ? this.ns.psrc : this.ns.client, ip);
  }

  /**
   * Sending from an endpoint address (hairpin). Like a CNI bridge with `hairpinMode`, the
   * pods' bridge port gets `hairpin on`: every endpoint sits behind that one port, so a frame
   * DNATed back to an endpoint must be bridged out of the port it came in by. The pods
   * namespace also gets `accept_local=1` (IPv4): a packet DNATed to ANOTHER endpoint arrives
   * there with a local source address, which the kernel would otherwise drop as a martian (a
   * topology artefact: on a real node the two pods are different hosts). Nothing else changes:
   * both are set once, on first use.
   */
  private enableHairpin(): void {
    if (this.hairpin) return;
    this.hairpin = true;
    this.ns.node.exec('ip', ['link', 'set', 'vpods', 'type', 'bridge_slave', 'hairpin', 'on']);
    sysctls(this.ns.pods, { 'net.ipv4.conf.all.accept_local': '1', 'net.ipv4.conf.default.accept_local': '1', 'net.ipv4.conf.eth0.accept_local': '1' });
  }

  /** nft sets the dataplane fills per packet (`flags dynamic`: kube-proxy's affinity sets), as `flush set` commands. */
  private dynamicSets(): string {
    const out: string[] = [];
    let table = '';
    let set = '';
    for (const line of this.nftRuleset.split('\n')) {
      const t = /^table (\S+) (\S+) \{/.exec(line);
      if (t) table = `${t[1]} ${t[2]}`;
      const s = /^\s+set (\S+) \{/.exec(line);
      if (s) set = s[1];
      else if (/^\s+(map|chain) /.test(line)) set = '';
      if (set && /^\s+flags .*\bdynamic\b/.test(line)) out.push(`flush set ${table} ${set}`);
    }
    return out.length ? out.join('\n') + '\n' : '';
  }

  private addSource(ns: Netns, ip: string): { ns: Netns; ip: string } {
    const key = `${ns.name} ${ip}`;
    if (!this.sources.has(key)) {
      addAddr(ns, 'eth0', ip);
      if (ns === this.ns.client) route(this.ns.node, ip, 'via', TOPOLOGY.clientLink[fam(ip)], 'dev', 'eth0');
      else route(this.ns.node, ip, 'dev', 'cni0');
      this.sources.add(key);
    }
    return { ns, ip };
  }

  private sports(n: number): number[] {
    const out: number[] = [];
    while (out.length < n) {
      if (this.nextSport > LAST_SPORT) this.nextSport = FIRST_SPORT;
      const p = this.nextSport++;
      if (!this.listening.has(p)) out.push(p);
    }
    return out;
  }

  private recentTables(): string[] {
    const dir = `/proc/${this.anchor!.pid}/net/xt_recent`;
    return existsSync(dir) ? readdirSync(dir).map((f) => join(dir, f)) : [];
  }

  async send(c: KernelCase): Promise<KernelObservation> {
    if (c.proto === 'sctp' && spawnSync('python3', ['--version']).status !== 0) {
      throw new Error('sctp: needs python3 (raw-socket SCTP INIT sender; node has no raw sockets, this kernel no SCTP sockets)');
    }
    if (!(c.packets >= 1 && c.packets <= LAST_SPORT - FIRST_SPORT)) throw new Error(`packets out of range: ${c.packets}`);
    const family = fam(c.dst);
    const dst = canon(c.dst);
    const src = this.source(c.from, family);
    if (c.proto !== 'sctp') await this.listen([c.dport]);
    const node = this.ns.node;

    // Fresh state: no conntrack entries, no recent entries from the previous case.
    if (!c.keepConntrack) {
      node.run('conntrack', ['-F']);
      node.run('conntrack', ['-F', '-f', 'ipv6']);
    }
    const recent = this.recentTables();
    for (const f of recent) writeFileSync(f, '/\n');
    const flush = this.dynamicSets();
    if (flush) node.exec('nft', ['-f', '-'], flush);

    // IPv6 TCP: a REJECT's ICMPv6 error can arrive while connect() still holds the socket lock and be kept as a soft error;
    // the SYN retransmit at ~1 s then reports it. Wait past that even when CPU pinning is in place (busy CI machines).
    const tcpDefault = family === 6 ? 2000 : 1000;
    const timeoutMs = c.timeoutMs ?? (c.proto === 'tcp' ? tcpDefault : c.proto === 'udp' ? 700 : 500);
    const ports = this.sports(c.packets);
    const spec = {
      proto: c.proto, family, dst, dport: c.dport, src: src.ip, ports, timeoutMs,
      sequential: !!c.clearRecentEachPacket,
      clear: c.clearRecentEachPacket ? recent : [],
      // nft affinity sets live in the node namespace: emptied by running nft there.
      clearNft: c.clearRecentEachPacket && flush ? { argv: ['ip', 'netns', 'exec', node.name, 'nft', '-f', '-'], input: flush } : null,
    };
    const limit = (c.clearRecentEachPacket ? c.packets * (timeoutMs + 300) : timeoutMs + 1000) + 20_000;
    const { results } = await runSender(src.ns, spec, limit, c.proto === 'sctp' ? ['python3', SENDER_SCTP] : [process.execPath, SENDER]);

    const args = ['-L', '-p', c.proto, ...(family === 6 ? ['-f', 'ipv6'] : [])];
    const raw = node.run('conntrack', args).stdout;
    const bySport = new Map<number, CtEntry>();
    const wanted = new Set(ports);
    for (const e of parseConntrack(raw)) {
      if (e.proto !== c.proto || canon(e.orig.dst) !== dst || e.orig.dport !== c.dport) continue;
      if (e.orig.sport === undefined || !wanted.has(e.orig.sport)) continue;
      if (src.ip && canon(e.orig.src) !== canon(src.ip)) continue;
      bySport.set(e.orig.sport, e);
    }

    const obs: KernelObservation = {
      total: results.length, outcomes: {}, masqueraded: {}, snatTo: {}, echoed: {}, senderStatus: {},
      packets: [], source: src.ip ?? '', raw,
    };
    const inc = (m: Record<string, number>, k: string) => (m[k] = (m[k] ?? 0) + 1);
    for (const r of results) {
      const e = bySport.get(r.sport);
      let outcome: string;
      let snat: string | undefined;
      if (e) {
        outcome = outcomeKey(e.reply.src, e.reply.sport);
        if (canon(e.reply.dst) !== canon(e.orig.src)) snat = canon(e.reply.dst);
      } else {
        // No confirmed entry: something dropped the packet. An ICMP error / RST = REJECT.
        outcome = r.status === 'refused' || r.status === 'unreachable' ? 'REJECT' : 'DROP';
      }
      inc(obs.outcomes, outcome);
      inc(obs.senderStatus, r.status);
      if (snat) {
        inc(obs.masqueraded, outcome);
        const list = (obs.snatTo[outcome] ??= []);
        if (!list.includes(snat)) list.push(snat);
      }
      if (r.status === 'reply' && r.reply) {
        const [lip, lport] = r.reply.split(' ');
        inc(obs.echoed, outcomeKey(lip, Number(lport)));
      }
      obs.packets.push({ ...r, outcome, ...(snat ? { snat } : {}) });
    }
    return obs;
  }

  async teardown(): Promise<void> {
    for (const p of this.procs) kill(p);
    await Promise.all(this.procs.map(waitExit));
  }
}

/**
 * Build the namespaces for scenario, run fn with a KernelNode, and delete everything
 * (processes, namespaces and with them every link) whatever happens.
 */
export async function withKernelNode<T>(scenario: KernelScenario, fn: (node: KernelNode) => Promise<T>): Promise<T> {
  const made: Netns[] = [];
  let node: Node | undefined;
  try {
    const mk = (tag: string) => {
      const n = createNetns(tag);
      made.push(n);
      ownNamespaces.add(n.name);
      return n;
    };
    const ns = { node: mk('node'), client: mk('client'), pods: mk('pods'), psrc: mk('psrc') };
    node = new Node(scenario, ns);
    await node.setup();
    return await fn(node);
  } finally {
    if (node) await node.teardown();
    for (const n of made) {
      deleteNetns(n);
      ownNamespaces.delete(n.name);
    }
    // Anything still running that this module started (a sender cut short by an error).
    const rest = [...live];
    rest.forEach(kill);
    await Promise.all(rest.map(waitExit));
  }
}

/**
 * What the harness left behind: `kpxt-` namespaces of this process, veth/bridge/dummy
 * links on the host that look like ours, processes it spawned that are still alive.
 * Empty when clean.
 */
export function leftovers(): string[] {
  const out: string[] = [];
  for (const n of leftoverNetns()) out.push(`namespace ${n}`);
  for (const n of ownNamespaces) if (!out.includes(`namespace ${n}`)) out.push(`namespace ${n} (not deleted)`);
  const links = spawnSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' }).stdout ?? '';
  for (const l of links.split('\n')) {
    const name = /^\d+:\s+([^:@\s]+)/.exec(l)?.[1];
    if (name && /^(kpx|vpods|vpsrc)/.test(name) && /veth|bridge/.test(l + linkKind(name))) {
      out.push(`host link ${name}`);
    }
  }
  for (const p of live) {
    if (p.pid && existsSync(`/proc/${p.pid}`)) {
      let state = '';
      try {
        state = readFileSync(`/proc/${p.pid}/stat`, 'utf8').split(') ')[1]?.[0] ?? '';
      } catch {
        /* gone meanwhile */
      }
      if (state && state !== 'Z') out.push(`process ${p.pid} (${p.spawnargs.join(' ').slice(0, 80)})`);
    }
  }
  return out;
}

function linkKind(name: string): string {
  const r = spawnSync('ip', ['-d', '-o', 'link', 'show', 'dev', name], { encoding: 'utf8' });
  return r.stdout ?? '';
}
