/**
 * The lint rule contract (ARCHITECTURE.md §4.10): one module per rule, created with createRule(),
 * with an id, a default severity, a one-line description, long docs that say how to fix it, and
 * message templates (`{{name}}` placeholders). A rule's check() reads the shared LintContext and
 * reports findings that point at dump lines.
 */
import { printable } from '../source/index.js';
import type { LintContext } from './context.js';
import type { Related, Severity } from './finding.js';

export { SEVERITIES, severityRank, type Finding, type Related, type Severity } from './finding.js';

/** Inputs a rule cannot judge without; when one is missing the rule is not run and says so. */
export type RequiredInput = 'routes' | 'addresses' | 'links' | 'sysctl' | 'ipsets' | 'ipvs' | 'kube-proxy-log' | 'kube-proxy-config' | 'k8s-api' | 'conntrack' | 'conntrack-stats' | 'kernel' | 'iptables';

export const REQUIRED_INPUT_LABEL: Readonly<Record<RequiredInput, string>> = {
  routes: '`ip route`',
  addresses: '`ip addr`',
  links: '`ip -d link`',
  sysctl: '`sysctl`',
  ipsets: '`ipset list`',
  ipvs: '`ipvsadm -Ln`',
  'kube-proxy-log': "kube-proxy's log",
  'kube-proxy-config': "kube-proxy's configuration",
  'k8s-api': "the API's objects (`kubectl get svc,endpointslices,nodes,pods -A -o json`)",
  conntrack: '`conntrack -L` (or /proc/net/nf_conntrack)',
  'conntrack-stats': '`conntrack -S`',
  kernel: '`uname -r` (or `uname -a`)',
  iptables: '`iptables-save`',
};

/**
 * Which command runs a rule: `lint` (what is wrong with this node), or `migrate-check` (what will
 * behave differently once kube-proxy runs in another mode). One catalogue, one machinery.
 */
export type RuleCategory = 'lint' | 'migration';

export interface RuleMeta {
  /** Default 'lint'; 'migration' rules run only in `kpx migrate-check`. */
  readonly category?: RuleCategory;
  /** One line: what the rule finds. */
  readonly description: string;
  readonly severity: Severity;
  /** Longer explanation: why it matters and how to fix it (markdown). */
  readonly docs: string;
  /** Message templates by id, with `{{name}}` placeholders. */
  readonly messages: Readonly<Record<string, string>>;
  /** Inputs without which the rule cannot judge (it is then reported as not checked, never as clean). */
  readonly requires?: readonly RequiredInput[];
  /** Whether the rule concerns this node at all (e.g. IPVS rules on an IPVS node): only then is a missing input worth saying. */
  readonly relevant?: (ctx: LintContext) => boolean;
  /**
   * The rule judges its required inputs on their own (kube-proxy's log or configuration, a sysctl
   * dump, `ip -d link`, `conntrack -S`), with no ruleset: it runs when no iptables-save, nft or
   * ipvsadm dump was given, and then only such rules run.
   */
  readonly standalone?: boolean;
}

export interface Report {
  readonly messageId: string;
  readonly data?: Readonly<Record<string, string | number>>;
  readonly file: string;
  readonly line: number;
  readonly column?: number;
  readonly text?: string;
  readonly service?: string;
  readonly related?: readonly Related[];
  /** Only for rules whose findings differ in gravity (documented in the rule's docs); a config severity wins. */
  readonly severity?: Severity;
}

export interface RuleContext extends LintContext {
  report(r: Report): void;
}

export interface LintRule {
  readonly id: string;
  readonly meta: RuleMeta;
  check(ctx: RuleContext): void;
}

export function createRule(rule: LintRule): LintRule {
  for (const [id, m] of Object.entries(rule.meta.messages)) {
    if (!m.trim()) throw new Error(`lint rule ${rule.id}: message ${id} is empty`);
  }
  return Object.freeze(rule);
}

/** The rule's `**Fix:**` paragraph from its docs, on one line (what text output shows under findings). */
export function fixOf(rule: LintRule): string | undefined {
  const para = rule.meta.docs.split(/\n\s*\n/).find((p) => p.trimStart().startsWith('**Fix:**'));
  return para?.trim().replace(/^\*\*Fix:\*\*\s*/, '').replace(/\s*\n\s*/g, ' ');
}

/** Fill `{{name}}` placeholders; values are made printable (dump text may hold control characters). */
export function formatMessage(template: string, data: Readonly<Record<string, string | number>> = {}): string {
  return template.replace(/\{\{\s*(\w+)\s*\}\}/g, (whole, key: string) => (key in data ? printable(String(data[key]), 400) : whole));
}
