/** Text rendering of a SnapshotDiff (the JSON form is the SnapshotDiff itself). */
import type { Colors } from '../colors.js';
import { printable, appendAll } from '../../source/index.js';
import type { FieldChange, ServiceSummary, SnapshotDiff, UnitChange, EndpointChange, OneSidedEvidence, ServiceChange } from '../../diff/index.js';
import { terminalText } from '../colors.js';

function value(v: unknown): string {
  if (v === null || v === undefined) return '-';
  if (Array.isArray(v)) return v.length ? v.join(', ') : '[]';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function describe(s: ServiceSummary): string {
  const vip = s.clusterIP ? `${s.clusterIP.includes(':') ? `[${s.clusterIP}]` : s.clusterIP}:${s.port}` : `port ${s.port}`;
  return `${vip}${s.nodePort !== null ? ` nodePort ${s.nodePort}` : ''}  ${s.state}, ${s.endpoints} endpoint${s.endpoints === 1 ? '' : 's'} (${s.mode})`;
}

function field(f: FieldChange): string {
  return `${f.field}: ${value(f.old)} → ${value(f.new)}`;
}

export interface DiffRenderOptions {
  /** At most this many rules listed per chain (default 20). */
  readonly maxRules?: number;
}

export function renderDiffText(d: SnapshotDiff, c: Colors, opts: DiffRenderOptions = {}): string {
  const max = opts.maxRules ?? 20;
  const out: string[] = [];
  const svc = d.services;
  if (d.modes) {
    // Said once: the proxy mode changed; the Services are still compared, by what both modes show.
    out.push(c.bold(`Proxy mode: ${d.modes.old.join('+')} → ${d.modes.new.join('+')} (not part of a Service's identity: Services compared by what both modes' dumps show)`));
    for (const n of d.modes.notCompared) out.push(c.dim(`  not compared: ${n.what} — ${n.why}`));
  }
  if (d.evidence) appendAll(out, evidenceLines(d.evidence, c));
  out.push(
    c.bold(
      `Services: ${svc.added.length} added, ${svc.removed.length} removed, ${svc.changed.length} changed, ${svc.unchanged} unchanged` +
        ` (${d.old.name}: ${d.old.servicePorts} Service ports → ${d.new.name}: ${d.new.servicePorts})`,
    ),
  );
  for (const s of svc.added) out.push(c.green(`+ ${printable(s.key, 160)}  ${describe(s)}`));
  for (const s of svc.removed) out.push(c.red(`- ${printable(s.key, 160)}  ${describe(s)}`));
  for (const ch of svc.changed) {
    out.push(c.yellow(`~ ${printable(ch.key, 160)}`));
    for (const f of ch.fields) out.push(`    ${printable(field(f), 300)}`);
    for (const e of ch.endpointsAdded) out.push(c.green(`    + endpoint ${e.address}${e.local === true ? ' (local)' : ''}`));
    for (const e of ch.endpointsRemoved) out.push(c.red(`    - endpoint ${e.address}${e.local === true ? ' (local)' : ''}`));
    for (const e of ch.endpointsChanged) if (e.field !== 'share') out.push(`    endpoint ${e.address} ${e.field}: ${value(e.old)} → ${value(e.new)}`);
    appendAll(out, shareLines(ch));
  }
  const r = d.rules;
  out.push('');
  const ex = r.explained;
  out.push(
    c.bold(`Rules: ${r.unexplained.length === 0 ? 'no changes' : `${r.unexplained.length} chain${r.unexplained.length === 1 ? '' : 's'}/set${r.unexplained.length === 1 ? '' : 's'} with changes`} not explained by the Service changes`) +
      (ex.added + ex.removed + ex.moved ? c.dim(` (${ex.added} added, ${ex.removed} removed, ${ex.moved} moved rules/members belong to the Services above)`) : ''),
  );
  for (const u of r.unexplained) appendAll(out, unitLines(u, c, max));
  if (r.proxyRules) out.push(c.dim(`kube-proxy's own rules differ with the mode (${r.proxyRules.old} old, ${r.proxyRules.new} new rules/members/virtual servers): not compared one by one`));
  for (const o of r.oneSided ?? []) {
    out.push(c.dim(`${o.kind.split('-')[0]} rules only in the ${o.side} dumps (${o.items} in ${o.units} chain${o.units === 1 ? '' : 's'}/set${o.units === 1 ? '' : 's'}): the other side has no such dump, so not compared`));
  }
  return terminalText(out.join('\n') + '\n', c);
}

function unitLines(u: UnitChange, c: Colors, max: number): string[] {
  const out: string[] = [];
  const name = printable(u.unit, 200);
  out.push(u.status === 'added' ? c.green(`+ ${name} (new)`) : u.status === 'removed' ? c.red(`- ${name} (gone)`) : c.yellow(`~ ${name}`));
  if (u.policy) out.push(`    policy: ${u.policy.old ?? '-'} → ${u.policy.new ?? '-'}`);
  const list = (sign: string, xs: UnitChange['added'], color: (s: string) => string, side: string) => {
    for (const x of xs.slice(0, max)) out.push(color(`    ${sign} ${printable(x.text, 240)}`) + c.dim(`  (${side} ${printable(x.file, 80)}:${x.line})`));
    if (xs.length > max) out.push(c.dim(`    … ${xs.length - max} more ${sign === '+' ? 'added' : sign === '-' ? 'removed' : 'moved'}`));
  };
  list('-', u.removed, c.red, 'old');
  list('+', u.added, c.green, 'new');
  list('↕', u.moved, (s) => s, 'new');
  return out;
}

const pct = (p: unknown) => (typeof p === 'number' ? `${(p * 100).toFixed(1).replace(/\.0$/, '')}%` : '-');

/**
 * The shares that moved, grouped by move: `share 33.3% → 50%: 10.244.1.2:80, 10.244.2.3:80`.
 * When endpoints came or went the others' shares move with the count; the line says so.
 */
function shareLines(ch: ServiceChange): string[] {
  const moves = new Map<string, EndpointChange[]>();
  for (const e of ch.endpointsChanged) {
    if (e.field !== 'share') continue;
    const k = `${pct(e.old)} → ${pct(e.new)}`;
    moves.set(k, [...(moves.get(k) ?? []), e]);
  }
  const why = ch.endpointsAdded.length + ch.endpointsRemoved.length > 0 ? ` (the endpoints that stay, as ${ch.old.endpoints} → ${ch.new.endpoints} endpoints share the traffic)` : '';
  return [...moves].map(([move, es]) => `    share ${move}: ${es.map((e) => e.address).join(', ')}${why}`);
}

const EVIDENCE_NAME: Record<OneSidedEvidence['uses'][number], string> = {
  rules: 'its rules are counted, not compared',
  'endpoint-locality': 'endpoint locality is compared only where both sides tell it',
  'service-names': 'Service names from it are not compared',
};

/** Said once: which evidence only one side holds, and what is therefore left uncompared. */
function evidenceLines(ev: NonNullable<SnapshotDiff['evidence']>, c: Colors): string[] {
  const out: string[] = [];
  for (const side of ['old', 'new'] as const) {
    const mine = ev.oneSided.filter((e) => e.side === side);
    if (mine.length === 0) continue;
    const uses = [...new Set(mine.flatMap((e) => e.uses))];
    const kinds = mine.map((e) => `${e.kind} (${e.files.map((f) => printable(f, 200)).join(', ')})`).join('; ');
    out.push(c.bold(`Evidence only in the ${side} snapshot: ${kinds}`));
    out.push(c.dim(`  absent from a dump is not a change: ${uses.length ? uses.map((u) => EVIDENCE_NAME[u]).join('; ') : 'nothing compared here rests on it'}`));
  }
  for (const n of ev.notCompared) out.push(c.dim(`  not compared: ${n.what} — ${n.why}`));
  if (ev.frontEndsNotCompared > 0) out.push(c.dim(`  ${ev.frontEndsNotCompared} external/LoadBalancer front end${ev.frontEndsNotCompared === 1 ? '' : 's'} one side cannot attach to a Service: not compared`));
  if (ev.localityNotCompared > 0) out.push(c.dim(`  locality of ${ev.localityNotCompared} endpoint${ev.localityNotCompared === 1 ? '' : 's'} known on one side only: not compared`));
  return out;
}
