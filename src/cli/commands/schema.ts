/** `kpx schema [NAME]`: the JSON Schema of each JSON document kpx prints (src/app/small.ts): the list as text, a schema as JSON. */
import { schema } from '../../app/small.js';
import { finish } from '../emit.js';

export async function schemaAction(name: string | undefined): Promise<number> {
  return finish(schema(name), name === undefined ? 'text' : 'json', {});
}
