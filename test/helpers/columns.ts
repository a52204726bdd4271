/**
 * For tests of what a text output says, not how it is laid out: lines whole, as wide as they come
 * (COLUMNS=1000) for the file's tests, the environment put back afterwards. The layout — every
 * line within COLUMNS, wrapped under its item — is test/render/width.test.ts's subject.
 */
import { afterAll, beforeAll } from 'vitest';

export function unwrappedText(): void {
  const saved = process.env.COLUMNS;
  beforeAll(() => {
    process.env.COLUMNS = '1000';
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.COLUMNS;
    else process.env.COLUMNS = saved;
  });
}
