/**
 * The import direction of kpx, as an ESLint rule: each area (`grammars/<x>`, `src/<x>`) may import
 * its own files and the areas listed for it below, and the packages listed for it in PACKAGES, nothing
 * else. Import cycles are checked over the whole tree by test/layering/imports.ts (a rule sees one
 * file at a time). docs/ARCHITECTURE.md states
 * the same table in words; this file is the one that is checked.
 *
 *   cli → app → render (report and cluster under it) → lint/diff/redact → judge → trace/graph → kube/load → extract → model → source → grammars/common
 */
import { builtinModules } from 'node:module';
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
  'src/diff': ['src/judge', 'src/kube', 'src/model', 'src/source'],
  'src/redact': ['src/load', 'src/kube', 'src/model', 'src/source'],
  // Renderers turn typed results into words (the report too: src/render/report); printing iptables-save text re-reads a rule's syntax.
  'src/render': ['src/lint', 'src/diff', 'src/judge', 'src/trace', 'src/graph', 'src/kube', 'src/model', 'src/source', 'grammars/common'],
  'src/cluster': ['src/render', 'src/judge', 'src/trace', 'src/kube', 'src/load', 'src/model', 'src/source'],
  // Renderers of a result live under render/ by result, beside the result's module: they read its types.
  'src/render/cluster': ['src/cluster', 'src/render', 'src/trace', 'src/kube', 'src/model', 'src/source'],
  // The output registry: (result kind, format) → renderer, over every renderer (the node's and the cluster's).
  'src/render/registry': ['src/render', 'src/render/cluster'],
  // One function per command, from options to a typed result (src/app/<command>.ts): it loads through
  // the loader the CLI hands it, asks the judgement, and never writes or makes sentences of its own.
  'src/app': ['src/render/registry', 'src/render/cluster', 'src/render', 'src/cluster', 'src/lint', 'src/diff', 'src/redact', 'src/judge', 'src/trace', 'src/graph', 'src/kube', 'src/load', 'src/collect', 'src/model', 'src/source'],
  'src/cli': ['src/*'],
  // Test and benchmark support (not shipped in dist/): it may use anything; nothing shipped may use it.
  'src/generate': ['src/*', GRAMMARS],
};

/** Folders inside an area that are areas of their own (a result's renderers, which read that result's module; the registry over all renderers). */
const SUB_AREAS = ['src/render/cluster', 'src/render/registry'];

/**
 * The packages (npm or Node's built-ins) an area may import. An array is the whole list; `ANY_BUT_CLI`
 * is every package but the command line's own. The analysis (grammars up to src/diff) reads data
 * and returns data: no argument parser, spinner, colours, tables or terminal — only src/cli (and the
 * renderers it calls) meet the terminal — so a core module runs the same in a worker, a test, a
 * library user's process.
 */
export const ANY_BUT_CLI = 'any package but the CLI ones';
/** The command line's and the terminal's packages: named in the message when a core area imports one. */
export const TERMINAL_PACKAGES = ['commander', 'chalk', 'ora', 'cli-table3', 'node:tty', 'node:readline', 'node:readline/promises', 'node:repl'];
/** Those that only src/cli may import (the renderers may colour and draw tables). */
const CLI_ONLY = ['commander', 'ora', 'node:readline', 'node:readline/promises', 'node:repl'];
export const PACKAGES = {
  // Chevrotain is loaded once, here (chevrotain.ts finds the installed copy); YAML is a syntax.
  'grammars/common': ['chevrotain', 'yaml', 'node:fs', 'node:module', 'node:path', 'node:url'],
  [GRAMMARS]: ['yaml'],
  'src/source': [],
  'src/model': ['ipaddr.js'],
  'src/extract': ['yaml'],
  'src/load': ['node:fs', 'node:path', 'node:stream', 'node:string_decoder', 'node:timers/promises', 'node:zlib'],
  'src/collect': ['node:child_process', 'node:fs', 'node:os', 'node:path', 'node:util'],
  'src/kube': ['node:crypto'],
  'src/trace': [],
  'src/graph': ['@viz-js/viz'],
  'src/judge': [],
  // The rule catalogue writes docs/rules/ (catalogue.ts); configurations are YAML.
  'src/lint': ['node:crypto', 'node:fs', 'node:path', 'node:url', 'yaml'],
  'src/diff': [],
  'src/redact': ['node:crypto', 'node:fs', 'node:path', 'yaml'],
  'src/render': ANY_BUT_CLI,
  'src/cluster': ANY_BUT_CLI,
  'src/render/cluster': ANY_BUT_CLI,
  'src/render/registry': [],
  'src/app': ANY_BUT_CLI,
  'src/cli': '*',
  'src/generate': ANY_BUT_CLI,
};

/** `node:fs` for `fs` and `node:fs/promises`'s package for itself; `yaml` for `yaml/util`; `@viz-js/viz` for itself. */
export function packageName(specifier) {
  const bare = specifier.startsWith('node:') ? specifier.slice(5) : specifier;
  if (specifier.startsWith('node:') || builtinModules.includes(bare)) return `node:${bare}`;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

function packagesFor(area) {
  if (area in PACKAGES) return PACKAGES[area];
  if (area.startsWith('grammars/')) return PACKAGES[GRAMMARS];
  return undefined;
}

/** Why `from` (an area) may not import the package `specifier`, or undefined when it may. */
export function packageViolation(from, specifier) {
  const name = packageName(specifier);
  const allowed = packagesFor(from);
  if (allowed === undefined) return `${from} is not in the package table (PACKAGES in test/layering/layers.js): add it with the packages it may import`;
  if (allowed === '*') return undefined;
  if (allowed === ANY_BUT_CLI) return CLI_ONLY.includes(name) ? `${from} may not import ${name}: only src/cli parses arguments and drives the terminal` : undefined;
  if (allowed.includes(name)) return undefined;
  const terminal = TERMINAL_PACKAGES.includes(name) ? ' — a command-line/terminal package: the analysis returns data, src/cli and src/render meet the terminal' : '';
  return `${from} may not import the package ${name}${terminal} (allowed: ${allowed.join(', ') || 'no packages'})`;
}

/** `src/kube` for src/kube/hash.ts, `grammars/nft` for grammars/nft/rule.ts; undefined outside them. */
export function areaOf(file) {
  const rel = relative(ROOT, file).split('\\').join('/');
  const sub = SUB_AREAS.find((a) => rel.startsWith(`${a}/`));
  if (sub) return sub;
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
  meta: { type: 'problem', docs: { description: 'imports (of kpx files and of packages) follow kpx layers' }, schema: [] },
  create(context) {
    const from = areaOf(context.filename);
    if (from === undefined) return {};
    const check = (node, source) => {
      if (typeof source !== 'string') return;
      if (!source.startsWith('.')) {
        const why = packageViolation(from, source);
        if (why) context.report({ node, message: why });
        return;
      }
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
      // `typeof import('chalk')` and `import x = require('chalk')` are imports too.
      TSImportType: (n) => {
        const lit = n.source ?? n.argument?.literal;
        if (lit?.type === 'Literal') check(n, lit.value);
      },
      TSExternalModuleReference: (n) => n.expression.type === 'Literal' && check(n, n.expression.value),
    };
  },
};
