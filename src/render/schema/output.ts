/** `kpx schema [NAME]`: the list of JSON documents, or one document's JSON Schema. */
import { maxOf } from '../../source/index.js';
import { renderJson } from '../json.js';
import { SCHEMAS, SCHEMA_VERSION, type DocumentName } from '../schemas/index.js';
import { jsonText, type Rendered } from '../output.js';

export interface SchemaListResult {
  readonly kind: 'schema-list';
}
export interface SchemaResult {
  readonly kind: 'schema';
  readonly name: DocumentName;
}

export const schemaListText = (): Rendered => {
  const names = Object.keys(SCHEMAS) as DocumentName[];
  const width = maxOf(names.map((n) => n.length), 0);
  return { via: 'text', text: names.map((n) => `${n.padEnd(width)}  v${SCHEMA_VERSION[n]}  ${SCHEMAS[n].command}`).join('\n') + '\n' };
};
export const schemaJson = (r: SchemaResult): Rendered => jsonText(renderJson(SCHEMAS[r.name].schema, { plain: true }));
