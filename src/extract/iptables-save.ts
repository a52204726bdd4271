/**
 * iptables-save document → Ruleset. Applies restore semantics where input is restore-style
 * (`-N`, `-P`, `-I`), keeps every line: what is not a table/chain/rule goes to comments,
 * commands, noise or unsupported, each with its line.
 */
import {
  scanIptablesSave,
  scanIptablesSaveStream,
  type DocumentEntry,
  type IptablesSaveScan,
  type IptablesSaveSink,
  type LineSyntax,
} from '../../grammars/iptables-save/index.js';

type SyntaxEntry = Extract<DocumentEntry, { kind: 'syntax' }>;
import { diagnostic, type Diagnostic, appendAll } from '../source/index.js';
import type { FormatParser, ParsedInput, ParseProgress } from '../../grammars/common/format.js';
import type { TextStream } from '../../grammars/common/stream.js';
import { BUILTIN_CHAINS, type Chain, type Ruleset, type Table, type Target } from '../model/netfilter.js';
import type { SaveComment } from '../../grammars/common/iptables-syntax.js';
import { chainJump, clearSharedTargets, interpretRule, looksLikeExtensionTarget, type ChainTarget } from './iptables-rule.js';
import { interpretTarget } from './iptables-target.js';
import { decodeKubeRule, type KubeRule } from './iptables-kube-lines.js';
import { splitFragment, type TableInference } from './fragment-table.js';
import { counters, MutableChain, noPending, SavedRule, type MutableTable, type PendingRules, type RuleLine } from './iptables-save-model.js';


/** Why a fragment's table was assumed, for its diagnostic: ` (line 3: -j DNAT)` or ` (no rule says; a guess)`. */
function inferenceWords(i: TableInference | undefined): string {
  if (!i) return '';
  return i.basis === 'default' ? ' (no rule says which table; a guess)' : ` (line ${i.line}: ${i.why})`;
}

/**
 * How a message names a table: `table nat`, or `this fragment` for rules without a `*table` line,
 * with what kpx assumed (`detail` is added to the message's parenthesis).
 */
function tableWords(t: { readonly name: string; readonly implicit: boolean }, detail?: string): string {
  if (!t.implicit) return `table ${t.name}${detail === undefined ? '' : ` (${detail})`}`;
  return `this fragment (${detail === undefined ? '' : `${detail}; `}no *table line, kpx assumes table ${t.name})`;
}



/**
 * How a dump is read. `decode: false` reads every line with the grammar (the tests compare the two
 * readings); `stats.decoded` counts the lines read without it (iptables-kube-lines.ts).
 */
export interface IptablesSaveReading {
  readonly decode?: boolean;
  readonly stats?: { decoded: number };
}

export function extractIptablesSave(text: string, file: string, progress?: ParseProgress, reading: IptablesSaveReading = {}): ParsedInput<Ruleset> {
  try {
    const x = new SaveExtractor(file, reading);
    return x.finish(scanIptablesSave(text, file, x.sink, progress));
  } finally {
    clearSharedTargets();
  }
}

/** The same, reading the text as it streams in (the input layer's blocks of lines). */
export async function extractIptablesSaveStream(text: TextStream, file: string, progress?: ParseProgress, reading: IptablesSaveReading = {}): Promise<ParsedInput<Ruleset>> {
  try {
    const x = new SaveExtractor(file, reading);
    return x.finish(await scanIptablesSaveStream(text, file, x.sink, progress));
  } finally {
    clearSharedTargets();
  }
}

/** What the grammar reads goes into `sink`; finish() builds the Ruleset once the scan has ended. */
class SaveExtractor {
  /** Diagnostics found while reading (they follow the grammar's own); those about a fragment wait for its inferred table name. */
  private readonly early: (Diagnostic | (() => Diagnostic))[] = [];
  private readonly tables: MutableTable[] = [];
  private readonly headers: Extract<SaveComment, { kind: 'generated' }>[] = [];
  private readonly comments: { line: number; text: string }[] = [];
  private readonly commands: Ruleset['commands'][number][] = [];
  private readonly unsupported: Ruleset['unsupported'][number][] = [];
  private readonly noise: Ruleset['noise'][number][] = [];
  private readonly incompatibleTables: string[] = [];
  private legacyTablesWarning = false;
  private current: MutableTable | undefined;
  private lastHeader: Extract<SaveComment, { kind: 'generated' }> | undefined;
  private program: string | undefined;
  private ruleCount = 0;

