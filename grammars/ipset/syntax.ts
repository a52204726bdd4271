/**
 * The syntax of `ipset list` (plain, terse, XML) and `ipset save`: blocks, entries and skipped
 * lines with token positions, shared by the plain reader (./index.ts) and the XML one (./xml.ts).
 */
import type { Diagnostic } from '../common/source.js';
import type { OptionSyntax } from './options.js';
import type { MemberSyntax, Tok } from './parser.js';

/** A line that is not part of the model: paste noise, or text kpx skipped (with the reason). */
export interface SkippedLine {
  readonly line: number;
  readonly text: string;
  readonly kind: 'noise' | 'unsupported';
  readonly reason: string;
}

export interface HeaderSyntax {
  readonly label: Tok;
  readonly options: readonly OptionSyntax[];
}

/** One `Name: …` block of `ipset list`. */
export interface ListBlockSyntax {
  /** Line of the `Name:` label. */
  readonly line: number;
  readonly name: Tok;
  readonly type?: Tok;
  readonly revision?: Tok;
  readonly header?: HeaderSyntax;
  readonly size?: Tok;
  readonly references?: Tok;
  readonly entries?: Tok;
  /** Line of `Members:`; absent in the terse listing (`ipset list -t`). */
  readonly membersLine?: number;
  readonly members: readonly MemberSyntax[];
}

export interface IpsetListSyntax {
  readonly variant: 'plain' | 'xml';
  readonly blocks: readonly ListBlockSyntax[];
  readonly skipped: readonly SkippedLine[];
  readonly diagnostics: readonly Diagnostic[];
}

/** `text` is the line as it appeared in the file. */
export type SaveEntrySyntax =
  | { readonly kind: 'create'; readonly line: number; readonly text: string; readonly name: Tok; readonly type: Tok; readonly options: readonly OptionSyntax[] }
  | { readonly kind: 'add'; readonly line: number; readonly text: string; readonly name: Tok; readonly member: MemberSyntax };

export interface IpsetSaveSyntax {
  readonly entries: readonly SaveEntrySyntax[];
  readonly skipped: readonly SkippedLine[];
  readonly diagnostics: readonly Diagnostic[];
}

/** A `ListBlockSyntax` while its lines are read. */
export interface MutableBlock {
  line: number;
  name: Tok;
  type?: Tok;
  revision?: Tok;
  header?: HeaderSyntax;
  size?: Tok;
  references?: Tok;
  entries?: Tok;
  membersLine?: number;
  members: MemberSyntax[];
}
