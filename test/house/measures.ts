/**
 * The measures of issue 32, taken with the project's own TypeScript (the compiler's parser, no
 * type checking): function and file sizes, import cycles, settings passed through the
 * environment, and output formats chosen by hand in the CLI. test/house/measures.test.ts holds the
 * limits; `npx vite-node test/house/print.ts [ROOT]` prints the numbers.
 *
 * A function is every function-like node with a body (declarations, methods, accessors,
 * constructors, function expressions, arrow functions); its size is the lines from the line it
 * starts on (after its leading comments) to the line it ends on. A nested function counts on its
 * own and inside its parent.
 */
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { importCycles, importGraph, parse, type Cycle, type SourceFiles } from '../layering/imports.js';

export interface FunctionSize {
  readonly file: string;
  /** `walkChain`, `Class.method`, `name` of the variable or property an arrow is bound to, else `<anonymous>`. */
  readonly name: string;
  readonly line: number;
  readonly lines: number;
}

export interface FileSize {
  readonly file: string;
  readonly lines: number;
}

/** A place in a file and the code there. */
export interface Spot {
  readonly file: string;
  readonly line: number;
  readonly text: string;
}

export interface Measures {
  readonly functions: readonly FunctionSize[];
  readonly files: readonly FileSize[];
  readonly cycles: readonly Cycle[];
  /** Writes to `process.env.KPX_*` (a setting travelling through the environment). */
  readonly envWrites: readonly Spot[];
  /** `output === 'json'`-like tests in src/cli (a format chosen by hand, not by the output registry). */
  readonly outputTests: readonly Spot[];
}

function nameOf(node: ts.Node, source: ts.SourceFile): string {
  const named = (n: ts.Node): string | undefined => {
    const name = (n as { name?: ts.Node }).name;
    return name && (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isPrivateIdentifier(name)) ? name.text : name?.getText(source);
  };
  if (ts.isConstructorDeclaration(node)) return `${named(node.parent) ?? '<class>'}.constructor`;
  if (ts.isMethodDeclaration(node) || ts.isGetAccessorDeclaration(node) || ts.isSetAccessorDeclaration(node)) {
    const owner = ts.isClassLike(node.parent) ? named(node.parent) : undefined;
    return owner ? `${owner}.${named(node)}` : (named(node) ?? '<method>');
  }
  const own = named(node);
  if (own) return own;
  const p = node.parent;
  if (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) return named(p) ?? '<anonymous>';
  if (ts.isBinaryExpression(p) && p.operatorToken.kind === ts.SyntaxKind.EqualsToken) return p.left.getText(source);
  return '<anonymous>';
}

