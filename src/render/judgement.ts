/**
 * The judgement (src/judge) in words: reasons, caveats, stale rules, pins, unknown shares, the
 * evidence kinds. The only place they become sentences; `trace`, `services`, `report` and lint
 * messages that quote them all use these.
 */
import type { Caveat, Cite, FlowJudgement, Leftovers, Mention, NodeJudgement, Pin, Reason, StaleRules, TableEvidence, UnknownPart } from '../judge/index.js';
import { printable } from '../source/index.js';
import { unknownText as walkUnknownText } from './trace/words.js';

const base = (file: string) => file.split(/[\\/]/).pop() ?? file;
const at = (c: Cite | Mention) => `${base(c.file)}:${c.line}`;
const pct = (p: number) => `${Number((p * 100).toFixed(2))}%`;
const list = (xs: readonly string[], max = 3) => (xs.length <= max ? xs.join(', ') : `${xs.slice(0, max).join(', ')} and ${xs.length - max} more`);

/** What a table's evidence is, as a clause: `iptables-save.txt table nat is a grep (no *table line; nat inferred from line 3: -j DNAT)`. */
export function evidenceText(e: TableEvidence): string {
  const where = `${base(e.file)}${e.table === '*' ? '' : ` (${e.dialect === 'iptables' ? `table ${e.table}` : e.table})`}`;
  switch (e.kind) {
    case 'whole':
      return `${where} is whole`;
    case 'cut':
      return `${where} is cut after line ${e.line ?? '?'}`;
    case 'grep':
      return e.inferred?.basis === 'content'
        ? `${where} is a paste without its table line (a grep; the table is inferred from line ${e.inferred.line}: ${e.inferred.why}): lines may be missing`
        : `${where} is a paste without its table line (a grep; no rule says which table: ${e.table} is a guess): lines may be missing`;
    case 'restore-input':
      return `${where} is kube-proxy's iptables-restore input: it holds kube-proxy's chains only, not the hooks`;
    case 'edited':
      return `${where} jumps to chain${(e.missing?.length ?? 0) === 1 ? '' : 's'} it does not hold (${list((e.missing ?? []).map((m) => m.chain))}): it cannot be a whole iptables-save (the kernel refuses a jump to a chain that does not exist): it was cut or edited`;
    case 'second-view':
      return `${where} is a second view of ${base(e.of ?? '?')} (read once)`;
    case 'missing':
      return 'the rules show IPVS mode but no `ipvsadm -Ln` listing was read: its virtual servers are not in the evidence';
  }
}

export function reasonText(r: Reason): string {
  switch (r.code) {
    case 'endpoint-chains-absent':
      return `endpoint chain${r.chains.length === 1 ? '' : 's'} ${list(r.chains)} ${r.chains.length === 1 ? 'is' : 'are'} not in the evidence: where ${r.chains.length === 1 ? 'its' : 'their'} share goes is unknown`;
    case 'dump-not-whole':
      return `${base(r.file)} jumps to ${list(r.chains)}, which it does not hold: such a dump cannot be a whole iptables-save (the kernel refuses a jump to a chain that does not exist): it was cut or edited${r.cites[0] ? ` (${at(r.cites[0])})` : ''}`;
    case 'endpoint-address-unknown':
      return `the rules name endpoint chain${r.chains.length === 1 ? '' : 's'} ${list(r.chains)} that the evidence does not hold: ${r.chains.length === 1 ? 'an endpoint' : `${r.chains.length} endpoints`} whose address is unknown`;
    case 'table-inferred':
      return r.basis === 'content'
        ? `${base(r.file)} has no *table line: its rules were read as table ${r.table} (inferred from line ${r.line}: ${r.why})`
        : `${base(r.file)} has no *table line and no rule says which table: ${r.table} is a guess`;
    case 'table-cut':
      return `${base(r.file)} table ${r.table} is cut after line ${r.line}: what follows is not in the evidence`;
    case 'scenarios-not-followed':
      return `more than ${r.limit} ways the undecided matches can go: the ways not followed are unknown`;
    case 'walk-unknown':
      return `${walkUnknownText(r.unknown)}${r.cites[0] ? ` (${at(r.cites[0])})` : ''}`;
  }
}

/** The unknown share and its reasons: `UNKNOWN 33.33%: …`. */
export function unknownText(u: UnknownPart): string {
  const share = u.share === null ? 'a share the evidence does not give' : pct(u.share);
  return `${share}: ${u.reasons.map(reasonText).join('; ')}`;
}

export function staleText(s: StaleRules): string {
  const times = s.count === 1 ? `at ${s.since}` : `${s.count} times, from ${s.since} to ${s.last}`;
  const r = s.refused;
  const others = r?.named ? r.named.filter((n) => n !== r.line) : [];
  const refused = r
    ? `; ${s.count > 1 ? 'its last failure' : 'it'} refused payload line ${r.line}${r.text ? ` \`${r.text}\`` : others.length ? ` (others named: ${others.join(', ')}; the payload is not in the log: kube-proxy -v=5 logs it)` : ' (the payload is not in the log: kube-proxy -v=5 logs it)'}${r.service ? ` (Service ${r.service})` : ''}${r.why === 'missing-chain' ? `, which jumps to ${r.name ?? 'a chain'} that does not exist` : r.why === 'unknown-option' ? `, which uses ${r.name ?? 'an option'} this iptables does not know` : ''}`
    : '';
  return `kube-proxy's log (${base(s.file)}:${s.line}) shows its ${s.tool} failing ${times}: the rules shown may be stale since ${s.since}${refused}`;
}

