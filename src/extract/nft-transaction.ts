/**
 * Apply the commands of an `nft -f` transaction (grammars/nft/transaction.ts) in order, the way
 * nft and the kernel do, into the tables `nft list ruleset` would show afterwards.
 *
 * What nft refuses is checked as the kernel checks it (net/netfilter/nf_tables_api.c), with the
 * errno nft prints: deleting, flushing or adding into what does not exist (No such file or
 * directory), `create` of what exists and re-adding a set with other properties (File exists),
 * deleting a chain or set still referenced by a rule or map element (Device or resource busy),
 * changing a base chain's hook or a map element's value (Operation not supported). nft then
 * applies nothing of the file; kpx reports the error at the command's line and applies the rest,
 * so one bad line does not hide the others.
 *
 * The result is what the listing would print: base chains get `policy accept` unless told
 * otherwise, set timeouts print as `3h`, a one-element anonymous set is a plain value; handles
 * are counted per table as the kernel allocates them (chains, sets, anonymous sets, rules) so
 * that `delete rule … handle N` finds the rule nft would.
 */
import type { SynChain, SynCommand, SynDocument, SynElement, SynRule, SynSet, SynTable } from '../../grammars/nft/index.js';
import { diagnostic, type Diagnostic } from '../source/index.js';
import { anonymousSets, canonicalRule, canonicalTime, numericPriority, references } from './nft-canonical.js';
import { JumpGraph, VALIDATED_STATEMENTS, type Verdict } from './nft-jumps.js';
import type { NftChain, NftElement, NftRule, NftSet, NftTable } from '../model/nft.js';

type Mut<T> = { -readonly [K in keyof T]: T[K] extends readonly (infer U)[] ? U[] : T[K] };

interface MRule {
  rule: NftRule;
  handle: number;
  /** What the rule jumps to and looks up (computed once). */
  chains: string[];
  sets: string[];
  /** Its statements the kernel allows only in some chain types and hooks. */
  stmts: string[];
}
interface MChain {
  name: string;
  base: boolean;
  context?: string;
  chain: Omit<Mut<NftChain>, 'rules'>;
  rules: MRule[];
  handle: number;
}
interface MSet {
  set: Mut<NftSet>;
  handle: number;
  /** Chains its elements' verdicts go to (cached; undefined when it must be recounted). */
  targets?: Set<string>;
  /** Its elements by key, so a big map is not searched element by element. */
  byKey: Map<string, Mut<NftElement>>;
}
export interface MTable {
  family: string;
  name: string;
  comment?: string;
  flags: string[];
  chains: MChain[];
  sets: MSet[];
  chainByName: Map<string, MChain>;
  setByName: Map<string, MSet>;
  graph: JumpGraph;
  line: number;
  endLine: number;
  handle: number;
  /** The kernel's per-table handle counter (nf_tables_alloc_handle). */
  hgen: number;
}

const ERRNO = {
  noent: 'No such file or directory',
  exist: 'File exists',
  busy: 'Device or resource busy',
  notsupp: 'Operation not supported',
  mlink: 'Too many links',
} as const;
const EXPECTED: Record<keyof typeof ERRNO, string> = { noent: 'an existing object', exist: 'a name not in use', busy: 'an unreferenced object', notsupp: 'the properties it has', mlink: 'jumps from a base chain no deeper than 16, without loops' };
const CODE: Record<keyof typeof ERRNO, string> = { noent: 'nft/no-such-object', exist: 'nft/object-exists', busy: 'nft/object-busy', notsupp: 'nft/not-supported', mlink: 'nft/jump-loop' };

const elementKey = (e: SynElement) => e.key.join(' . ');
const sameValue = (a: SynElement, b: SynElement) => JSON.stringify(a.value ?? null) === JSON.stringify(b.value ?? null);

export class TransactionState {
  readonly tables: MTable[] = [];
  readonly diagnostics: Diagnostic[] = [];
  private tableHandle = 0;

  /**
   * Check jumps and statements command by command (the kernel's NFT_VALIDATE_DO, used when it
   * replays a transaction that failed validation at commit); otherwise they are checked once,
   * on the final state.
   */
  constructor(
    readonly file: string,
    readonly validateEach = false,
  ) {}

