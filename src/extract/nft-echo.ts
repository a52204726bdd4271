/**
 * nft's echo of a command it refused, read with the nft grammar (not pattern-matched):
 *
 *   /dev/stdin:120:39-52: Error: Could not process rule: No such file or directory
 *   add rule ip kube-proxy nat-prerouting fib daddr type local jump nodeport
 *                                         ^^^^^^^^^^^^^^
 *
 * nftables prints the input line and carets under the location of the failing expression
 * (src/erec.c erec_print: the location's first/last column on that line). The echoed line is one
 * command of the transaction kube-proxy's nftables mode writes, so the transaction grammar gives
 * its verb, table, chain or set, the statements of a rule with their columns (which one the
 * carets fall in), the chains its verdicts name and its comment — whatever kind of command it is.
 */
import { parseNftSyntax } from '../../grammars/nft/index.js';
import { operandText, valueText, type SynCommand, type SynExpr } from '../../grammars/common/nft-syntax.js';
import type { NftErrorEcho } from '../model/kube-proxy.js';

type EchoCommand = Pick<NftErrorEcho, 'verb' | 'object' | 'family' | 'table' | 'chain' | 'set' | 'expression' | 'targets' | 'comment'>;

/** nft's own text of a rule statement (close to how `nft list` prints it). */
export function exprText(e: SynExpr): string {
  switch (e.kind) {
    case 'match':
      return `${operandText(e.left)}${e.op === 'implicit' ? '' : ` ${e.op}`} ${operandText(e.right)}`;
    case 'verdict':
      return e.chain !== undefined ? `${e.verdict} ${e.chain}` : e.verdict;
    case 'vmap':
      return `${operandText(e.key)} vmap ${e.map.kind === 'ref' ? `@${e.map.name}` : '{ … }'}`;
    case 'dnat':
    case 'snat':
      return e.map ? `${e.kind} to ${operandText(e.map.key)} map ${e.map.map.kind === 'ref' ? `@${e.map.map.name}` : '{ … }'}` : e.kind;
    case 'masquerade':
    case 'redirect':
      return e.kind;
    case 'mark-set':
      return `${e.target} mark set ${operandText(e.expr)}`;
    case 'assign':
      return `${operandText(e.left)} set ${operandText(e.expr)}`;
    case 'counter':
      return 'counter';
    case 'update-set':
      return `${e.op} @${e.set} { ${operandText(e.key)} }`;
    case 'reject':
      return e.with !== undefined ? `reject with ${e.with}` : 'reject';
    case 'xt':
      return `xt ${e.match ? 'match' : 'target'} ${e.name}`;
    case 'log':
    case 'limit':
    case 'statement':
    case 'unsupported':
      return e.text;
  }
}

/** The statement whose text the carets at columns from–to fall in: the last one starting at or before `from`. */
function expressionAt(exprs: readonly SynExpr[], from: number): SynExpr | undefined {
  let found: SynExpr | undefined;
  for (const e of exprs) if (e.column <= from && (!found || e.column >= found.column)) found = e;
  return found;
}

function targetsOf(c: SynCommand): string[] {
  const out = new Set<string>();
  for (const e of c.rule?.exprs ?? []) if (e.kind === 'verdict' && e.chain !== undefined) out.add(e.chain);
  for (const el of [...(c.elements ?? []), ...(c.set?.elements ?? [])]) if (el.value?.kind === 'verdict' && el.value.chain !== undefined) out.add(el.value.chain);
  return [...out];
}

/** Read the echoed command line; undefined when the grammar does not see one command in it. */
export function readEchoedCommand(command: string, from: number): EchoCommand | undefined {
  const { doc } = parseNftSyntax(command, 'nft echo');
  const c = doc.commands?.length === 1 ? doc.commands[0] : undefined;
  if (!c || c.object === 'block') return undefined;
  const setLike = c.object === 'set' || c.object === 'map' || c.object === 'element';
  const rule = c.object === 'rule' ? c.rule : undefined;
  const at = rule ? expressionAt(rule.exprs, from) : undefined;
  const targets = targetsOf(c);
  const elementVerdict = c.elements?.find((el) => el.value && el.column <= from)?.value;
  return {
    verb: c.verb,
    object: c.object,
    family: c.family,
    ...(c.table !== undefined ? { table: c.table } : {}),
    ...(!setLike && c.name !== undefined ? { chain: c.name } : {}),
    ...(setLike && c.name !== undefined ? { set: c.name } : {}),
    ...(at ? { expression: { kind: at.kind, text: exprText(at) } } : elementVerdict ? { expression: { kind: 'element', text: valueText(elementVerdict) } } : {}),
    ...(targets.length ? { targets } : {}),
    ...(rule?.comment !== undefined ? { comment: rule.comment } : {}),
  };
}
