/** `kpx schema [NAME]`: the JSON Schema of each JSON document kpx prints, from the schemas it is tested against. */
import { writeText } from '../output.js';
import { renderJson } from '../../render/json.js';
import { SCHEMAS, SCHEMA_VERSION, type DocumentName } from '../../render/schemas/index.js';
import { ExitCode, UsageError } from '../exit.js';
import { writeJsonOut } from '../output.js';
import { maxOf } from '../../source/index.js';

export async function schemaAction(name: string | undefined): Promise<number> {
  const names = Object.keys(SCHEMAS) as DocumentName[];
  if (name === undefined) {
    const width = maxOf(names.map((n) => n.length), 0);
    writeText(names.map((n) => `${n.padEnd(width)}  v${SCHEMA_VERSION[n]}  ${SCHEMAS[n].command}`).join('\n') + '\n');
    return ExitCode.Ok;
  }
  if (!Object.hasOwn(SCHEMAS, name)) throw new UsageError(`no schema named ${name}: expected one of ${names.join(', ')}`);
  writeJsonOut(renderJson(SCHEMAS[name as DocumentName].schema, { plain: true }));
  return ExitCode.Ok;
}