  /** Whether every table passes the kernel's commit-time validation. */
  validAtCommit(): boolean {
    return this.tables.every((t) => t.graph.validAll());
  }

  private fail(cmd: SynCommand, errno: keyof typeof ERRNO, what: string, column = cmd.nameColumn): false {
    this.diagnostics.push(diagnostic('error', CODE[errno], `${what}: nft refuses \`${cmd.verb} ${cmd.object}\` (${ERRNO[errno]})`, this.file, cmd.line, column, { expected: EXPECTED[errno], found: ERRNO[errno] }));
    return false;
  }

  private findTable(family: string, name: string | undefined): MTable | undefined {
    return this.tables.find((t) => t.family === family && t.name === name);
  }

  /** The command's table, or an error (by name, or by handle for `delete table … handle N`). */
  private tableOf(cmd: SynCommand): MTable | undefined {
    const t = cmd.object === 'table' && cmd.handle !== undefined ? this.tables.find((x) => x.family === cmd.family && x.handle === cmd.handle) : this.findTable(cmd.family, cmd.table);
    if (!t) this.fail(cmd, 'noent', `table ${cmd.family} ${cmd.handle !== undefined && cmd.object === 'table' ? `handle ${cmd.handle}` : cmd.table} does not exist`, cmd.object === 'table' ? cmd.nameColumn : cmd.column);
    return t;
  }

  apply(cmd: SynCommand): void {
    switch (cmd.object) {
      case 'block':
        return this.block(cmd);
      case 'ruleset':
        for (let k = this.tables.length - 1; k >= 0; k--) if (cmd.family === '' || this.tables[k].family === cmd.family) this.tables.splice(k, 1);
        return;
      case 'table':
        return this.table(cmd);
      case 'chain':
        return this.chain(cmd);
      case 'set':
      case 'map':
        return this.set(cmd);
      case 'element':
        return this.element(cmd);
      case 'rule':
        return this.rule(cmd);
    }
  }

  private table(cmd: SynCommand): void {
    const t = cmd.handle !== undefined || cmd.verb !== 'add' && cmd.verb !== 'create' ? undefined : this.findTable(cmd.family, cmd.table);
    if (cmd.verb === 'add' || cmd.verb === 'create') {
      // An existing table keeps its comment (the kernel updates only its flags).
      if (t) {
        if (cmd.verb === 'create') this.fail(cmd, 'exist', `table ${cmd.family} ${cmd.table} exists`);
        return;
      }
      this.newTable(cmd.family, cmd.table!, cmd.line, cmd.tableSpec);
      return;
    }
    if (cmd.verb === 'destroy' && !this.findTable(cmd.family, cmd.table) && cmd.handle === undefined) return;
    const found = this.tableOf(cmd);
    if (!found) return;
    if (cmd.verb === 'flush') {
      for (const c of found.chains) c.rules = [];
      found.graph.invalidate();
    } else this.tables.splice(this.tables.indexOf(found), 1);
  }

  private newTable(family: string, name: string, line: number, spec?: { readonly comment?: string; readonly flags: readonly string[] }): MTable {
    const chainByName = new Map<string, MChain>();
    const setByName = new Map<string, MSet>();
    const graph = new JumpGraph({
      chain: (n) => chainByName.get(n),
      chains: () => chainByName.values(),
      mapTargets: (n) => this.mapTargets(setByName.get(n)),
    });
    const t: MTable = { family, name, flags: [...(spec?.flags ?? [])], chains: [], sets: [], chainByName, setByName, graph, line, endLine: line, handle: ++this.tableHandle, hgen: 0 };
    if (spec?.comment !== undefined) t.comment = spec.comment;
    this.tables.push(t);
    return t;
  }

