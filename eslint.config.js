// ESLint flat config: type-aware typescript-eslint (strict + stylistic) over src/, test/ and bench/.
// Formatting is Prettier's job (npm run format); no rule here concerns layout.
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
    rules: {},
  },
  {
    // The CommonJS bootstrap (bin/) and this file: plain JavaScript, no type information.
    files: ['**/*.cjs', '**/*.js'],
    extends: [js.configs.recommended],
    languageOptions: { globals: { process: 'readonly', require: 'readonly', module: 'writable' } },
  },
);
