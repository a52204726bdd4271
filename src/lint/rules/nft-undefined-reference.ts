import type { NftElement, NftExpr, NftMapRef, NftOperand, NftTable } from '../../model/nft.js';
import { createRule } from '../rule.js';

interface Ref {
  kind: 'set' | 'chain';
  name: string;
  column: number;
}

function refsOfOperand(o: NftOperand, column: number, out: Ref[]): void {
  switch (o.kind) {
    case 'set-ref':
      out.push({ kind: 'set', name: o.name, column });
      return;
    case 'concat':
      for (const p of o.parts) refsOfOperand(p, column, out);
      return;
    case 'binop':
      refsOfOperand(o.left, column, out);
      refsOfOperand(o.right, column, out);
      return;
    case 'map':
      refsOfOperand(o.key, column, out);
      refsOfMap(o.map, column, out);
      return;
    case 'set':
      refsOfElements(o.elements, out);
      return;
    default:
      return;
  }
}

function refsOfElements(elements: readonly NftElement[], out: Ref[]): void {
  for (const e of elements) {
    if (e.value?.kind === 'verdict' && (e.value.verdict === 'jump' || e.value.verdict === 'goto') && e.value.chain) out.push({ kind: 'chain', name: e.value.chain, column: e.column });
  }
}

function refsOfMap(m: NftMapRef, column: number, out: Ref[]): void {
  if (m.kind === 'ref') out.push({ kind: 'set', name: m.name, column });
  else refsOfElements(m.elements, out);
}

function refsOfExpr(e: NftExpr, out: Ref[]): void {
  switch (e.kind) {
    case 'match':
      refsOfOperand(e.left, e.column, out);
      refsOfOperand(e.right, e.column, out);
      return;
    case 'verdict':
      if ((e.verdict === 'jump' || e.verdict === 'goto') && e.chain) out.push({ kind: 'chain', name: e.chain, column: e.column });
      return;
    case 'vmap':
      refsOfOperand(e.key, e.column, out);
      refsOfMap(e.map, e.column, out);
      return;
    case 'dnat':
    case 'snat':
      if (e.map) {
        refsOfOperand(e.map.key, e.column, out);
        refsOfMap(e.map.map, e.column, out);
      }
      return;
    case 'update-set':
      out.push({ kind: 'set', name: e.set, column: e.column });
      refsOfOperand(e.key, e.column, out);
      return;
    case 'mark-set':
    case 'assign':
      refsOfOperand(e.expr, e.column, out);
      return;
    default:
      return;
  }
}

/** `service-ULMVA6XW-ns/name/tcp/port`, `endpoint-…-ns/name/tcp/port__10.0.0.1/80` → `ns/name:port`. */
function serviceOfNftChain(name: string): string | undefined {
  const m = /^(?:service|external|endpoint|firewall)-[A-Z0-9]{8}-([^/]+)\/([^/]+)\/[a-z]+\/([^_]*)/.exec(name);
  if (!m) return undefined;
  return m[3] ? `${m[1]}/${m[2]}:${m[3]}` : `${m[1]}/${m[2]}`;
}

export default createRule({
  id: 'nft-undefined-reference',
  meta: {
    description: 'An nftables rule or verdict map refers (`@set`, `jump`, `goto`) to a set, map or chain its table does not define.',
    severity: 'error',
    docs: [
      'nft refuses a ruleset in which a rule jumps to an undefined chain or looks up an undefined set or map',
      '(`Error: No such file or directory` / `Could not process rule`), so a kube-proxy nftables-mode transaction',
      'that contains such a reference fails whole, and the dataplane keeps its previous state. In a listing',
      'it means the dump is partial (one table or chain listed, `nft list chain …`), or the ruleset was edited',
      'between listing commands.',
      '',
      '**Fix:** take a complete `nft list ruleset` (or `-j`). If it is complete, restart kube-proxy so it',
      'rewrites its table; remove references left by other tools. One finding per missing name per table.',
    ].join('\n'),
    messages: {
      set: '{{what}} @{{name}} is not defined in table {{table}} ({{count}})',
      chain: 'chain {{name}} is not defined in table {{table}} ({{count}})',
    },
  },
  check(ctx) {
    for (const rs of ctx.snapshot.nft) {
      for (const t of rs.tables) check(t);
    }
    function check(t: NftTable): void {
      // A fragment, or a listing cut mid-way (what it refers to may be past the cut), proves nothing missing.
      if (t.implicit || t.truncated) return;
      const sets = new Set(t.sets.map((s) => s.name));
      const chains = new Set(t.chains.map((c) => c.name));
      const missing = new Map<string, { ref: Ref; line: number; text: string; chain: string; count: number }>();
      const note = (ref: Ref, line: number, text: string, chain: string) => {
        if (ref.kind === 'set' ? sets.has(ref.name) : chains.has(ref.name)) return;
        const key = `${ref.kind}\0${ref.name}`;
        const m = missing.get(key);
        if (m) m.count++;
        else missing.set(key, { ref, line, text, chain, count: 1 });
      };
      for (const c of t.chains) {
        for (const r of c.rules) {
          const refs: Ref[] = [];
          for (const e of r.exprs) refsOfExpr(e, refs);
          for (const ref of refs) note(ref, r.line, r.raw, c.name);
        }
      }
      for (const s of t.sets) {
        if (s.kind !== 'map') continue;
        for (const e of s.elements) {
          if (e.value?.kind === 'verdict' && (e.value.verdict === 'jump' || e.value.verdict === 'goto') && e.value.chain) {
            note({ kind: 'chain', name: e.value.chain, column: e.column }, e.line, `${e.key.join(' . ')} : ${e.value.verdict} ${e.value.chain}`, '');
          }
        }
      }
      for (const { ref, line, text, chain, count } of missing.values()) {
        const svc = serviceOfNftChain(ref.name) ?? serviceOfNftChain(chain);
        ctx.report({
          messageId: ref.kind,
          data: { what: 'set or map', name: ref.name, table: `${t.family} ${t.name}`, count: `${count} reference${count === 1 ? '' : 's'}` },
          file: t.file,
          line,
          column: ref.column,
          text,
          ...(svc ? { service: svc } : {}),
        });
      }
    }
  },
});