  private chain(cmd: SynCommand): void {
    const t = this.tableOf(cmd);
    if (!t) return;
    t.endLine = Math.max(t.endLine, cmd.line);
    const c = cmd.handle !== undefined ? t.chains.find((x) => x.handle === cmd.handle) : t.chainByName.get(cmd.name!);
    const label = `chain ${cmd.family} ${cmd.table} ${cmd.name ?? `handle ${cmd.handle}`}`;
    if (cmd.verb === 'add' || cmd.verb === 'create') {
      if (c) {
        if (cmd.verb === 'create') {
          this.fail(cmd, 'exist', `${label} exists`);
          return;
        }
        this.updateChain(cmd, c);
        return;
      }
      this.addChain(t, cmd.chain ?? { name: cmd.name!, rules: [], line: cmd.line }, cmd.line);
      for (const r of cmd.chain?.rules ?? []) this.appendRule(cmd, t, t.chains[t.chains.length - 1], r);
      return;
    }
    if (!c) {
      if (cmd.verb !== 'destroy') this.fail(cmd, 'noent', `${label} does not exist`);
      return;
    }
    if (cmd.verb === 'flush') {
      // kube-proxy flushes every chain it ensures: an empty one removes no jumps.
      if (c.rules.some((r) => r.chains.length || r.sets.length)) t.graph.invalidate();
      c.rules = [];
      return;
    }
    // delete/destroy: its own rules go with it; a jump, goto or map element elsewhere keeps it busy.
    const users = this.chainUsers(t, c.chain.name, c);
    if (users) {
      this.fail(cmd, 'busy', `${label} is still referenced (${users})`);
      return;
    }
    t.chains.splice(t.chains.indexOf(c), 1);
    t.chainByName.delete(c.name);
    t.graph.invalidate();
  }

  private chainUsers(t: MTable, name: string, except?: MChain): string | undefined {
    for (const c of t.chains) {
      if (c === except) continue;
      for (const r of c.rules) if (r.chains.includes(name)) return `by a rule in chain ${c.chain.name}, line ${r.rule.line}`;
    }
    for (const s of t.sets) for (const e of s.set.elements) if (references(e.value).chains.has(name)) return `by an element of ${s.set.kind} ${s.set.name}`;
    return undefined;
  }

  private updateChain(cmd: SynCommand, c: MChain): void {
    const spec = cmd.chain;
    if (!spec) return;
    const cur = c.chain;
    if ((spec.hook !== undefined || spec.type !== undefined) && (spec.hook !== cur.hook || spec.type !== cur.type || (spec.priorityBase !== undefined && numericPriority(cmd.family, spec) !== cur.priority))) {
      this.fail(cmd, 'notsupp', `chain ${cmd.name} exists with another type, hook or priority`, cmd.column);
      return;
    }
    // Only a base chain's policy changes on a re-add; the comment stays as it was.
    if (spec.policy !== undefined && cur.hook !== undefined) cur.policy = spec.policy;
  }

  private addChain(t: MTable, spec: SynChain, line: number): MChain {
    // The listing's fields only: the numeric priority replaces its parts, rules come one by one.
    const chain: Omit<Mut<NftChain>, 'rules'> = { ...spec, line };
    for (const k of ['priorityBase', 'priorityOffset', 'rules', 'handle'] as const) delete (chain as Record<string, unknown>)[k];
    const p = numericPriority(t.family, spec);
    if (p !== undefined) chain.priority = p;
    if (chain.hook !== undefined && chain.policy === undefined) chain.policy = 'accept';
    const c: MChain = { name: chain.name, base: chain.hook !== undefined, chain, rules: [], handle: ++t.hgen };
    if (c.base) c.context = `${chain.type ?? 'filter'}/${chain.hook}`;
    t.chains.push(c);
    t.chainByName.set(c.name, c);
    if (c.base) t.graph.addBase(c.name, c.context!);
    return c;
  }