  /** What the scan hands over: rules as fields into one reused record, the rest as entries. */
  readonly sink: IptablesSaveSink;

  constructor(
    private readonly file: string,
    private readonly reading: IptablesSaveReading,
  ) {
    this.sink = {
      ...(this.reading.decode === false ? {} : { decode: decodeKubeRule, decoded: (line, column, text, value) => this.addDecoded(line, column, text, value) }),
      syntax: (line, column, text, syntax) => {
        // One reused record: onEntry keeps none of it but the fields.
        const e = this.ruleEntry;
        e.line = line;
        e.column = column;
        e.text = text;
        e.syntax = syntax;
        this.onEntry(e);
      },
      entry: (e) => this.onEntry(e),
    };
  }
  private chainOf(t: MutableTable, name: string): MutableChain {
    let c = t.chains.get(name);
    if (!c) {
      c = new MutableChain(t.name, name, (BUILTIN_CHAINS[t.name] ?? []).includes(name), this.file);
      t.chains.set(name, c);
      if (t.rulesStarted) (t.lateChains ??= new Set()).add(name);
    }
    return c;
  }

  /**
   * One rule line into its chain. Rules are read as they come (their syntax is garbage a moment
   * later, which keeps big loads cheap); iptables-save declares every chain before the first
   * rule, so `-j NAME` is known to be a jump or not. Input that declares chains later is put
   * right in settleLateChains().
   */
  /** The chain a rule line is for (noting rules for undeclared or deleted chains). */
  private ruleChain(t: MutableTable, chain: string, line: number, column: number): MutableChain {
    t.rulesStarted = true;
    // One lookup for the rule's chain (rules of a chain come together: mostly none).
    let c = t.lastChain;
    if (c === undefined || c.name !== chain) {
      const declared = t.chains.get(chain);
      const deletedAt = declared ? undefined : t.deleted?.find((d) => d.name === chain)?.deletedAt;
      if (deletedAt !== undefined) {
        t.ruleNotes.push({ diagnostic: diagnostic('error', 'extract/rule-for-deleted-chain', `rule for chain ${chain}, which line ${deletedAt} deletes: iptables-restore refuses it`, this.file, line, column) });
      } else if (!t.implicit && (!declared || declared.line === undefined)) t.ruleNotes.push({ undeclared: chain, line, column });
      c = declared ?? this.chainOf(t, chain);
      flushRun(t);
      t.lastChain = c;
    } else if (!t.implicit && c.line === undefined) t.ruleNotes.push({ undeclared: chain, line, column });
    return c;
  }
  private addRule(t: MutableTable, s: RuleLine, line: number, column: number, text: string, chainTarget: ChainTarget): void {
    const c = this.ruleChain(t, s.chain, line, column);
    const meaning = interpretRule(s.items, chainTarget);
    const ct = counters(s.counters);
    if (s.command === 'append') t.run.push(new SavedRule(c, c.rules.length + t.run.length, line, column, text, meaning.matches, meaning.comments, meaning.target, ct));
    else if (s.command === 'insert') {
      flushRun(t);
      const n = s.ruleNumber ? Number(s.ruleNumber) : 1;
      const index = Math.max(0, Math.min(c.rules.length, n - 1));
      const rule = new SavedRule(c, index, line, column, text, meaning.matches, meaning.comments, meaning.target, ct);
      if (index === c.rules.length) c.rules = [...c.rules, rule];
      else {
        c.rules = [...c.rules.slice(0, index), rule, ...c.rules.slice(index)];
        c.rules.forEach((r, i) => (r.index = i));
      }
    } else {
      this.commands.push({ line, command: s.command, spelled: s.spelled, table: t.name, args: [s.chain, ...(s.ruleNumber ? [s.ruleNumber] : [])] });
      t.ruleNotes.push({ diagnostic: diagnostic('warning', 'extract/unsupported-command', `${s.spelled} (${s.command}) is kept but not applied to the model`, this.file, line, column) });
      return;
    }
    this.ruleCount++;
  }
  /**
   * `-X NAME` (or a bare `-X`: every user chain) as iptables-restore applies it: the chain is gone
   * from the table (a later `:NAME` makes a new one). The tool refuses to delete a chain that still
   * has rules (an error here too, and the chain is taken as deleted). A built-in chain depends on
   * the backend (measured, iptables 1.8.9): iptables-legacy-restore refuses, iptables-nft-restore
   * deletes its base chain — a warning that says both.
   */
  private deleteChains(t: MutableTable, name: string | undefined, line: number, column: number, spelled: string): void {
    flushRun(t);
    t.lastChain = undefined;
    const doomed = name === undefined ? [...t.chains.values()].filter((c) => !c.builtin) : [t.chains.get(name) ?? name];
    const deleted = (t.deleted ??= []);
    if (doomed.length === 0) deleted.push({ all: true, deletedAt: line, spelled });
    for (const c of doomed) {
      if (typeof c === 'string') {
        // Not in this input: with --noflush it may be in the kernel, which deletes it.
        deleted.push({ name: c, deletedAt: line, spelled });
        continue;
      }
      if (c.rules.length > 0) {
        const why = `it still has ${c.rules.length} rule${c.rules.length === 1 ? '' : 's'} (from line ${c.rules[0].line})`;
        this.early.push(diagnostic('error', 'extract/delete-chain-refused', `${spelled} ${c.name}: iptables-restore refuses to delete chain ${c.name}: ${why}`, this.file, line, column));
      } else if (c.builtin) {
        const what = `${spelled} ${c.name} deletes a built-in chain: iptables-legacy-restore refuses it; iptables-nft-restore deletes the base chain, so table ${t.name} no longer sees the packets of that hook`;
        this.early.push(diagnostic('warning', 'extract/delete-builtin-chain', what, this.file, line, column));
      }
      t.chains.delete(c.name);
      deleted.push({
        name: c.name,
        ...(name === undefined ? { all: true as const } : {}),
        ...(c.line !== undefined ? { line: c.line } : {}),
        ...(c.policy !== undefined ? { policy: c.policy } : {}),
        ...(c.counters !== undefined ? { counters: c.counters } : {}),
        ...(c.rules.length > 0 ? { rules: c.rules } : {}),
        deletedAt: line,
        spelled,
      });
    }
  }

