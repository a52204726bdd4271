/** ip rule (text and JSON) → PolicyRuleDump. */
import { parseIpRule } from '../../grammars/iprule/index.js';
import { diagnostic, type Diagnostic } from '../source/index.js';
import type { FormatParser, ParsedInput } from '../../grammars/common/format.js';
import { policyRuleFromFields, type PolicyRule, type PolicyRuleDump } from '../model/policy.js';

/** IPv6 when any address is IPv6; an `all`-only dump is read as the family of the file's other rules. */
function familyOf(fields: Readonly<Record<string, string>>): 4 | 6 | undefined {
  for (const k of ['from', 'to']) if (fields[k] && fields[k] !== 'all') return fields[k].includes(':') ? 6 : 4;
  return undefined;
}

export function extractIpRule(text: string, file: string): ParsedInput<PolicyRuleDump> {
  const syn = parseIpRule(text, file);
  const diagnostics: Diagnostic[] = [...syn.diagnostics];
  const unsupported = [...syn.unsupported];
  const known = syn.rules.map((r) => familyOf(r.fields)).find((f) => f !== undefined);
  // `ip -6 rule` prints the same `from all lookup local` defaults: the file's family comes from any address in it.
  const fileFamily: 4 | 6 = known ?? 4;
  const rules: PolicyRule[] = [];
  for (const r of syn.rules) {
    const out = policyRuleFromFields(r.fields, r.priority, r.not, familyOf(r.fields) ?? fileFamily, { line: r.line, file, text: r.text });
    if (typeof out === 'string') {
      unsupported.push({ line: r.line, text: r.text, reason: out });
      diagnostics.push(diagnostic('warning', 'ip-rule/bad-value', out, file, r.line, 1));
    } else rules.push(out);
  }
  return { format: 'ip-rule', file, data: { rules, unsupported }, diagnostics, counts: { rules: rules.length } };
}

interface JsonRule {
  priority?: number;
  not?: null;
  src?: string;
  srclen?: number;
  dst?: string;
  dstlen?: number;
  fwmark?: string;
  fwmask?: string;
  iif?: string;
  oif?: string;
  table?: string;
  goto?: number;
  action?: string;
}

export function extractIpRuleJson(text: string, file: string): ParsedInput<PolicyRuleDump> {
  const diagnostics: Diagnostic[] = [];
  let json: unknown;
  try {
    json = JSON.parse(text.replace(/^\ufeff/, ''));
  } catch (e) {
    diagnostics.push(diagnostic('error', 'parse/bad-json', `not valid JSON: ${(e as Error).message}`, file, 1, 1));
    return { format: 'ip-rule-json', file, data: { rules: [], unsupported: [] }, diagnostics, counts: { rules: 0 } };
  }
  const list = Array.isArray(json) ? (json as JsonRule[]) : [];
  const rules: PolicyRule[] = [];
  const addr = (a: string | undefined, len: number | undefined) => (a === undefined ? undefined : a === 'all' ? 'all' : len !== undefined ? `${a}/${len}` : a);
  const family = list.some((r) => (r.src ?? '').includes(':') || (r.dst ?? '').includes(':')) ? 6 : 4;
  list.forEach((r, i) => {
    const fields: Record<string, string> = {};
    const from = addr(r.src, r.srclen);
    const to = addr(r.dst, r.dstlen);
    if (from) fields.from = from;
    if (to) fields.to = to;
    if (r.fwmark) fields.fwmark = r.fwmask ? `${r.fwmark}/${r.fwmask}` : r.fwmark;
    if (r.iif) fields.iif = r.iif;
    if (r.oif) fields.oif = r.oif;
    if (r.table) fields.lookup = r.table;
    if (r.goto !== undefined) fields.goto = String(r.goto);
    if (r.action) fields[r.action] = '';
    const out = policyRuleFromFields(fields, r.priority ?? 0, 'not' in r, family, { line: i + 1, file, text: JSON.stringify(r) });
    if (typeof out !== 'string') rules.push(out);
  });
  return { format: 'ip-rule-json', file, data: { rules, unsupported: [] }, diagnostics, counts: { rules: rules.length } };
}

export const ipRuleParser: FormatParser<PolicyRuleDump> = { id: 'ip-rule', parse: extractIpRule };
export const ipRuleJsonParser: FormatParser<PolicyRuleDump> = { id: 'ip-rule-json', parse: extractIpRuleJson };