  private set(cmd: SynCommand): void {
    const t = this.tableOf(cmd);
    if (!t) return;
    t.endLine = Math.max(t.endLine, cmd.line);
    const s = cmd.handle !== undefined ? t.sets.find((x) => x.handle === cmd.handle) : t.setByName.get(cmd.name!);
    const label = `${cmd.object} ${cmd.family} ${cmd.table} ${cmd.name ?? `handle ${cmd.handle}`}`;
    if (cmd.verb === 'add' || cmd.verb === 'create') {
      const spec = cmd.set!;
      if (s) {
        const same = s.set.kind === spec.kind && s.set.keyType.join(' . ') === spec.keyType.join(' . ') && (s.set.valueType ?? '') === (spec.valueType ?? '') && [...s.set.flags].sort().join(',') === [...spec.flags].sort().join(',');
        if (cmd.verb === 'create' || !same) {
          this.fail(cmd, 'exist', `${label} exists${same ? '' : ' with other properties'}`);
          return;
        }
        for (const e of spec.elements) this.addElement(cmd, t, s, e);
        return;
      }
      this.addSet(cmd, t, spec, cmd.line);
      return;
    }
    if (!s) {
      if (cmd.verb !== 'destroy') this.fail(cmd, 'noent', `${label} does not exist`);
      return;
    }
    if (cmd.verb === 'flush') {
      if (this.mapTargets(s).size) t.graph.invalidate();
      s.set.elements = [];
      s.byKey.clear();
      s.targets = undefined;
      return;
    }
    for (const c of t.chains)
      for (const r of c.rules)
        if (r.sets.includes(s.set.name)) {
          this.fail(cmd, 'busy', `${label} is still used by a rule in chain ${c.chain.name}, line ${r.rule.line}`);
          return;
        }
    t.sets.splice(t.sets.indexOf(s), 1);
    t.setByName.delete(s.set.name);
    t.graph.invalidate();
  }

  private addSet(cmd: SynCommand, t: MTable, spec: SynSet, line: number): void {
    const { handle, elements, timeout, gcInterval, ...rest } = spec;
    void handle;
    const set: Mut<NftSet> = { ...rest, keyType: [...spec.keyType], flags: [...spec.flags], elements: [], line };
    const to = canonicalTime(timeout);
    if (to !== undefined) set.timeout = to;
    const gc = canonicalTime(gcInterval);
    if (gc !== undefined) set.gcInterval = gc;
    const s: MSet = { set, handle: ++t.hgen, byKey: new Map() };
    t.sets.push(s);
    t.setByName.set(set.name, s);
    for (const e of elements) this.addElement(cmd, t, s, e);
  }

  private element(cmd: SynCommand): void {
    const t = this.tableOf(cmd);
    if (!t) return;
    t.endLine = Math.max(t.endLine, cmd.line);
    const s = t.setByName.get(cmd.name!);
    if (!s) {
      if (cmd.verb !== 'destroy') this.fail(cmd, 'noent', `set or map ${cmd.family} ${cmd.table} ${cmd.name} does not exist`);
      return;
    }
    for (const e of cmd.elements ?? []) {
      if (cmd.verb === 'add' || cmd.verb === 'create') {
        if (!this.addElement(cmd, t, s, e)) continue;
      } else {
        const old = s.byKey.get(elementKey(e));
        const k = old ? s.set.elements.indexOf(old) : -1;
        if (k < 0) {
          if (cmd.verb !== 'destroy') this.fail(cmd, 'noent', `element ${elementKey(e)} is not in ${s.set.kind} ${s.set.name}`, e.column);
          continue;
        }
        s.set.elements.splice(k, 1);
        s.byKey.delete(elementKey(e));
        if (references(old!.value).chains.size) {
          s.targets = undefined;
          t.graph.invalidate();
        }
      }
    }
  }

  private addElement(cmd: SynCommand, t: MTable, s: MSet, e: SynElement): boolean {
    const key = elementKey(e);
    const old = s.byKey.get(key);
    if (old) {
      if (cmd.verb === 'create') return this.fail(cmd, 'exist', `element ${key} is already in ${s.set.kind} ${s.set.name}`, e.column);
      if (!sameValue(old, e)) return this.fail(cmd, 'notsupp', `element ${key} is already in ${s.set.kind} ${s.set.name} with another value`, e.column);
      return true;
    }
    const targets = [...references(e.value).chains];
    if (!this.checkJumps(cmd, t, targets, e.column)) return false;
    const el: Mut<NftElement> = { ...e, key: [...e.key] };
    const to = canonicalTime(e.timeout);
    if (to !== undefined) el.timeout = to;
    s.set.elements.push(el);
    s.byKey.set(key, el);
    for (const ch of targets) s.targets?.add(ch);
    const v = this.validateEach ? t.graph.addMapElement(s.set.name, targets) : 'ok';
    if (v !== 'ok') {
      s.set.elements.pop();
      s.byKey.delete(key);
      s.targets = undefined;
      return this.refuseJump(cmd, v, `element ${key} of ${s.set.kind} ${s.set.name}`, e.column);
    }
    return true;
  }