  /**
   * `-j NAME` in the table being read is a jump when NAME is one of its chains — and also when NAME
   * is no target extension iptables knows: iptables-restore reads such a name as a chain (and refuses
   * the table when the chain does not exist), so a rule of a dump that jumps to a chain the dump does
   * not hold is a jump to a missing chain (a cut or edited dump), never a non-terminating target.
   */
  private readonly isChainOfCurrent: ChainTarget = (name, goto) => this.current!.chains.get(name)?.target(goto) ?? this.jumpToUnknown(this.current!, name, goto);
  /** A jump to a name the table has no chain of (yet): recorded, so the table can say which of them it never held. */
  private jumpToUnknown(t: MutableTable, name: string, goto: boolean): Target | undefined {
    if (looksLikeExtensionTarget(name)) return undefined;
    (t.jumpedUnknown ??= new Set()).add(name);
    return chainJump(name, goto);
  }

  // Entries are consumed as the grammar reads them (no document is kept).
  private onEntry(e: DocumentEntry) {
    switch (e.kind) {
      case 'noise':
        this.noise.push({ line: e.line, text: e.text, noise: e.noise });
        return;
      case 'unsupported':
        this.unsupported.push({ line: e.line, column: e.column, text: e.text, reason: e.reason });
        return;
      case 'comment': {
        const c = e.comment;
        if (c.kind === 'generated') {
          this.headers.push(c);
          this.lastHeader = c;
          this.program ??= c.program;
        } else if (c.kind === 'legacy-tables-warning') this.legacyTablesWarning = true;
        else if (c.kind === 'incompatible-table') this.incompatibleTables.push(c.table);
        this.comments.push({ line: e.line, text: e.text });
        return;
      }
    }
    const s = e.syntax;
    if (s.kind === 'table') return this.onTable(s, e.line, e.column);
    if (!this.current) {
      // A fragment (rules pasted without `*table`): keep them in a table whose name is inferred below.
      this.current = { name: '', line: e.line, committed: false, implicit: true, chains: new Map(), pending: noPending(), run: [], rulesStarted: false, ruleNotes: [] };
      this.tables.push(this.current);
    }
    switch (s.kind) {
      case 'chain':
        this.onChain(this.current, s, e.line, e.column);
        break;
      case 'commit':
        this.current.committed = true;
        this.current.endLine = e.line;
        break;
      case 'rule':
        if (!this.current.implicit) {
          this.addRule(this.current, s, e.line, e.column, e.text, this.isChainOfCurrent);
          break;
        }
        this.current.pending.syntax.push(s);
        this.current.pending.line.push(e.line);
        this.current.pending.column.push(e.column);
        this.current.pending.text.push(e.text);
        break;
      case 'chain-command':
        this.onChainCommand(this.current, s, e.line, e.column);
        break;
    }
  }

