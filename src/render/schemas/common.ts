/**
 * Building blocks for kpx's JSON Schemas (draft-07). A schema here is plain data: the shipped
 * `kpx schema NAME` prints it, and the tests validate every command's real output against it.
 */

export type Schema = Readonly<Record<string, unknown>>;

export const str: Schema = { type: 'string' };
export const int: Schema = { type: 'integer' };
export const num: Schema = { type: 'number' };
export const bool: Schema = { type: 'boolean' };
export const nullable = (s: Schema): Schema => ({ anyOf: [s, { type: 'null' }] });
export const arr = (items: Schema): Schema => ({ type: 'array', items });
export const oneOfStr = (...values: string[]): Schema => ({ type: 'string', enum: values });
/** An object whose values all have one schema (a map keyed by name). */
export const mapOf = (values: Schema): Schema => ({ type: 'object', additionalProperties: values });

/**
 * An object with these `required` and `optional` members. `closed` objects refuse members the
 * schema does not name: a new field must be added here (and to docs/json.md or the command's page) before a test passes.
 * Open objects (a step's code-specific fields, a dump's model) accept more.
 */
export function obj(required: Record<string, Schema>, optional: Record<string, Schema> = {}, opts: { closed?: boolean; description?: string } = {}): Schema {
  return {
    type: 'object',
    ...(opts.description ? { description: opts.description } : {}),
    required: Object.keys(required),
    properties: { ...required, ...optional },
    additionalProperties: !(opts.closed ?? true),
  };
}

/** A command's whole document: `schemaVersion` first, then the body's members. */
export function document(name: string, version: number, title: string, body: Schema): Schema {
  const b = body as { required: string[]; properties: Record<string, Schema>; additionalProperties: boolean };
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: `https://kpx.invalid/schemas/${name}/v${version}.json`,
    title,
    type: 'object',
    required: ['schemaVersion', ...b.required],
    properties: { schemaVersion: { const: version, description: `the version of this document's shape; bumped when a member is removed or changes meaning (added members do not bump it)` }, ...b.properties },
    additionalProperties: b.additionalProperties,
  };
}

/** A dump line that is evidence for something kpx says. */
export const evidence = obj({ file: str, line: int, text: str }, { where: str });

/** A parse diagnostic, as `inspect` and `dump` print it. */
export const diagnostic = obj({ severity: oneOfStr('error', 'warning', 'info'), code: str, message: str, line: int, column: int }, { expected: str, found: str, file: str, endLine: int, endColumn: int, hint: str });

/** A reason or caveat of the judgement (src/judge/types.ts): its code, its words, and code-specific fields (open). */
const judged = (...codes: string[]): Schema => obj({ code: oneOfStr(...codes), message: str }, {}, { closed: false });
export const judgementReason = judged('endpoint-chains-absent', 'dump-not-whole', 'endpoint-address-unknown', 'table-inferred', 'table-cut', 'scenarios-not-followed', 'walk-unknown');
export const judgementCaveat = judged('rules-may-be-stale', 'draining-real-servers', 'second-view');
/** The unknown part of an answer: the share the evidence cannot give (null: not a share) and why. */
export const unknownPart = nullable(obj({ share: nullable(num), reasons: arr(judgementReason) }));
