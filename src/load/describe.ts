/**
 * What an input that no reader takes looks like, in a few words, for `kpx inspect` and the commands'
 * "not used" line: a klog log of another program (with its source files), JSON or YAML of some kind,
 * a terminal session (with its commands), another program's timestamped log, or prose. Cheap: the head
 * lines only, no reader loaded. Undefined when nothing can be said.
 */
import { promptCommand, splitInput } from '../../grammars/common/text.js';

const KLOG = /^\s*(?:\S.{0,80}?\s)?[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ ([\w.-]+\.go):\d+\]/;
const KIND_YAML = /^\s*kind:\s*["']?([A-Za-z][\w.-]*)/;
const KIND_JSON = /"kind"\s*:\s*"([A-Za-z][\w.-]*)"/g;
const YAML_KEY = /^\s*(?:- )?[A-Za-z_][\w.-]*:(?:\s|$)/;
const TIMESTAMPED = /^\s*(?:\[)?(?:\d{4}[-/]\d\d[-/]\d\d[T ]\d\d:\d\d|\d\d:\d\d:\d\d[.,]\d|[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|time="?\d{4}-)/;
const WORDS = /^[\s"'(*-]*[A-Za-z][A-Za-z'’-]*(?:[ ,;]+[A-Za-z][A-Za-z'’,.;:-]*){3,}/;

function list(xs: readonly string[], max = 3): string {
  const u = [...new Set(xs)];
  const shown = u.slice(0, max).map((x) => `\`${x.length > 60 ? x.slice(0, 57) + '…' : x}\``);
  return shown.join(', ') + (u.length > max ? ` and ${u.length - max} more` : '');
}

export function describeUnknown(text: string): string | undefined {
  const head = text.length > 64 * 1024 ? text.slice(0, 64 * 1024) : text;
  const lines = splitInput(head).lines.slice(0, 400);
  const content = lines.filter((l) => l.trim() !== '');
  if (!content.length) return undefined;
  const commands = content.map((l) => promptCommand(l)).filter((c): c is string => c !== undefined && c.trim() !== '');
  const sources = content.map((l) => KLOG.exec(l)?.[1]).filter((x): x is string => x !== undefined);
  const first = content[0].trimStart();
  const session = commands.length ? ` (a terminal session: ${list(commands.map((c) => c.trim()))})` : '';
  if (sources.length >= 2 && sources.length * 3 >= content.length)
    return `a klog-format log of a program other than kube-proxy (source files ${list(sources)})${session}`;
  if (first.startsWith('{') || first.startsWith('[')) {
    const kinds = [...head.matchAll(KIND_JSON)].map((m) => m[1]);
    return kinds.length ? `JSON of kind ${list(kinds)}${session}` : `JSON${session}`;
  }
  const kinds = content.map((l) => KIND_YAML.exec(l)?.[1]).filter((x): x is string => x !== undefined);
  if (kinds.length) return `YAML of kind ${list(kinds)}${session}`;
  if (content.filter((l) => YAML_KEY.test(l)).length * 2 >= content.length && content.length >= 2) return `YAML (no kind)${session}`;
  if (content.filter((l) => TIMESTAMPED.test(l)).length * 2 >= content.length) return `another program's timestamped log${session}`;
  if (commands.length) return `a terminal session: ${list(commands.map((c) => c.trim()))}, with output kpx does not recognise`;
  if (content.filter((l) => WORDS.test(l)).length * 2 >= content.length) return 'prose, without command output kpx recognises';
  return undefined;
}