/** Every function with a body in one file, with its size in lines. */
export function functionSizes(file: string, source: ts.SourceFile): FunctionSize[] {
  const out: FunctionSize[] = [];
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line + 1;
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body !== undefined) {
      const start = lineOf(node.getStart(source));
      out.push({ file, name: nameOf(node, source), line: start, lines: lineOf(node.getEnd()) - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** Lines of a text, a last line without its newline included. */
export function lineCount(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

const spotOf = (file: string, source: ts.SourceFile, node: ts.Node): Spot => ({
  file,
  line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1,
  text: node.getText(source).replace(/\s+/g, ' ').slice(0, 120),
});

/** `process.env.KPX_X` or `process.env['KPX_X']`. */
function isKpxEnv(node: ts.Node): boolean {
  const isProcessEnv = (e: ts.Expression) => ts.isPropertyAccessExpression(e) && e.name.text === 'env' && ts.isIdentifier(e.expression) && e.expression.text === 'process';
  if (ts.isPropertyAccessExpression(node)) return isProcessEnv(node.expression) && node.name.text.startsWith('KPX_');
  if (ts.isElementAccessExpression(node)) return isProcessEnv(node.expression) && ts.isStringLiteralLike(node.argumentExpression) && node.argumentExpression.text.startsWith('KPX_');
  return false;
}

/** Assignments (`=`, `??=`, …) to, and `delete` of, `process.env.KPX_*`; and `Object.assign(process.env, …)`. */
export function envWrites(file: string, source: ts.SourceFile): Spot[] {
  const out: Spot[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isBinaryExpression(node) && node.operatorToken.kind >= ts.SyntaxKind.FirstAssignment && node.operatorToken.kind <= ts.SyntaxKind.LastAssignment && isKpxEnv(node.left)) out.push(spotOf(file, source, node));
    else if (ts.isDeleteExpression(node) && isKpxEnv(node.expression)) out.push(spotOf(file, source, node));
    else if (ts.isCallExpression(node) && node.expression.getText(source) === 'Object.assign' && node.arguments[0]?.getText(source) === 'process.env') out.push(spotOf(file, source, node));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/**
 * The one function that reads `-o` where it names a destination (a path, or `-` for standard
 * output: report, redact, graph), not a format: src/cli/output.ts's destinationOf(). Its comparison
 * with `-` is the destination chosen once for every command; the same comparison anywhere else (a
 * command testing `opts.output === '-'` itself) is counted.
 */
export const DESTINATION_CHOICE = { file: 'src/cli/output.ts', fn: 'destinationOf' };

/** Inside the function declaration named `fn`? */
function insideFunction(node: ts.Node, fn: string): boolean {
  for (let p: ts.Node | undefined = node.parent; p; p = p.parent) if (ts.isFunctionDeclaration(p) && p.name?.text === fn) return true;
  return false;
}

/** `x.output === 'json'`, `output !== 'text'`, `opts.output == "yaml"`: an output format compared with a literal. */
export function outputTests(file: string, source: ts.SourceFile): Spot[] {
  const out: Spot[] = [];
  const destinationChoice = (node: ts.BinaryExpression, literal: ts.Expression) =>
    file === DESTINATION_CHOICE.file && ts.isStringLiteralLike(literal) && literal.text === '-' && insideFunction(node, DESTINATION_CHOICE.fn);
  const isOutput = (e: ts.Expression) => (ts.isIdentifier(e) && e.text === 'output') || (ts.isPropertyAccessExpression(e) && e.name.text === 'output');
  const equality = [ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken, ts.SyntaxKind.EqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsToken];
  const visit = (node: ts.Node): void => {
    if (ts.isBinaryExpression(node) && equality.includes(node.operatorToken.kind)) {
      const [a, b] = [node.left, node.right];
      const literal = isOutput(a) && ts.isStringLiteralLike(b) ? b : isOutput(b) && ts.isStringLiteralLike(a) ? a : undefined;
      if (literal && !destinationChoice(node, literal)) out.push(spotOf(file, source, node));
    }
    // `switch (opts.output) { case 'json': … }` chooses by hand too.
    if (ts.isSwitchStatement(node) && isOutput(node.expression)) out.push(spotOf(file, source, node.expression));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** The measures over a set of files (repository-relative paths). */
export function measure(files: SourceFiles): Measures {
  const functions: FunctionSize[] = [];
  const sizes: FileSize[] = [];
  const env: Spot[] = [];
  const outputs: Spot[] = [];
  for (const [file, text] of files) {
    const source = parse(file, text);
    functions.push(...functionSizes(file, source));
    sizes.push({ file, lines: lineCount(text) });
    env.push(...envWrites(file, source));
    if (file.startsWith('src/cli/')) outputs.push(...outputTests(file, source));
  }
  const bySize = <T extends { lines: number }>(a: T, b: T) => b.lines - a.lines;
  return { functions: functions.sort(bySize), files: sizes.sort(bySize), cycles: importCycles(importGraph(files)), envWrites: env, outputTests: outputs };
}

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Only the files under `prefix` (`src/`, `grammars/`). */
export function under(m: Measures, prefix: string): Measures {
  const inside = (x: { file: string }) => x.file.startsWith(prefix);
  return {
    functions: m.functions.filter(inside),
    files: m.files.filter(inside),
    cycles: m.cycles.filter((c) => c.component.some((f) => f.startsWith(prefix))),
    envWrites: m.envWrites.filter(inside),
    outputTests: m.outputTests.filter(inside),
  };
}

export const fnLine = (f: FunctionSize) => `${f.lines} ${f.file}:${f.line} ${f.name}`;
export const fileLine = (f: FileSize) => `${f.lines} ${f.file}`;

/** The numbers, for a person: counts and the top offenders. */
export function summary(m: Measures, label: string, top = 20): string {
  const over80 = m.functions.filter((f) => f.lines > 80);
  const over200 = m.functions.filter((f) => f.lines > 200);
  const over600 = m.files.filter((f) => f.lines > 600);
  return [
    `${label}: ${m.files.length} files, ${m.functions.length} functions; ${over200.length} functions over 200 lines, ${over80.length} over 80; ${over600.length} files over 600 lines; ${m.cycles.length} import cycles; ${m.envWrites.length} KPX_ environment writes; ${m.outputTests.length} hand-chosen output formats in src/cli`,
    '  longest functions:',
    ...m.functions.slice(0, top).map((f) => `    ${fnLine(f)}`),
    '  longest files:',
    ...m.files.slice(0, Math.min(top, 10)).map((f) => `    ${fileLine(f)}`),
  ].join('\n');
}