  private rule(cmd: SynCommand): void {
    const t = this.tableOf(cmd);
    if (!t) return;
    t.endLine = Math.max(t.endLine, cmd.line);
    const c = t.chainByName.get(cmd.name!);
    if (!c) {
      if (cmd.verb !== 'destroy') this.fail(cmd, 'noent', `chain ${cmd.family} ${cmd.table} ${cmd.name} does not exist`);
      return;
    }
    if (cmd.verb === 'delete' || cmd.verb === 'destroy' || cmd.verb === 'replace') {
      const k = c.rules.findIndex((r) => r.handle === cmd.handle);
      if (k < 0) {
        if (cmd.verb !== 'destroy') this.fail(cmd, 'noent', `chain ${cmd.name} has no rule with handle ${cmd.handle}`);
        return;
      }
      if (cmd.verb === 'replace') {
        if (!this.checkRefs(cmd, t, cmd.rule!)) return;
        const old = c.rules[k];
        c.rules[k] = this.ruleIn(t, cmd.rule!, old.handle);
        t.graph.invalidate();
        const v = this.validateEach ? t.graph.addRule(c.name, c.rules[k].chains, c.rules[k].sets, c.rules[k].stmts) : 'ok';
        if (v !== 'ok') {
          c.rules[k] = old;
          this.refuseJump(cmd, v, 'the rule', cmd.rule!.column);
        }
      } else {
        c.rules.splice(k, 1);
        t.graph.invalidate();
      }
      return;
    }
    let at = cmd.verb === 'insert' ? 0 : c.rules.length;
    if (cmd.position) {
      const p = cmd.position;
      const k = p.by === 'handle' ? c.rules.findIndex((r) => r.handle === p.value) : p.value < c.rules.length ? p.value : -1;
      if (k < 0) {
        this.fail(cmd, 'noent', `chain ${cmd.name} has no rule at ${p.by} ${p.value}`);
        return;
      }
      at = cmd.verb === 'insert' ? k : k + 1;
    }
    if (!this.checkRefs(cmd, t, cmd.rule!)) return;
    this.insertRule(cmd, t, c, at, cmd.rule!);
  }

  private insertRule(cmd: SynCommand, t: MTable, c: MChain, at: number, r: SynRule): void {
    const m = this.ruleIn(t, r);
    c.rules.splice(at, 0, m);
    const v = this.validateEach ? t.graph.addRule(c.name, m.chains, m.sets, m.stmts) : 'ok';
    if (v !== 'ok') {
      c.rules.splice(at, 1);
      this.refuseJump(cmd, v, 'the rule', r.column);
    }
  }

  private refuseJump(cmd: SynCommand, v: Exclude<Verdict, 'ok'>, what: string, column: number): false {
    return v === 'mlink'
      ? this.fail(cmd, 'mlink', `${what} makes a jump loop (or a path of 16 jumps) from a base chain`, column)
      : this.fail(cmd, 'notsupp', `${what} brings a statement (masquerade, snat, dnat, redirect, reject) where a base chain's type or hook does not allow it`, column);
  }

  private appendRule(cmd: SynCommand, t: MTable, c: MChain, r: SynRule): void {
    if (!this.checkRefs(cmd, t, r)) return;
    this.insertRule(cmd, t, c, c.rules.length, r);
  }

  /**
   * A rule as the table will hold it: canonical, its anonymous sets counted (each takes a handle
   * before the rule's), and a set it updates from the packet path sized 65535 when it has no
   * size (the kernel's nft_dynset_init default, listed as `size 65535`).
   */
  private ruleIn(t: MTable, r: SynRule, handle?: number): MRule {
    const rule = canonicalRule(r);
    const refs = references(rule.exprs);
    if (handle === undefined) {
      t.hgen += anonymousSets(rule.exprs);
      handle = ++t.hgen;
    }
    for (const e of rule.exprs) {
      if (e.kind !== 'update-set') continue;
      const s = t.setByName.get(e.set);
      if (s && s.set.size === undefined) s.set.size = 65535;
    }
    const stmts = [...new Set(rule.exprs.map((e) => e.kind).filter((k) => VALIDATED_STATEMENTS.has(k)))];
    return { rule, handle, chains: [...refs.chains], sets: [...refs.sets], stmts };
  }

