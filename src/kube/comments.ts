/**
 * kube-proxy's rule comments: `"ns/name:port cluster IP"`, `"ns/name:port -> 10.244.0.3:53"`,
 * `"ns/name:port has no endpoints"`, `"masquerade traffic for ns/name:port external destinations"`…
 * The port name may be empty (`"default/nginx:"`, old `"default/heapster: cluster IP"`).
 */

export interface CommentIdentity {
  readonly namespace: string;
  readonly name: string;
  /** null for an unnamed port. */
  readonly portName: string | null;
  /** What follows the name: `cluster IP`, `external IP`, `loadbalancer IP`, `has no endpoints`, `-> 10.0.0.1:80`… */
  readonly rest: string;
}

const NAMED = /(?:^|\s)([a-z0-9]([-a-z0-9.]*[a-z0-9])?)\/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)(?::([-a-zA-Z0-9]*))?(?=\s|$)/;

export function parseServiceComment(text: string): CommentIdentity | undefined {
  const m = NAMED.exec(text);
  if (!m) return undefined;
  const rest = text.slice((m.index ?? 0) + m[0].length).trim();
  return { namespace: m[1], name: m[3], portName: m[5] ? m[5] : null, rest };
}

/** `-> 10.244.0.3:53` in newer endpoint comments. */
export function endpointFromComment(rest: string): string | undefined {
  const m = /^->\s+(\S+)/.exec(rest);
  return m?.[1];
}
