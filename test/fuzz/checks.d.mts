/** Types for checks.mjs (the fuzz runner is plain JavaScript, run by node from dist/). */
export interface Problem {
  readonly kind: 'crash' | 'control' | 'unparsable';
  readonly detail: string;
}
export function check(command: string, output: string, code: number, stdout: string, stderr: string): Problem[];