  /** `*table`: a new table (the one before it should have been committed). */
  private onTable(s: Extract<LineSyntax, { kind: 'table' }>, line: number, column: number): void {
    if (this.current && !this.current.committed) {
      // A fragment before a `*table` line never had a COMMIT to miss (extract/fragment says what it is).
      if (!this.current.implicit) this.early.push(diagnostic('warning', 'extract/missing-commit', `table ${this.current.name} has no COMMIT before the next table`, this.file, line, column));
    }
    this.current = { name: s.name, line: line, committed: false, implicit: false, chains: new Map(), pending: noPending(), run: [], rulesStarted: false, ruleNotes: [], ...(this.lastHeader ? { generatedBy: this.lastHeader } : {}) };
    this.lastHeader = undefined;
    this.tables.push(this.current);
  }

  /** `:CHAIN POLICY [p:b]`. */
  private onChain(t: MutableTable, s: Extract<LineSyntax, { kind: 'chain' }>, line: number, column: number): void {
    const c = this.chainOf(t, s.name);
    if (c.line !== undefined) {
      const name = s.name;
      const first = c.line;
      this.early.push(() => diagnostic('warning', 'extract/duplicate-chain', `chain ${name} is declared twice in ${tableWords(t, `first on line ${first}`)}`, this.file, line, column));
    }
    c.line = line;
    c.policy = s.policy;
    const ct = counters(s.counters);
    if (ct) c.counters = ct;
  }

  /** Restore-style `-N`, `-X`, `-F`, `-Z`, `-P`. */
  private onChainCommand(t: MutableTable, s: Extract<LineSyntax, { kind: 'chain-command' }>, line: number, column: number): void {
    this.commands.push({ line, command: s.command, spelled: s.spelled, table: t.name, args: s.args });
    if (s.command === 'new-chain' && s.args[0]) {
      const c = this.chainOf(t, s.args[0]);
      c.line ??= line;
      c.policy ??= '-';
    } else if (s.command === 'policy' && s.args[0]) {
      const c = this.chainOf(t, s.args[0]);
      c.line ??= line;
      if (s.args[1]) c.policy = s.args[1];
    } else if (s.command === 'delete-chain') this.deleteChains(t, s.args[0], line, column, s.spelled);
  }
  // Most lines are rules: they come as fields, without an entry object; the rest as entries.
  private readonly ruleEntry: { -readonly [K in keyof SyntaxEntry]: SyntaxEntry[K] } = { kind: 'syntax', line: 0, column: 0, text: '', syntax: { kind: 'commit' } };
  /**
   * A line of kube-proxy's read without the grammar (iptables-kube-lines.ts): an appended rule of a
   * table read so far (a fragment's rules wait for their table, with their syntax: the grammar reads them).
   */
  private addDecoded(line: number, column: number, text: string, value: unknown): boolean {
    const t = this.current;
    if (t === undefined || t.implicit) return false;
    const d = value as KubeRule;
    const c = this.ruleChain(t, d.chain, line, column);
    const target = d.target === undefined ? undefined : interpretTarget(d.target, d.targetOptions, false, this.isChainOfCurrent);
    t.run.push(new SavedRule(c, c.rules.length + t.run.length, line, column, text, d.matches, d.comments, target, undefined));
    this.ruleCount++;
    if (this.reading.stats) this.reading.stats.decoded++;
    return true;
  }
  /** A table once the scan has ended: a fragment's rules read, late chains settled, its rule notes and missing COMMIT reported. */
  private settle(t: MutableTable, diagnostics: Diagnostic[]): void {
    if (t.implicit) {
      // In a fragment, chains are known only by use: a target that is not an extension is a chain.
      const isChain: ChainTarget = (n, goto) => t.chains.get(n)?.target(goto) ?? (looksLikeExtensionTarget(n) ? undefined : chainJump(n, goto));
      const pending = t.pending;
      for (let k = 0; k < pending.syntax.length; k++) this.addRule(t, pending.syntax[k], pending.line[k], pending.column[k], pending.text[k], isChain);
      flushRun(t);
    } else if (t.lateChains) settleLateChains(t);
    for (const note of t.ruleNotes) {
      if (note.undeclared === undefined) diagnostics.push(note.diagnostic);
      else if (isUndeclared(t.chains.get(note.undeclared))) {
        diagnostics.push(
          diagnostic('warning', 'extract/undeclared-chain', `rule for chain ${note.undeclared}, which ${tableWords(t)} does not declare (iptables-restore would reject it)`, this.file, note.line, note.column),
        );
      }
    }
    if (!t.committed && !t.implicit) {
      diagnostics.push(diagnostic('warning', 'extract/missing-commit', `table ${t.name} has no COMMIT (truncated dump?)`, this.file, t.line, 1));
    }
    if (t.deleted) appendAll(diagnostics, jumpsToDeleted(t, this.file));
  
  }