  /**
   * A rule's jumps and set lookups must name what exists in its table (else ENOENT), and a jump
   * may not go to a base chain (nft_verdict_init: EOPNOTSUPP).
   */
  private checkRefs(cmd: SynCommand, t: MTable, r: SynRule): boolean {
    const refs = references(r.exprs);
    for (const s of refs.sets) if (!t.setByName.has(s)) return this.fail(cmd, 'noent', `set or map @${s} does not exist in table ${t.family} ${t.name}`, r.column);
    return this.checkJumps(cmd, t, refs.chains, r.column);
  }

  private checkJumps(cmd: SynCommand, t: MTable, named: Iterable<string>, column: number): boolean {
    for (const ch of named) {
      const c = t.chainByName.get(ch);
      if (!c) return this.fail(cmd, 'noent', `chain ${ch} (jumped to) does not exist in table ${t.family} ${t.name}`, column);
      if (c.chain.hook !== undefined) return this.fail(cmd, 'notsupp', `chain ${ch} is a base chain: nothing may jump to it`, column);
    }
    return true;
  }

  /** Chains the verdicts of a map's elements go to (cached per map). */
  private mapTargets(s: MSet | undefined): Set<string> {
    if (!s) return new Set();
    s.targets ??= references(s.set.elements.map((e) => e.value)).chains;
    return s.targets;
  }

  /** `table F N { … }` among commands: nft adds its chains, then its sets, then the chains' rules. */
  private block(cmd: SynCommand): void {
    const b = cmd.block as SynTable;
    let t = this.findTable(b.family, b.name);
    if (cmd.verb === 'create' && t) {
      this.fail(cmd, 'exist', `table ${b.family} ${b.name} exists`);
      return;
    }
    t ??= this.newTable(b.family, b.name, b.line, { flags: b.flags, ...(b.comment !== undefined ? { comment: b.comment } : {}) });
    t.endLine = Math.max(t.endLine, b.endLine);
    const at = (line: number): SynCommand => ({ ...cmd, line, column: 1, nameColumn: 1 });
    const chains = b.chains.map((spec) => {
      const c = t!.chainByName.get(spec.name);
      if (c) {
        this.updateChain({ ...at(spec.line), object: 'chain', name: spec.name, chain: spec }, c);
        return c;
      }
      return this.addChain(t!, spec, spec.line);
    });
    for (const spec of b.sets) {
      const s = t.setByName.get(spec.name);
      if (s) for (const e of spec.elements) this.addElement(at(spec.line), t, s, e);
      else this.addSet(at(spec.line), t, spec, spec.line);
    }
    b.chains.forEach((spec, k) => {
      for (const r of spec.rules) this.appendRule(at(r.line), t!, chains[k], r);
    });
  }
}

/** The transaction's end state: tables as `nft list ruleset` shows them (without file and origin). */
export function applyTransaction(doc: SynDocument, file: string): { tables: Omit<NftTable, 'file' | 'fromIptablesNft'>[]; diagnostics: Diagnostic[] } {
  // Like the kernel: apply everything, validate the result at commit; only when that fails,
  // replay the transaction checking each rule and element, so the refusal names its command.
  let st = new TransactionState(file);
  for (const cmd of doc.commands ?? []) st.apply(cmd);
  if (!st.validAtCommit()) {
    st = new TransactionState(file, true);
    for (const cmd of doc.commands ?? []) st.apply(cmd);
  }
  const tables = st.tables.map((t) => ({
    family: t.family,
    name: t.name,
    ...(t.comment !== undefined ? { comment: t.comment } : {}),
    flags: t.flags,
    chains: t.chains.map((c): NftChain => ({ ...c.chain, rules: c.rules.map((r) => r.rule) })),
    sets: t.sets.map((s) => s.set),
    line: t.line,
    endLine: t.endLine,
  }));
  return { tables, diagnostics: st.diagnostics };
}
