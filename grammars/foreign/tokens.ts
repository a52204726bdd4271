/**
 * Tokens of the listings kpx recognises but does not read as kube-proxy's dataplane (README.md):
 * Cilium's `cilium service list` / `cilium-dbg service list` and `cilium bpf lb list` tables, and
 * tcpdump's one-line packet summaries. Whitespace separates tokens; columns are never relied on
 * (pastes re-flow them). Order matters (the first pattern that matches wins): addresses before
 * numbers, `=>` before `>`.
 */
import { createToken, Lexer } from '../common/chevrotain.js';

/** Every token below is also an `AnyToken`: the rest of a line is consumed without being modelled. */
export const AnyToken = createToken({ name: 'AnyToken', pattern: Lexer.NA });

export const WhiteSpace = createToken({ name: 'WhiteSpace', pattern: /[ \t]+/, group: Lexer.SKIPPED, start_chars_hint: [' ', '\t'] });

/** `10.96.0.10:53`, `[fd00::1]:443`, `10.96.0.10:53/UDP`, `10.96.0.10:53:TCP` (Cilium's frontends and backends). */
export const Endpoint = createToken({ categories: [AnyToken],
  name: 'Endpoint',
  label: 'address:port',
  pattern: /(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9A-Fa-f:.]+\]):\d+(?:[/:](?:TCP|UDP|SCTP|ANY|any|tcp|udp|sctp)(?::\w+)?)?(?![^\s,)\]])/,
});
/** tcpdump's `address.port` (`10.44.0.6.59056`, `10.36.0.5.domain`) and a bare IPv4 address. */
export const DottedAddress = createToken({ categories: [AnyToken], name: 'DottedAddress', label: 'address', pattern: /\d{1,3}(?:\.\d{1,3}){3}(?:\.[\w-]+)?(?![^\s:,])/ });
export const FatArrow = createToken({ categories: [AnyToken], name: 'FatArrow', label: "'=>'", pattern: /=>/ });
export const Arrow = createToken({ categories: [AnyToken], name: 'Arrow', label: "'>'", pattern: /->|>/ });
/** Cilium's backend state: `(active)`, `(terminating)`, `(maintenance)`, `(quarantined)`; bpf lb's `(REVNAT_ID)` `(SLOT)`. */
export const Paren = createToken({ categories: [AnyToken], name: 'Paren', label: '(…)', pattern: /\([^()\s]*\)/ });
/** Cilium's flags `[ClusterIP, non-routable]`, tcpdump's `[udp sum ok]`, `[S]`. */
export const Bracket = createToken({ categories: [AnyToken], name: 'Bracket', label: '[…]', pattern: /\[[^\]]*\]/ });
/** tcpdump's time of day `12:07:26.058844`. */
export const Time = createToken({ categories: [AnyToken], name: 'Time', label: 'time', pattern: /\d\d:\d\d:\d\d\.\d+/ });
export const Colon = createToken({ categories: [AnyToken], name: 'Colon', label: "':'", pattern: /:/ });
export const Num = createToken({ categories: [AnyToken], name: 'Num', label: 'number', pattern: /\d+(?![^\s,)\]:])/ });
export const Word = createToken({ categories: [AnyToken], name: 'Word', label: 'word', pattern: /[^\s[\]()>:=]+|[=:()\]]/ });

export const allTokens = [AnyToken, WhiteSpace, Endpoint, Time, DottedAddress, FatArrow, Arrow, Paren, Bracket, Num, Colon, Word];
