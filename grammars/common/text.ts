/**
 * Normalising real-world dump text (FORMATS.md §6): BOM, CRLF, a missing final newline,
 * and the noise people paste around dumps (shell prompts, code fences, `EOF`, `...`).
 * Line numbers always refer to the original file.
 */

export interface InputText {
  /** Lines without their terminators; index i is line i + 1 of the file. */
  readonly lines: readonly string[];
  readonly hadBom: boolean;
  readonly hadCrlf: boolean;
  /** The file did not end with a newline (a possibly truncated last line). */
  readonly missingFinalNewline: boolean;
}

export function splitInput(text: string): InputText {
  const hadBom = text.charCodeAt(0) === 0xfeff;
  if (hadBom) text = text.slice(1);
  const hadCrlf = text.includes('\r');
  const lines = text.split('\n');
  let missingFinalNewline = false;
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  else if (text.length > 0) missingFinalNewline = true;
  if (hadCrlf) {
    for (let i = 0; i < lines.length; i++) {
      const l = lines[i];
      if (l.includes('\r')) lines[i] = l.replace(/\r+$/, '').replace(/\r/g, '');
    }
  }
  return { lines, hadBom, hadCrlf, missingFinalNewline };
}

export type NoiseKind = 'prompt' | 'fence' | 'eof' | 'elision';

const FENCE = /^\s*(```|~~~)/;
const EOF_LINE = /^\s*(EOF|'EOF'|"EOF")\s*$/;
const ELISION = /^\s*(\.\.\.|…|\[\.\.\.\]|# \.\.\.|\(\.\.\.\)|\.\.\.\s*\(.*\))\s*$/;
/**
 * Shell prompts: `root@node:/# cmd`, `[root@k8s-ctr ~]# cmd`, `$ cmd`, `# ` is NOT a prompt on
 * its own (iptables-save comments start with `# `), so a `#` prompt needs the user@host part.
 */
const PROMPT = /^\s*(\[[^\]\s]+@[^\]]+\][#$]|[A-Za-z0-9_.-]+@[A-Za-z0-9_.-]+:[^\s#$]*[#$]|\$|>)\s+\S/;
const PASSWORD_PROMPT = /^\s*\S+@\S+'s password:\s*$/;

/** Is this line paste noise rather than dump content? */
export function noiseKind(line: string): NoiseKind | undefined {
  if (FENCE.test(line)) return 'fence';
  if (EOF_LINE.test(line)) return 'eof';
  if (ELISION.test(line)) return 'elision';
  if (PROMPT.test(line) || PASSWORD_PROMPT.test(line)) return 'prompt';
  return undefined;
}

/** Leading whitespace width in characters (tabs count as one column, as editors report columns). */
export function indentOf(line: string): number {
  let i = 0;
  while (i < line.length && (line[i] === ' ' || line[i] === '\t')) i++;
  return i;
}
