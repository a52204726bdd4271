/**
 * kube-proxy's sync health, from its log: when its syncs fail (the tool refuses the whole
 * transaction), the rules in the dumps are those of the last good sync — maybe stale — since the
 * first failure. The refused payload line and its Service when the log holds the payload.
 */
import type { KubeProxyEvent, KubeProxyLog, RestorePayload } from '../model/kube-proxy.js';
import { syncFailures } from '../model/kube-proxy.js';
import type { Rule } from '../model/netfilter.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { resolveIptables } from '../kube/resolve-iptables.js';
import { parseServiceComment } from '../kube/comments.js';
import { servicePortName } from '../kube/hash.js';
import type { Resolution } from '../kube/types.js';
import type { StaleRules } from './types.js';

type SyncFailed = Extract<KubeProxyEvent, { kind: 'sync-failed' }>;

/** The rule at payload line n and the Service it belongs to: by resolving the payload, then the node's dumps, then its comment. */
export function payloadLineOwner(snapshot: NodeSnapshot, resolution: Resolution, payload: RestorePayload, n: number): { rule?: Rule; text: string; service?: string } {
  const text = payload.lines[n - 1] ?? '';
  const rule = payload.ruleset.tables.flatMap((t) => t.chains.flatMap((c) => c.rules)).find((r) => r.line === n);
  if (!rule) return { text };
  const label = (s: { namespace: string | null; name: string | null; portName: string | null; id: string }) => (s.namespace !== null && s.name !== null ? servicePortName(s.namespace, s.name, s.portName) : s.id);
  // The payload alone: a full sync holds KUBE-SERVICES and the Service's chains.
  const own = resolveIptables({ ...snapshot, rulesets: [payload.ruleset], ipvs: [], nft: [] });
  const viaPayload = own.services.find((s) => Object.values(s.chains).includes(rule.chain));
  if (viaPayload) return { rule, text, service: label(viaPayload) };
  // A partial sync writes only changed chains: the node's dumps may name the chain's Service.
  const viaDumps = resolution.services.find((s) => Object.values(s.chains).includes(rule.chain));
  if (viaDumps) return { rule, text, service: label(viaDumps) };
  const c = rule.comment !== undefined ? parseServiceComment(rule.comment) : undefined;
  return c ? { rule, text, service: servicePortName(c.namespace, c.name, c.portName) } : { rule, text };
}

/** The failures of one tool in one log, and the failure whose payload holds the named line (it says the most). */
export function failuresByTool(log: KubeProxyLog): Map<string, SyncFailed[]> {
  const byTool = new Map<string, SyncFailed[]>();
  for (const e of syncFailures(log)) {
    const list = byTool.get(e.tool) ?? [];
    list.push(e);
    byTool.set(e.tool, list);
  }
  return byTool;
}

export function withPayload(fails: readonly SyncFailed[]): SyncFailed | undefined {
  return [...fails].reverse().find((f) => f.payload && f.failingLine !== undefined && f.payload.lines[f.failingLine - 1] !== undefined);
}

const when = (f: SyncFailed) => f.at.wallTime ?? f.at.time;

/** The first given log whose syncs fail: since when, how often, and the payload line refused. */
export function staleRules(snapshot: NodeSnapshot, resolution: Resolution): StaleRules | undefined {
  for (const log of snapshot.kubeProxy?.logs ?? []) {
    for (const [tool, fails] of failuresByTool(log)) {
      const first = fails[0];
      const last = fails[fails.length - 1];
      const base: StaleRules = { file: log.file, line: first.at.line, tool, count: fails.length, since: when(first), last: when(last) };
      const w = withPayload(fails);
      if (w?.payload && w.failingLine !== undefined) {
        const target = w.rejected ? w.rejected.line : w.failingLine;
        const owner = payloadLineOwner(snapshot, resolution, w.payload, target);
        const why = w.rejected?.how === 'missing-chain' || w.rejected?.how === 'unknown-option' ? w.rejected.how : undefined;
        return {
          ...base,
          refused: { line: target, text: owner.text.trim(), ...(owner.service ? { service: owner.service } : {}), ...(why ? { why } : {}), ...(w.rejected?.name ? { name: w.rejected.name } : {}) },
        };
      }
      const named = [...new Set(fails.map((f) => f.failingLine).filter((n): n is number => n !== undefined))];
      const latest = [...fails].reverse().find((f) => f.failingLine !== undefined)?.failingLine;
      return latest !== undefined ? { ...base, refused: { line: latest, ...(named.length > 1 ? { named } : {}) } } : base;
    }
  }
  return undefined;
}
