/**
 * The line grammar of the listings that are not kube-proxy's (tokens: ./tokens.ts):
 *
 *   ciliumServiceRow := [Num] Endpoint Word+ [backend]          (ID, frontend, service type, first backend)
 *   backend          := Num '=>' Endpoint [Paren]               (`1 => 10.0.1.21:53 (active)`)
 *   bpfLbRow         := [Endpoint] Endpoint Paren* [Bracket] …  (service address, backend (REVNAT) (SLOT) [flags])
 *   tcpdumpLine      := any* host '>' host ':' any*             (any: up to the token before the '>'; host: address.port or a name)
 *
 * Each rule returns what kpx counts (services, backends, packets); the rest of a line is read as words.
 */
import { EmbeddedActionsParser, type IToken } from '../common/chevrotain.js';
import * as T from './tokens.js';

export type ForeignLine =
  | { readonly kind: 'service'; readonly frontend: string; readonly backend?: string; readonly state?: string }
  | { readonly kind: 'backend'; readonly backend: string; readonly state?: string }
  | { readonly kind: 'lb'; readonly frontend?: string; readonly backend: string }
  | { readonly kind: 'packet'; readonly from: string; readonly to: string };

export class ForeignLineParser extends EmbeddedActionsParser {
  constructor() {
    super(T.allTokens, { recoveryEnabled: false });
    this.performSelfAnalysis();
  }

  private rest = this.RULE('rest', (): void => {
    this.MANY(() => this.CONSUME(T.AnyToken));
  });

  public backend = this.RULE('backend', (): ForeignLine => {
    this.CONSUME(T.Num);
    this.CONSUME(T.FatArrow);
    const b = this.CONSUME(T.Endpoint);
    const s = this.OPTION(() => this.CONSUME(T.Paren));
    return { kind: 'backend', backend: b.image, ...(s ? { state: s.image } : {}) };
  });

  public service = this.RULE('service', (): ForeignLine => {
    this.OPTION(() => this.CONSUME(T.Num));
    const f = this.CONSUME(T.Endpoint);
    this.AT_LEAST_ONE(() => this.CONSUME(T.Word));
    // A row cut inside its backend (`1 => 10.244.1.67:80/TC`) still names its frontend: the rest is words.
    const b = this.OPTION2({ GATE: () => this.LA(2).tokenType === T.FatArrow && this.LA(3).tokenType === T.Endpoint, DEF: () => this.SUBRULE(this.backend) });
    this.SUBRULE(this.rest);
    return { kind: 'service', frontend: f.image, ...(b && b.kind === 'backend' ? { backend: b.backend, ...(b.state ? { state: b.state } : {}) } : {}) };
  });

  public lb = this.RULE('lb', (): ForeignLine => {
    const first = this.CONSUME(T.Endpoint);
    const second = this.OPTION(() => this.CONSUME2(T.Endpoint));
    this.AT_LEAST_ONE(() => this.CONSUME(T.Paren));
    this.SUBRULE(this.rest);
    return second ? { kind: 'lb', frontend: first.image, backend: second.image } : { kind: 'lb', backend: first.image };
  });

  /** `[time] [iface dir] IP host.port > host.port: …`; -v's indented address line has no time before it. */
  public packet = this.RULE('packet', (): ForeignLine => {
    this.MANY({ GATE: () => this.LA(2).tokenType !== T.Arrow, DEF: () => this.CONSUME(T.AnyToken) });
    const from = this.SUBRULE(this.host);
    this.CONSUME(T.Arrow);
    const to = this.SUBRULE2(this.host);
    this.CONSUME(T.Colon);
    this.SUBRULE(this.rest);
    return { kind: 'packet', from, to };
  });

  /** `10.44.0.6.59056`, `10.36.0.5.domain`, or a name tcpdump resolved (`alpine-network-tools.43468`). */
  private host = this.RULE('host', (): string => this.OR([{ ALT: () => this.CONSUME(T.DottedAddress).image }, { ALT: () => this.CONSUME(T.Word).image }]));

  parseLine(tokens: IToken[], rule: 'service' | 'backend' | 'lb' | 'packet'): ForeignLine | undefined {
    this.input = tokens;
    const out = this[rule]();
    return this.errors.length ? undefined : out;
  }
}
