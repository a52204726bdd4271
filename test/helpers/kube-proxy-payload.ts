/**
 * A kube-proxy iptables-restore payload for tests: the nat table's kube-proxy part of an
 * iptables-save (its `:KUBE-…` declarations and `-A KUBE-…` rules, as kube-proxy restores them
 * with --noflush), with one bad rule put into a Service's KUBE-SVC chain.
 */
export interface BadPayload {
  readonly lines: readonly string[];
  /** 1-based payload line of the bad rule. */
  readonly badLine: number;
  /** `ns/name:port` of the Service whose chain holds it. */
  readonly service: string;
}

export function natPayloadWithBadRule(save: string, badTarget = 'KUBE-MARK-DROP-MISSING', want?: string): BadPayload {
  const lines = save.split('\n');
  const start = lines.indexOf('*nat');
  const end = lines.indexOf('COMMIT', start);
  if (start < 0 || end < 0) throw new Error('no nat table in the iptables-save');
  const nat = lines.slice(start + 1, end);
  const out = ['*nat', ...nat.filter((l) => /^:KUBE-/.test(l)).map((l) => l.replace(/\[\d+:\d+\]$/, '[0:0]'))];
  const rules = nat.filter((l) => /^-A KUBE-/.test(l));
  // The first Service chain rule whose comment names a Service (`"ns/name:port -> …"` or `"ns/name:port"`).
  const at = rules.findIndex((l) => /^-A KUBE-SVC-/.test(l) && /--comment "?([a-z0-9-]+\/[a-z0-9-]+:[a-z0-9-]*)/.test(l) && (want === undefined || new RegExp(`"${want}[" ]`).test(l)));
  if (at < 0) throw new Error('no commented KUBE-SVC rule');
  const chain = /^-A (\S+)/.exec(rules[at])![1];
  const service = /--comment "?([a-z0-9-]+\/[a-z0-9-]+:[a-z0-9-]*)/.exec(rules[at])![1];
  const bad = `-A ${chain} -m comment --comment "${service}" -j ${badTarget}`;
  rules.splice(at, 0, bad);
  out.push(...rules, 'COMMIT');
  return { lines: out, badLine: out.indexOf(bad) + 1, service };
}

/** The payload and a tool's error as kube-proxy (≥1.22, -v=5) logs them: structured klog, `rules=<` and `err=<` blocks. */
export function kubeProxyLogOf(payload: readonly string[], toolError: string, exitStatus: number): string {
  const block = (lines: readonly string[]) => [...lines.map((l) => `\t${l}`), ' >'];
  return [
    'I0312 14:02:10.981000       1 server_linux.go:169] "Using iptables Proxier"',
    'I0312 14:02:11.118100       1 proxier.go:1520] "Restoring iptables rules" rules=<',
    ...block(payload),
    'E0312 14:02:11.118202       1 proxier.go:1536] "Failed to execute iptables-restore" err=<',
    ...block([`exit status ${exitStatus}: ${toolError.trim().split('\n')[0]}`, ...toolError.trim().split('\n').slice(1)]),
    'I0312 14:02:11.118300       1 proxier.go:811] "Sync failed" retryingTime="30s"',
    'I0312 14:02:11.118400       1 proxier.go:1600] "Closing local port" port="\\"nodePort for shop/web:http\\" (:30080/tcp4)"',
    '',
  ].join('\n');
}