  finish(scan: IptablesSaveScan): ParsedInput<Ruleset> {
    for (const t of this.tables) flushRun(t);
    for (const t of [...this.tables]) if (t.implicit) nameFragment(t, this.tables);
    for (const t of this.tables) {
      if (!t.implicit) continue;
      for (const c of t.chains.values()) c.table = t.name;
      for (let k = 0; k < this.commands.length; k++) if (this.commands[k].table === '') this.commands[k] = { ...this.commands[k], table: t.name };
    }
    // The grammar's diagnostics come first, as they always did.
    const diagnostics: Diagnostic[] = [...scan.diagnostics, ...this.early.map((d) => (typeof d === 'function' ? d() : d))];

    for (const t of this.tables) {
      if (!t.implicit) continue;
      diagnostics.push(
        diagnostic('warning', 'extract/fragment', `rules without a *table line (a fragment); kpx assumes table ${t.name}${inferenceWords(t.inferred)} and does not require chain declarations`, this.file, t.line, 1),
      );
    }

    for (const t of this.tables) this.settle(t, diagnostics);

    const frozenTables: Table[] = this.tables.map((t) => frozenTable(t, this.file));

    const family = this.program?.startsWith('ip6') || hasIpv6Rules(frozenTables) ? 6 : 4;
    const backend = this.headers.some((h) => h.backend === 'nf_tables') ? 'nf_tables' : this.headers.length > 0 ? 'legacy' : 'unknown';
    const ruleset: Ruleset = {
      file: this.file,
      family,
      backend,
      tables: frozenTables,
      headers: this.headers,
      legacyTablesWarning: this.legacyTablesWarning,
      incompatibleTables: this.incompatibleTables,
      comments: this.comments,
      commands: this.commands,
      unsupported: this.unsupported,
      noise: this.noise,
      ruleCount: this.ruleCount,
    };
    const chainCount = frozenTables.reduce((n, t) => n + t.chains.length, 0);
    return { format: 'iptables-save', file: this.file, data: ruleset, diagnostics, counts: { tables: frozenTables.length, chains: chainCount, rules: this.ruleCount } };
  }
}

/** The model's Table of a table as read. */
function frozenTable(t: MutableTable, file: string): Table {
  // Rule lists are of exactly their length (flushRun, inserts): 100k chains × spare room adds up.
  const chains: Chain[] = [...t.chains.values()];
  const byName = new Map<string, Chain>(chains.map((c) => [c.name, c]));
  const table: Table = {
    name: t.name,
    file,
    line: t.line,
    committed: t.committed,
    implicit: t.implicit,
    chains,
    chainsByName: byName,
    ...(t.inferred ? { inferred: t.inferred } : {}),
    ...(t.jumpedUnknown && !t.implicit ? missingOf(t.jumpedUnknown, byName) : {}),
    ...(t.endLine !== undefined ? { endLine: t.endLine } : {}),
    ...(t.generatedBy ? { generatedBy: t.generatedBy } : {}),
    ...(t.deleted ? { deletedChains: t.deleted } : {}),
  };
  return table;
}

/**
 * Chains that appeared after rules had been read (restore-style `-N` late, or rules for chains
 * never declared): a rule read before that took `-j NAME` for an extension target when NAME was
 * not yet a chain. Read those rules again now that every chain is known. Never needed for
 * iptables-save output, which declares all chains first.
 */
/**
 * A fragment's table, inferred from its rules (fragment-table.ts); a grep holding nat and filter
 * rules becomes two fragment tables (the second added to `tables` right after the first). Chains the
 * fragment declares go with their rules, else stay in the first.
 */
