/**
 * Runs a suite (one dump, many cases) through the kernel and through kpx: ONE withKernelNode
 * per dump, then for every case: kpx's prediction → N packets → the kernel → compare.
 */
import { cidrContains, formatIp, parseCidr, parseIp } from '../../../src/model/addr.js';
import type { Trace } from '../../../src/trace/types.js';
import { TOPOLOGY, withKernelNode, type KernelNode, type KernelObservation } from '../harness/index.js';
import { compare, kpxTrace, loadKpx, observedSource, originalKey, packetsFor, predictionOf, type Comparison, type KpxNode, type OracleCase, type OracleDump } from './compare.js';
import { sendFromEndpoint } from './hairpin.js';
import type { OracleSuite } from './dumps.js';

export interface CaseResult {
  readonly dump: string;
  readonly case: OracleCase;
  readonly packets: number;
  readonly source: string;
  readonly ms: number;
  readonly trace?: Trace;
  readonly obs?: KernelObservation;
  readonly comparison?: Comparison;
  /** Set when the case could not run (harness or kpx threw). */
  readonly error?: string;
}

export interface SuiteResult {
  readonly dump: OracleDump;
  readonly kpx: KpxNode;
  readonly results: readonly CaseResult[];
  readonly ms: number;
  /** For kpxReads 'kernel-nft-listing': the `nft list ruleset` text kpx was given. */
  readonly listing?: string;
}

/** The source the harness will use (so kpx's prediction, and N, are known before sending). */
export function plannedSource(dump: OracleDump, c: OracleCase, node: KernelNode): string {
  const family = parseIp(c.dst)!.family;
  if (typeof c.from === 'object') return c.from.ip;
  if (c.from === 'external') return TOPOLOGY.external[family];
  const addrs = dump.scenario.nodeAddresses;
  if (c.from === 'node') {
    const a = addrs.find((x) => parseIp(x)?.family === family);
    if (!a) throw new Error(`no IPv${family} node address`);
    return a;
  }
  // 'pod': the harness's rule (podCidr + 0xfffe, or the last host of a small prefix, avoiding targets and node addresses).
  const cidr = (dump.scenario.podCidr ?? '')
    .split(',')
    .map((s) => parseCidr(s.trim()))
    .find((x) => x && x.family === family);
  if (!cidr) throw new Error(`from: 'pod' needs an IPv${family} podCidr`);
  const avoid = new Set([...node.targets.addresses, ...addrs.map((a) => formatIp(parseIp(a)!))]);
  const size = 1n << BigInt((family === 4 ? 32 : 128) - cidr.prefix);
  for (let host = size - 2n < 0xfffen ? size - 2n : 0xfffen; host > 0n; host--) {
    const ip = { family, value: cidr.network + host } as const;
    if (!avoid.has(formatIp(ip)) && cidrContains(cidr, ip)) return formatIp(ip);
  }
  throw new Error('no pod source');
}

/** Run one case on a live kernel node. */
export async function runCase(dump: OracleDump, kpx: KpxNode, node: KernelNode, c: OracleCase): Promise<CaseResult> {
  const t0 = Date.now();
  let packets = c.packets ?? 0;
  let source = '';
  try {
    source = plannedSource(dump, c, node);
    const planned = predictionOf(kpxTrace(kpx, c, source));
    packets = c.packets ?? packetsFor(planned.probs);
    const kc = { proto: c.proto, dst: c.dst, dport: c.dport, packets, ...(c.timeoutMs ? { timeoutMs: c.timeoutMs } : {}), ...(c.clearRecentEachPacket ? { clearRecentEachPacket: true } : {}) };
    const obs = c.hairpin ? await sendFromEndpoint(node, kc, source) : await node.send({ ...kc, from: c.from });
    // The address the kernel really used (from the node: the kernel picks it; read it back).
    source = observedSource(obs, c, dump.scenario.nodeAddresses);
    const trace = kpxTrace(kpx, c, source, obs.packets[0]?.sport);
    const comparison = compare(predictionOf(trace), obs, originalKey(c), c.premise);
    return { dump: dump.name, case: c, packets, source, ms: Date.now() - t0, trace, obs, comparison };
  } catch (e) {
    return { dump: dump.name, case: c, packets, source, ms: Date.now() - t0, error: (e as Error).stack ?? String(e) };
  }
}

/** One kernel node for the whole suite; every case in turn. */
export async function runSuite(suite: OracleSuite, log?: (line: string) => void): Promise<SuiteResult> {
  const t0 = Date.now();
  let kpx = suite.dump.kpxReads ? undefined : await loadKpx(suite.dump);
  let listing: string | undefined;
  const results: CaseResult[] = [];
  await withKernelNode(suite.dump.scenario, async (node) => {
    if (!kpx) {
      listing = node.nftRuleset;
      kpx = await loadKpx(kpxDumpOf(suite.dump, listing));
    }
    // Every port the cases send to, answered from the start (one responder start, not one per case).
    await node.listen(suite.cases.filter((c) => c.proto !== 'sctp' && !c.hairpin).map((c) => c.dport));
    for (const c of suite.cases) {
      const r = await runCase(suite.dump, kpx, node, c);
      results.push(r);
      log?.(describeResult(r));
    }
  });
  return { dump: suite.dump, kpx: kpx!, results, ms: Date.now() - t0, ...(listing !== undefined ? { listing } : {}) };
}

/** The dump as kpx reads it: for 'kernel-nft-listing', only the kernel's `nft list ruleset` text. */
export function kpxDumpOf(dump: OracleDump, listing: string): OracleDump {
  if (dump.kpxReads !== 'kernel-nft-listing') return dump;
  const { nodeAddresses, podCidr } = dump.scenario;
  return { name: dump.name, scenario: { nft: listing, nodeAddresses, ...(podCidr ? { podCidr } : {}) } };
}

export function describeResult(r: CaseResult): string {
  const head = `[${r.dump}] ${r.case.label} (${r.case.proto} ${r.case.dst}:${r.case.dport} from ${r.source || JSON.stringify(r.case.from)}, N=${r.packets}, ${r.ms} ms)`;
  if (r.error) return `${head}\n    ERROR ${r.error}`;
  const c = r.comparison!;
  const sender = Object.entries(r.obs?.senderStatus ?? {}).map(([k, v]) => `${k} ${v}`).join(', ');
  const lines = [`${head}: ${c.ok && !c.premise.length ? 'agree' : 'DISAGREE'}`, `    ${c.summary} | sender: ${sender}`];
  for (const p of [...c.problems, ...c.premise]) lines.push(`    ! ${p}`);
  return lines.join('\n');
}

