/**
 * nft syntax (text listing or `nft -j` JSON) → NftRuleset, plus the FormatParsers.
 */
import { parseNftSyntax, type SynDocument, type SynExpr, type SynTable } from '../../grammars/nft/index.js';
import { parseNftJsonSyntax } from '../../grammars/nft/json.js';
import { diagnostic, type Diagnostic } from '../source/index.js';
import { applyTransaction } from './nft-transaction.js';
import type { FormatParser, ParsedInput } from '../../grammars/common/format.js';
import { standardPriority, type NftChain, type NftRuleset, type NftTable } from '../model/nft.js';

/** Built-in iptables chain names, as iptables-nft creates them. */
const IPTABLES_BUILTINS = new Set(['INPUT', 'OUTPUT', 'FORWARD', 'PREROUTING', 'POSTROUTING']);
const IPTABLES_TABLES = new Set(['filter', 'nat', 'mangle', 'raw', 'security']);
/** Chain names only iptables-based tools create (kube-proxy iptables mode, Docker, Calico iptables). */
const IPTABLES_CHAIN = /^(KUBE-|DOCKER|cali-|CILIUM_|FLANNEL-)/;

type TableShape = Pick<SynTable, 'name' | 'implicit'> & { readonly chains: readonly { readonly name: string; readonly rules: readonly { readonly exprs: readonly SynExpr[] }[] }[] };

function looksIptablesNft(t: TableShape, warned: boolean): boolean {
  if (warned) return true;
  if (t.chains.some((c) => c.rules.some((r) => r.exprs.some((e) => e.kind === 'xt')))) return true;
  if (t.chains.some((c) => IPTABLES_CHAIN.test(c.name))) return true;
  return (t.implicit || IPTABLES_TABLES.has(t.name)) && t.chains.some((c) => IPTABLES_BUILTINS.has(c.name));
}

/**
 * Syntax → model. Expression shapes are shared (structurally checked here). A transaction
 * (`nft -f` input) is applied command by command (./nft-transaction.ts); its refusals are
 * added to `diagnostics`.
 */
export function toRuleset(doc: SynDocument, file: string, diagnostics: Diagnostic[] = []): NftRuleset {
  if (doc.commands) {
    const applied = applyTransaction(doc, file);
    diagnostics.push(...applied.diagnostics);
    const tables = applied.tables.map((t): NftTable => {
      const warned = doc.iptablesNftWarnings.some((w) => w.family === t.family && w.name === t.name);
      return { ...t, file, fromIptablesNft: looksIptablesNft({ ...t, implicit: false }, warned) };
    });
    return { tables, unsupported: doc.unsupported };
  }
  const tables: NftTable[] = doc.tables.map((t) => {
    const warned = doc.iptablesNftWarnings.some((w) => w.family === t.family && w.name === t.name);
    const chains: NftChain[] = t.chains.map((c) => {
      // Regular chains (all but a few base chains) are the model as parsed: no copy of the chain
      // or its rules (at 10k Services that is 100k chains and 300k rules the collector would copy).
      if (!('priorityBase' in c) && !('priorityOffset' in c)) return c;
      const { priorityBase, priorityOffset, ...rest } = c;
      let priority: number | undefined;
      if (priorityBase !== undefined) {
        const base = /^-?\d+$/.test(priorityBase) ? Number(priorityBase) : standardPriority(t.family, priorityBase);
        if (base !== undefined) priority = base + (priorityOffset ?? 0);
      }
      return priority !== undefined ? { ...rest, priority } : rest;
    });
    const table: NftTable = {
      ...t,
      chains,
      sets: t.sets,
      file,
      fromIptablesNft: looksIptablesNft(t, warned),
    };
    if (!t.implicit) delete (table as { implicit?: boolean }).implicit;
    return table;
  });
  return { tables, unsupported: doc.unsupported, ...(doc.nftVersion ? { nftVersion: { ...doc.nftVersion, file } } : {}) };
}

export function countsOf(r: NftRuleset): Record<string, number> {
  let chains = 0;
  let rules = 0;
  let sets = 0;
  let elements = 0;
  for (const t of r.tables) {
    chains += t.chains.length;
    for (const c of t.chains) rules += c.rules.length;
    sets += t.sets.length;
    for (const s of t.sets) elements += s.elements.length;
  }
  return { tables: r.tables.length, chains, rules, sets, elements };
}

function safe(format: 'nft' | 'nft-json', file: string, run: () => { doc: SynDocument; diagnostics: Diagnostic[] }): ParsedInput<NftRuleset> {
  try {
    const { doc, diagnostics } = run();
    const data = toRuleset(doc, file, diagnostics);
    if (!doc.commands) return { format, file, data, diagnostics, counts: countsOf(data) };
    // `nft -f` input: what it holds once applied, and how many commands it took.
    diagnostics.sort((a, b) => a.line - b.line || a.column - b.column);
    const counts = { commands: doc.commands.length, ...countsOf(data) };
    return { format, file, data, diagnostics, counts, variant: 'transaction' };
  } catch (e) {
    const data: NftRuleset = { tables: [], unsupported: [] };
    return {
      format,
      file,
      data,
      diagnostics: [diagnostic('error', 'internal/parser-failure', `nft parser failed: ${String(e)}`, file, 1, 1)],
      counts: countsOf(data),
    };
  }
}

export const nftParser: FormatParser<NftRuleset> = {
  id: 'nft',
  parse: (text, file) => safe('nft', file, () => parseNftSyntax(text, file)),
};

export const nftJsonParser: FormatParser<NftRuleset> = {
  id: 'nft-json',
  parse: (text, file) => safe('nft-json', file, () => parseNftJsonSyntax(text, file)),
};
