/**
 * What kube-proxy's own log says, summed up as facts (no sentences: src/render/kube-proxy-account.ts
 * words them). `services` and `trace` cannot answer from a log alone; they say this instead of
 * nothing, and `lint` says it when the log is all it can check.
 */
import type { KubeProxyEvent, KubeProxyLog, KubeProxyModeName } from '../model/kube-proxy.js';
import type { NodeSnapshot } from '../model/snapshot.js';

type Ev<K extends KubeProxyEvent['kind']> = Extract<KubeProxyEvent, { kind: K }>;

export interface SyncFailureSum {
  readonly tool: string;
  readonly family?: 4 | 6;
  readonly count: number;
  readonly first: string;
  readonly last: string;
}

export interface LogAccount {
  readonly file: string;
  readonly entries: number;
  /** The proxier kube-proxy chose last, and its families. */
  readonly proxier?: { readonly mode: KubeProxyModeName; readonly families: readonly (4 | 6)[] };
  readonly syncFailures: readonly SyncFailureSum[];
  readonly fallback?: { readonly requested: string; readonly chosen?: KubeProxyModeName };
  /** The Node name kube-proxy did not find. */
  readonly nodeNotFound?: string;
  readonly nodeIpFallback?: string;
  /** How many times the API server did not answer. */
  readonly apiUnreachable: number;
  readonly exited?: string;
  readonly unitFailed?: string;
  readonly hostMissing: readonly ('br-netfilter' | 'conntrack-tool')[];
  readonly configWarnings: number;
  /** Entries other components wrote into the same log (k3s, rke2). */
  readonly otherComponents: number;
  /** Lines the terminal cut: the ends of their messages are lost. */
  readonly cutLines: number;
}

const of = <K extends KubeProxyEvent['kind']>(log: KubeProxyLog, kind: K): Ev<K>[] => log.events.filter((e): e is Ev<K> => e.kind === kind);
const when = (e: KubeProxyEvent) => e.at.wallTime ?? e.at.time;

function syncSums(log: KubeProxyLog): SyncFailureSum[] {
  const by = new Map<string, Ev<'sync-failed'>[]>();
  for (const e of of(log, 'sync-failed')) {
    const k = `${e.tool}/${e.family ?? ''}`;
    by.set(k, [...(by.get(k) ?? []), e]);
  }
  return [...by.values()].map((fails) => ({ tool: fails[0].tool, ...(fails[0].family !== undefined ? { family: fails[0].family } : {}), count: fails.length, first: when(fails[0]), last: when(fails[fails.length - 1]) }));
}

export function logAccount(log: KubeProxyLog): LogAccount {
  const proxiers = of(log, 'proxier');
  const fb = of(log, 'mode-fallback')[0];
  const notFound = of(log, 'node-lookup-failed').find((e) => e.notFound && e.node !== undefined);
  const apiErrors = of(log, 'api-unreachable').length + of(log, 'node-lookup-failed').filter((e) => e.apiError).length;
  const exits = of(log, 'exited');
  const unit = of(log, 'unit-state').find((u) => u.state === 'failed' || u.state === 'start-refused' || u.state === 'exited');
  const last = proxiers[proxiers.length - 1];
  return {
    file: log.file,
    entries: log.records,
    ...(last ? { proxier: { mode: last.mode, families: last.families } } : {}),
    syncFailures: syncSums(log),
    ...(fb ? { fallback: { requested: fb.requested, ...(proxiers.find((p) => p.at.line > fb.at.line) ? { chosen: proxiers.find((p) => p.at.line > fb.at.line)!.mode } : {}) } } : {}),
    ...(notFound?.node ? { nodeNotFound: notFound.node } : {}),
    ...(of(log, 'node-ip-fallback')[0] ? { nodeIpFallback: of(log, 'node-ip-fallback')[0].ip } : {}),
    apiUnreachable: apiErrors,
    ...(exits.length ? { exited: exits[exits.length - 1].reason } : {}),
    ...(unit ? { unitFailed: unit.state } : {}),
    hostMissing: [...new Set(of(log, 'host-missing').map((e) => e.what))],
    configWarnings: of(log, 'config-warning').length,
    otherComponents: log.otherComponents ?? 0,
    cutLines: log.events.filter((e) => e.at.cutAt !== undefined).length,
  };
}

/** Every kube-proxy log in the evidence, summed up. */
export function logAccounts(snapshot: NodeSnapshot): LogAccount[] {
  return (snapshot.kubeProxy?.logs ?? []).map(logAccount);
}
