// ESLint flat config: type-aware typescript-eslint (strict + stylistic) over src/, test/ and bench/.
// Formatting is Prettier's job (npm run format); no rule here concerns layout. Every rule tuned or
// turned off below says why; everything else in the two presets is on and clean.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules'] },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.strictTypeChecked, ...tseslint.configs.stylisticTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Layout is Prettier's: it breaks long member chains before `[`, which this rule would read as an
      // ASI hazard (Prettier never makes one). The one layout rule in the presets; eslint-config-prettier
      // turns off the same.
      'no-unexpected-multiline': 'off',
      // Numbers, booleans and null in messages, keys and file names are printed on purpose; objects,
      // arrays, any and never (which print as "[object Object]" or worse) stay flagged.
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        {
          allowNumber: true,
          allowBoolean: true,
          allowNullish: true,
          allowAny: false,
          allowRegExp: false,
          allowNever: false,
          allowArray: false,
        },
      ],
      // node:test's test() and describe() return promises that the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite'] }] },
      ],
      // tsconfig leaves noUncheckedIndexedAccess off, so every array and typed-array read is typed as
      // present and the deliberate bounds checks after them (heap tops, slab lists, /proc fields) read
      // as "unnecessary"; narrowing also misses flags set by callbacks across an await.
      '@typescript-eslint/no-unnecessary-condition': 'off',
      // `async` without `await` is how a Promise-returning interface method (Backend, CopyPool, sleep
      // stubs in tests) is implemented synchronously: a throw still becomes a rejection.
      '@typescript-eslint/require-await': 'off',
      // One-line callbacks (`(x) => this.onMessage(x)`, `() => resolve()`) are the house style; a void
      // value returned from a void function (`return done();`) is an early exit, not a confusion.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true, ignoreVoidReturningFunctions: true }],
      // `x!` states the one assumption (not undefined) where `as T` could cast to anything; it marks
      // reads the types cannot prove (map lookups of built-in keys, pop() on a non-empty array).
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Re-rejecting what a catch received (unknown) keeps the original error, whatever it is.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // T[] for simple element types, Array<{ ... }> where the element type is long: the readable one.
      '@typescript-eslint/array-type': ['error', { default: 'array-simple' }],
      // An empty private constructor is how a class with an async factory (CopyPool.create) forbids `new`.
      '@typescript-eslint/no-empty-function': ['error', { allow: ['private-constructors'] }],
      // `_name` marks a binding kept for its position or to drop a field from a rest copy.
      '@typescript-eslint/no-unused-vars': ['error', { varsIgnorePattern: '^_', argsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    // The CommonJS bootstrap (bin/) and this file: plain JavaScript, no type information.
    files: ['**/*.cjs', '**/*.js'],
    extends: [js.configs.recommended],
    languageOptions: { globals: { process: 'readonly', require: 'readonly', module: 'writable', __dirname: 'readonly' } },
  },
);