export function caveatText(c: Caveat): string {
  switch (c.code) {
    case 'rules-may-be-stale':
      return staleText(c);
    case 'draining-real-servers': {
      const one = c.servers.length === 1;
      const [them, their] = one ? ['it', 'its'] : ['them', 'their'];
      const reuse =
        c.connReuseMode === '0'
          ? `net.ipv4.vs.conn_reuse_mode=0: a new connection that reuses the source port of one of ${their} connections is sent to ${them}, terminating or not`
          : c.connReuseMode === null
            ? 'conn_reuse_mode is not in the dumps (kernel default 1: such a connection is rescheduled; kernels before 5.9 drop its first SYN, a 1 s retransmit)'
            : `conn_reuse_mode=${c.connReuseMode}: a new connection reusing the source port of one of ${their} connections is rescheduled`;
      return `${list(c.servers)} ${c.servers.length === 1 ? 'is' : 'are'} draining (weight 0): no new connection is scheduled there${c.connections ? `, ${c.connections} IPVS connection${c.connections === 1 ? '' : 's'} still go${c.connections === 1 ? 'es' : ''} there` : ''}; ${reuse}`;
    }
    case 'second-view':
      return `${base(c.file)} is a second view of ${base(c.of)} (${c.kind}; read once): ${c.differing} of its ${c.rules} rules are not in ${base(c.of)}${c.first ? ` (first: ${at(c.first)} \`${c.first.text ?? ''}\`)` : ''}: the kernel does not hold what was written there (a failed or a later sync)`;
  }
}

/** The conntrack entry's verdict: where the flow goes, and its fate. */
export function pinText(p: Pin): string {
  const until = p.seconds !== undefined ? ` for ${p.seconds} s unless a packet refreshes the entry` : '';
  switch (p.fate) {
    case 'blackholed':
      return `PINNED by conntrack → ${p.to}, which is no endpoint now: blackholed${until} (${at(p.cite)})`;
    case 'endpoint':
      return `PINNED by conntrack → ${p.to}, a current endpoint (${at(p.cite)})`;
    case 'untranslated':
      return `PINNED by conntrack: untranslated, the reply comes from ${p.to} itself${until} (${at(p.cite)})`;
    case 'unknown':
      return `PINNED by conntrack → ${p.to}; no Service is known here to say whether it is an endpoint (${at(p.cite)})`;
  }
}

/** "No Service matches" when the evidence cannot say so: what is partial, and the unread lines that name the destination. */
export function noServiceText(n: NonNullable<FlowJudgement['noService']>, dest: string): string {
  const seen = n.mentions.length ? `; ${n.mentions.length} line${n.mentions.length === 1 ? '' : 's'} kpx could not read name ${dest}: ${n.mentions.slice(0, 3).map((m) => `${at(m)} \`${printable(m.text.trim(), 160)}\``).join(', ')}` : '';
  const partial = n.partial.length ? `; ${n.partial.slice(0, 2).map(evidenceText).join('; ')}` : '';
  return `UNKNOWN: no Service resolved for ${dest}, but the evidence cannot show that none matches${partial}${seen}`;
}

export function leftoversText(l: Leftovers): string {
  return `${l.chains} kube-proxy iptables-mode chain${l.chains === 1 ? '' : 's'} in ${base(l.file)} (table ${l.table}; ${l.servicePorts} Service port${l.servicePorts === 1 ? '' : 's'}' worth, e.g. ${l.example}${l.cite ? ` at line ${l.cite.line}` : ''}) ${l.chains === 1 ? 'is' : 'are'} reached by no hook: leftovers of an earlier proxy mode that act on no packet, not counted as Services (kube-proxy --cleanup removes them)`;
}

/** Notes about the node's evidence, said once above `services` and `trace`: stale rules, leftovers, second views, partial tables. */
export function nodeNotes(node: Pick<NodeJudgement, 'stale' | 'leftovers' | 'secondViews'>, opts: { readonly trace?: boolean } = {}): string[] {
  const out: string[] = [];
  // Stale rules come first, for every command (the first line of the answer).
  if (node.stale) out.push(`note: ${staleText(node.stale)}`);
  for (const l of node.leftovers) out.push(`note: ${leftoversText(l)}`);
  for (const v of node.secondViews) {
    // A trace says differing views on its own verdict lines (FlowJudgement caveats).
    if (opts.trace && v.differingCount > 0) continue;
    out.push(
      v.differingCount === 0
        ? `note: ${base(v.file)} is a second view of ${base(v.of)} (${v.kind}): its ${v.rules} rules are all in ${base(v.of)}; read once`
        : `note: ${caveatText({ code: 'second-view', file: v.file, of: v.of, kind: v.kind, rules: v.rules, differing: v.differingCount, ...(v.differing[0] ? { first: { file: v.file, line: v.differing[0].line, text: v.differing[0].text } } : {}) })}`,
    );
  }
  return out.map((l) => printable(l, 600));
}

/** A reason or caveat with its words, for JSON (docs/json.md): the typed fields and `message`. */
const worded = <T extends Reason | Caveat>(x: T, words: (x: T) => string) => ({ ...x, message: words(x) });

/** The unknown part of an answer as JSON. */
export function unknownJson(u: UnknownPart | null): Record<string, unknown> | null {
  return u === null ? null : { share: u.share, reasons: u.reasons.map((r) => worded(r, reasonText)) };
}

/** A flow's judgement as JSON (`kpx trace -o json`, each trace's `judgement`). */
export function flowJudgementJson(j: FlowJudgement): Record<string, unknown> {
  return {
    ...j,
    unknown: unknownJson(j.unknown),
    caveats: j.caveats.map((c) => worded(c, caveatText)),
    outcomeCaveats: j.outcomeCaveats.map((o) => ({ outcome: o.outcome, caveat: worded(o.caveat, caveatText) })),
  };
}
