// ESLint: typescript-eslint's recommended rules, and the import direction the README states,
// checked rather than described (`npm test` runs this through test/layering.test.ts; so does CI).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import { layersRule } from './test/layering/layers.js';

export default tseslint.config(
  { ignores: ['dist/**', 'build/**', 'node_modules/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  // Tests read parsed JSON loosely and match terminal output (escape codes, aligned columns) on purpose.
  { files: ['test/**'], rules: { '@typescript-eslint/no-explicit-any': 'off', 'no-control-regex': 'off', 'no-regex-spaces': 'off' } },
  // Scripts run by node directly (benchmark, kernel-test helpers) use Node's globals.
  { files: ['**/*.mjs', '**/*.js'], languageOptions: { globals: globals.node } },
  // Dumps make lists of any length: spreading one into a call passes each element as an argument,
  // and past ~120,000 of them V8 throws "Maximum call stack size exceeded" (issue 34).
  {
    files: ['src/**/*.ts', 'grammars/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        // A spread of a literal list (`...(neg ? ['!'] : [])`) has a length the code fixes: allowed.
        { selector: "CallExpression[callee.property.name=/^(push|unshift|splice)$/] > SpreadElement:not([argument.type='ArrayExpression']):not([argument.type='ConditionalExpression'][argument.consequent.type=/^(ArrayExpression|TSAsExpression)$/][argument.alternate.type=/^(ArrayExpression|TSAsExpression)$/])", message: 'push(...list) overflows the stack on long lists: use appendAll() (src/source)' },
        { selector: "CallExpression[callee.object.name='Math'][callee.property.name=/^(max|min)$/] > SpreadElement", message: 'Math.max(...list) overflows the stack on long lists: use maxOf()/minOf() (src/source)' },
        { selector: "CallExpression[callee.property.name='fromCharCode'] > SpreadElement", message: 'String.fromCharCode(...list) overflows the stack on long lists' },
      ],
    },
  },
  // The layers: who may import whom (the table lives in test/layering/layers.js, next to its reasons).
  {
    files: ['src/**/*.ts', 'grammars/**/*.ts'],
    plugins: { kpx: { rules: { layers: layersRule } } },
    rules: { 'kpx/layers': 'error' },
  },
);
