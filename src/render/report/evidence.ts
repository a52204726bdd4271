/**
 * The report's evidence: every dump line the report mentions, once, each with a stable anchor
 * (`id`) that every mention links to. Lines are registered while the answer is written (problems,
 * Services) and listed last, by file then line, with their text as the dump has it.
 *
 * Anchors are stable for the same inputs: `ev-<file's base name>-<line>` (a second file with the
 * same base name gets `-2`, in the order files are first mentioned), characters outside
 * `[A-Za-z0-9._-]` replaced, so the `id` is valid whatever a path holds.
 */

/** One line of a dump, as the report lists it. */
export interface EvidenceLine {
  readonly id: string;
  readonly file: string;
  readonly line: number;
  /** The line as written (untrusted; escaped by the renderers); undefined when the reader kept no text. */
  readonly text: string | undefined;
}

/** A mention of a dump line: the words shown and where they link. */
export interface EvidenceRef {
  readonly text: string;
  readonly href: string;
}

const baseName = (file: string) => file.split(/[\\/]/).pop() || file;
const slug = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_');

export class EvidenceIndex {
  private readonly lines = new Map<string, { line: EvidenceLine; text: string | undefined }>();
  private readonly fileSlugs = new Map<string, string>();
  private readonly usedSlugs = new Set<string>();

  /** The anchor prefix of a file: its base name, made unique among the files mentioned. */
  private fileSlug(file: string): string {
    const known = this.fileSlugs.get(file);
    if (known !== undefined) return known;
    const base = slug(baseName(file));
    let s = base;
    for (let n = 2; this.usedSlugs.has(s); n++) s = `${base}-${n}`;
    this.usedSlugs.add(s);
    this.fileSlugs.set(file, s);
    return s;
  }

  /** Register `file:line` (with its text, when known) and return the link to it. Line 0 (a whole file) links to nothing. */
  cite(file: string, line: number, text?: string): EvidenceRef | undefined {
    if (!(line > 0)) return undefined;
    const key = `${file}\u0000${line}`;
    let entry = this.lines.get(key);
    if (!entry) {
      const id = `ev-${this.fileSlug(file)}-${line}`;
      entry = { line: { id, file, line, text }, text };
      this.lines.set(key, entry);
    } else if (entry.text === undefined && text !== undefined) {
      // A later mention that carries the text fills it in.
      entry = { line: { ...entry.line, text }, text };
      this.lines.set(key, entry);
    }
    return { text: `${baseName(file)}:${line}`, href: `#${entry.line.id}` };
  }

  get size(): number {
    return this.lines.size;
  }

  /** Every registered line, grouped by file (in the order files were first mentioned), each file's lines in order. */
  byFile(): { file: string; lines: EvidenceLine[] }[] {
    const groups = new Map<string, EvidenceLine[]>();
    for (const { line } of this.lines.values()) {
      const g = groups.get(line.file) ?? [];
      g.push(line);
      groups.set(line.file, g);
    }
    return [...groups].map(([file, lines]) => ({ file, lines: lines.sort((a, b) => a.line - b.line) }));
  }
}
