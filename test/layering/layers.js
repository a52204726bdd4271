/**
 * The import direction of kpx, as an ESLint rule: each area (`grammars/<x>`, `src/<x>`) may import
 * its own files and the areas listed for it below, nothing else. docs/ARCHITECTURE.md states
 * the same table in words; this file is the one that is checked.
 *
 *   cli → render/cluster → lint/diff/redact → judge → trace/graph → kube/load → extract → model → source → grammars/common
 */
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

const GRAMMARS = 'grammars/*';
/** area → the other areas it may import. `grammars/*` is every grammar. */
export const ALLOWED = {
  'grammars/common': [],
  // A grammar reads syntax only: it may share another grammar's pieces, never kpx's model.
  [GRAMMARS]: [GRAMMARS],
  // Positions and diagnostics live under grammars/common (grammars may not import src/); src/source re-exports them.
  'src/source': ['grammars/common'],
  // The model is plain data: it knows positions, not grammars, files or kube-proxy.
  'src/model': ['src/source', 'grammars/common'],
  'src/extract': [GRAMMARS, 'src/model', 'src/source'],
  'src/load': ['src/extract', GRAMMARS, 'src/model', 'src/source'],
  'src/collect': ['src/model', 'src/source'],
  'src/kube': ['src/model', 'src/source'],
  'src/trace': ['src/kube', 'src/model', 'src/source'],
  'src/graph': ['src/kube', 'src/model', 'src/source'],
  // The judgement: one answer per Service port and per traced flow, from every reader's facts.
  'src/judge': ['src/trace', 'src/kube', 'src/model', 'src/source'],
  'src/lint': ['src/judge', 'src/trace', 'src/graph', 'src/kube', 'src/model', 'src/source'],
  'src/diff': ['src/judge', 'src/kube', 'src/model', 'src/source', 'src/render'],
  'src/redact': ['src/load', 'src/kube', 'src/model', 'src/source'],
  // Renderers turn typed results into words (the report too: src/render/report); printing iptables-save text re-reads a rule's syntax.
  'src/render': ['src/lint', 'src/judge', 'src/trace', 'src/graph', 'src/kube', 'src/model', 'src/source', 'grammars/common'],
  'src/cluster': ['src/render', 'src/judge', 'src/trace', 'src/kube', 'src/load', 'src/model', 'src/source'],
  'src/cli': ['src/*'],
  // Test and benchmark support (not shipped in dist/): it may use anything; nothing shipped may use it.
  'src/generate': ['src/*', GRAMMARS],
};

/** `src/kube` for src/kube/hash.ts, `grammars/nft` for grammars/nft/rule.ts; undefined outside them. */
export function areaOf(file) {
  const rel = relative(ROOT, file).split('\\').join('/');
  const m = /^(src|grammars)\/([^/]+)\//.exec(rel);
  return m ? `${m[1]}/${m[2]}` : undefined;
}

function allowedFor(area) {
  if (area in ALLOWED) return ALLOWED[area];
  if (area.startsWith('grammars/')) return ALLOWED[GRAMMARS];
  return undefined;
}

function permits(pattern, target) {
  if (pattern === target) return true;
  return pattern.endsWith('/*') && target.startsWith(pattern.slice(0, -1));
}

/** Why `from` may not import `to` (both areas), or undefined when it may. */
export function violation(from, to) {
  if (from === to) return undefined;
  if (to === 'src/generate' && from !== 'src/generate') return `${from} imports ${to}: the dump generator is test support and is not shipped`;
  const allowed = allowedFor(from);
  if (allowed === undefined) return `${from} is not in the layer table (test/layering/layers.js): add it with the areas it may import`;
  if (allowed.some((p) => permits(p, to))) return undefined;
  return `${from} may not import ${to} (allowed: ${allowed.join(', ') || 'nothing outside itself'})`;
}

export const layersRule = {
  meta: { type: 'problem', docs: { description: 'imports follow kpx layers' }, schema: [] },
  create(context) {
    const from = areaOf(context.filename);
    if (from === undefined) return {};
    const check = (node, source) => {
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const to = areaOf(resolve(dirname(context.filename), source));
      if (to === undefined) return;
      const why = violation(from, to);
      if (why) context.report({ node, message: why });
    };
    return {
      ImportDeclaration: (n) => check(n, n.source.value),
      ExportNamedDeclaration: (n) => n.source && check(n, n.source.value),
      ExportAllDeclaration: (n) => check(n, n.source.value),
      ImportExpression: (n) => n.source.type === 'Literal' && check(n, n.source.value),
    };
  },
};