function nameFragment(t: MutableTable, tables: MutableTable[]): void {
  const parts = splitFragment(t.pending.syntax, t.pending.line);
  const [main, ...others] = parts;
  t.name = main.table;
  t.inferred = main.inferred;
  if (others.length === 0) return;
  const all = t.pending;
  const pick = (idx: readonly number[]): PendingRules => ({ syntax: idx.map((i) => all.syntax[i]), line: idx.map((i) => all.line[i]), column: idx.map((i) => all.column[i]), text: idx.map((i) => all.text[i]) });
  t.pending = pick(main.rules);
  let at = tables.indexOf(t);
  for (const p of others) {
    const pending = pick(p.rules);
    const o: MutableTable = { name: p.table, line: pending.line[0] ?? t.line, committed: false, implicit: true, chains: new Map(), pending, run: [], rulesStarted: false, ruleNotes: [], inferred: p.inferred };
    const theirs = new Set(pending.syntax.map((r) => r.chain));
    const ours = new Set(t.pending.syntax.map((r) => r.chain));
    for (const [name, c] of t.chains) {
      if (!theirs.has(name) || ours.has(name)) continue;
      t.chains.delete(name);
      o.chains.set(name, c);
    }
    tables.splice(++at, 0, o);
  }
}

/** The jump targets a table never held, once every chain is known (a chain declared after the jump is held). */
function missingOf(names: ReadonlySet<string>, byName: ReadonlyMap<string, Chain>): { missingChains?: readonly string[] } {
  const missing = [...names].filter((n) => !byName.has(n));
  return missing.length ? { missingChains: missing } : {};
}

/** The last chain's run of appended rules into its list (see MutableTable.run). */
function flushRun(t: MutableTable): void {
  const c = t.lastChain;
  if (c === undefined || t.run.length === 0) return;
  c.rules = c.rules.length === 0 ? t.run.slice() : c.rules.concat(t.run);
  t.run.length = 0;
}

/**
 * Rules left jumping to a chain `-X` deleted (and not declared again): iptables-restore refuses
 * both orders — deleting a chain a rule still jumps to, and a jump to a chain that is gone.
 */
function jumpsToDeleted(t: MutableTable, file: string): Diagnostic[] {
  const gone = new Map<string, number>();
  for (const d of t.deleted ?? []) if (d.name !== undefined && !t.chains.has(d.name)) gone.set(d.name, d.deletedAt);
  const out: Diagnostic[] = [];
  if (gone.size === 0) return out;
  for (const c of t.chains.values()) {
    for (const r of c.rules) {
      const to = r.target?.kind === 'jump' || r.target?.kind === 'goto' ? r.target.chain : r.target?.kind === 'extension' ? r.target.name : undefined;
      const at = to === undefined ? undefined : gone.get(to);
      if (at !== undefined) out.push(diagnostic('error', 'extract/jump-to-deleted-chain', `rule jumps to chain ${to}, which line ${at} deletes: iptables-restore refuses it`, file, r.line, r.column));
    }
  }
  return out;
}

/** iptables-restore takes rules for built-in chains without a `:CHAIN` line, not for other chains. */
function isUndeclared(c: MutableChain | undefined): boolean {
  return c === undefined || (c.line === undefined && !c.builtin);
}

function settleLateChains(t: MutableTable): void {
  const late = [...(t.lateChains ?? [])];
  const isChain: ChainTarget = (name, goto) => t.chains.get(name)?.target(goto);
  for (const c of t.chains.values()) {
    c.rules = c.rules.map((r) => {
      if (r.target === undefined || r.target.kind === 'jump' || r.target.kind === 'goto' || !late.some((name) => r.raw.includes(name))) return r;
      const meaning = interpretRule(r.items, isChain);
      return new SavedRule(c, r.index, r.line, r.column, r.raw, meaning.matches, meaning.comments, meaning.target, r.counters);
    });
  }
}

function hasIpv6Rules(tables: readonly Table[]): boolean {
  for (const t of tables)
    for (const c of t.chains)
      for (const r of c.rules) for (const m of r.matches) if (m.kind === 'address' && m.cidr) return m.cidr.family === 6;
  return false;
}

export const iptablesSaveParser: FormatParser<Ruleset> = { id: 'iptables-save', parse: extractIptablesSave, parseStream: extractIptablesSaveStream };
