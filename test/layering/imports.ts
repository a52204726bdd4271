/**
 * The import graph of kpx's own files, read with the TypeScript compiler's parser (no type
 * checking, so it is quick): every `import`, `import type`, `export … from`, `import()` and
 * `typeof import('…')` between files, and the cycles in it.
 *
 * Type-only imports count: a cycle of types is still two files that cannot be understood (or
 * moved to another layer) one without the other — the fix is the same, a third file that both
 * import. The graph works on a map of files (path → text), so tests can feed it virtual files.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import ts from 'typescript';

/** Repository-relative path (`src/load/index.ts`) → source text. */
export type SourceFiles = ReadonlyMap<string, string>;

export interface ImportRef {
  /** As written: `./bundle.js`, `chalk`, `node:fs`. */
  readonly specifier: string;
  readonly line: number;
  /** `import type`, `export type`, every specifier marked `type`, or an import type (`typeof import('…')`). */
  readonly typeOnly: boolean;
}

export interface ImportEdge extends ImportRef {
  readonly from: string;
  /** The file imported (repository-relative), for a relative specifier that names one of the files. */
  readonly to: string;
}

/** Every .ts file under `dirs` of `root` (tests and declaration files aside), read. */
export function readSources(root: string, dirs: readonly string[] = ['src', 'grammars']): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (rel: string) => {
    for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
      const p = posix.join(rel, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.set(p, readFileSync(join(root, p), 'utf8'));
    }
  };
  for (const d of dirs) walk(d);
  return out;
}

export function parse(path: string, text: string): ts.SourceFile {
  return ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
}

/** The imports one file makes, in source order. */
export function importsOf(source: ts.SourceFile): ImportRef[] {
  const out: ImportRef[] = [];
  const add = (lit: ts.Expression | undefined, typeOnly: boolean) => {
    if (!lit || !ts.isStringLiteralLike(lit)) return;
    out.push({ specifier: lit.text, line: source.getLineAndCharacterOfPosition(lit.getStart(source)).line + 1, typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const c = node.importClause;
      const named = c?.namedBindings && ts.isNamedImports(c.namedBindings) ? c.namedBindings.elements : undefined;
      const allTypes = !!c && !c.name && !!named && named.length > 0 && named.every((e) => e.isTypeOnly);
      add(node.moduleSpecifier, !!c && (c.isTypeOnly || allTypes));
      return;
    }
    if (ts.isExportDeclaration(node)) {
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : undefined;
      add(node.moduleSpecifier, node.isTypeOnly || (!!named && named.length > 0 && named.every((e) => e.isTypeOnly)));
      return;
    }
    if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add(node.moduleReference.expression, node.isTypeOnly);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node.arguments[0], false);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal, true);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** A relative specifier resolved against the importing file: `./x.js` → `dir/x.ts` or `dir/x/index.ts`, if one of `files`. */
export function resolveRelative(from: string, specifier: string, files: SourceFiles): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = posix.normalize(posix.join(dirname(from), specifier));
  const stem = base.replace(/\.(js|ts|mjs|cjs)$/, '');
  for (const c of [`${stem}.ts`, base, `${stem}/index.ts`]) if (files.has(c)) return c;
  return undefined;
}

export interface ImportGraph {
  /** Edges between files of the set. */
  readonly edges: readonly ImportEdge[];
  /** Imports of anything that is not a relative path: packages and Node's built-in modules. */
  readonly packages: readonly (ImportRef & { readonly from: string })[];
}

export function importGraph(files: SourceFiles): ImportGraph {
  const edges: ImportEdge[] = [];
  const packages: (ImportRef & { from: string })[] = [];
  for (const [path, text] of files) {
    for (const ref of importsOf(parse(path, text))) {
      if (!ref.specifier.startsWith('.')) packages.push({ ...ref, from: path });
      else {
        const to = resolveRelative(path, ref.specifier, files);
        if (to !== undefined) edges.push({ ...ref, from: path, to });
      }
    }
  }
  return { edges, packages };
}

/** One import cycle: the files in order (the last imports the first), and the edges that close it. */
export interface Cycle {
  readonly files: readonly string[];
  readonly edges: readonly ImportEdge[];
  /** Every file of its strongly connected component (a knot may hold more than one loop). */
  readonly component: readonly string[];
}

/**
 * The import cycles: one per strongly connected component of the graph (Tarjan), shown as the
 * shortest loop through its first file (sorted), with the whole component alongside. A file that
 * imports itself is a cycle too.
 */
export function importCycles(graph: ImportGraph): Cycle[] {
  const out = new Map<string, ImportEdge[]>();
  for (const e of graph.edges) {
    const list = out.get(e.from) ?? [];
    list.push(e);
    out.set(e.from, list);
  }
  const nodes = [...new Set(graph.edges.flatMap((e) => [e.from, e.to]))].sort();
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;
  // Iterative Tarjan: import chains can be deep, and a recursive walk is one frame per file.
  for (const start of nodes) {
    if (index.has(start)) continue;
    const work: { node: string; next: number }[] = [{ node: start, next: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const top = work[work.length - 1];
      const succ = out.get(top.node) ?? [];
      if (top.next < succ.length) {
        const w = succ[top.next++].to;
        if (!index.has(w)) {
          index.set(w, counter);
          low.set(w, counter++);
          stack.push(w);
          onStack.add(w);
          work.push({ node: w, next: 0 });
        } else if (onStack.has(w)) low.set(top.node, Math.min(low.get(top.node)!, index.get(w)!));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(top.node)!));
      }
      if (low.get(top.node) === index.get(top.node)) {
        const comp: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          comp.push(w);
        } while (w !== top.node);
        const selfLoop = comp.length === 1 && (out.get(w) ?? []).some((e) => e.to === w);
        if (comp.length > 1 || selfLoop) components.push(comp.sort());
      }
    }
  }
  return components.sort((a, b) => (a[0] < b[0] ? -1 : 1)).map((comp) => shortestLoop(comp, out));
}

/** The shortest loop from the component's first file back to it, by breadth-first search inside the component. */
function shortestLoop(component: string[], out: Map<string, ImportEdge[]>): Cycle {
  const inside = new Set(component);
  const first = component[0];
  const via = new Map<string, ImportEdge>();
  const queue = [first];
  let closing: ImportEdge | undefined;
  for (let i = 0; i < queue.length && !closing; i++) {
    for (const e of out.get(queue[i]) ?? []) {
      if (!inside.has(e.to)) continue;
      if (e.to === first) {
        closing = e;
        break;
      }
      if (!via.has(e.to)) {
        via.set(e.to, e);
        queue.push(e.to);
      }
    }
  }
  const edges: ImportEdge[] = [closing!];
  for (let at = closing!.from; at !== first; at = via.get(at)!.from) edges.unshift(via.get(at)!);
  return { files: edges.map((e) => e.from), edges, component };
}

/** `a.ts → b.ts (type) → a.ts`, with the line of each import. */
export function describeCycle(c: Cycle): string {
  const steps = c.edges.map((e) => `${e.from}:${e.line} imports ${e.typeOnly ? 'the types of ' : ''}${e.to}`);
  const more = c.component.length > c.files.length ? ` (one loop of a knot of ${c.component.length} files: ${c.component.join(', ')})` : '';
  return `${c.files.join(' → ')} → ${c.files[0]}${more}\n    ${steps.join('\n    ')}`;
}
