// Lint: the defects issue 17 found twice in new code, and their neighbours.
// Rules that only restyle code are left out; each rule here catches a bug.
import js from '@eslint/js';
import regexp from 'eslint-plugin-regexp';
import tseslint from 'typescript-eslint';
import { layersRule } from './eslint/layers.mjs';

// A repeated group (`(?:x{4})*`, `(a)+`, `(…){2,}`) costs V8 one backtrack
// entry per iteration: /^(?:[A-Za-z0-9+/]{4})*…$/ overflowed the stack on a
// 4.5 MB peer packet. The regexp plugin counts this as linear, so it is
// caught by shape; on input that is not ours, scan char codes instead.
const repeatedGroup = {
  selector: 'Literal[regex.pattern=/\\)(?:[*+]|\\{\\d+,\\})/]',
  message: 'A repeated group backtracks one V8 stack entry per iteration (a stack overflow at a few million chars): scan char codes on input that is not ours.',
};
// `{ a: 1, ...options }`: an option the caller set to undefined overwrites the
// default (issue 17). Resolve each field: `a: options.a ?? 1`.
const optionsOverDefaults = {
  selector: 'ObjectExpression > Property ~ SpreadElement:matches([argument.name=/(?:^o|O)pt(?:ion)?s$/], [argument.property.name=/(?:^o|O)pt(?:ion)?s$/])',
  message: 'Caller options spread over defaults: an undefined option overwrites its default. Resolve each field (`x: options.x ?? dflt`).',
};

const regexpRules = {
  'regexp/no-super-linear-backtracking': 'error',
  'regexp/no-super-linear-move': 'error',
};

export default tseslint.config(
  { ignores: ['dist/**', 'build/**', 'prebuilds/**', 'node_modules/**', 'test-results/**', 'bench/results/**', 'test/peers/.build/**'] },
  {
    files: ['src/**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked, regexp.configs['flat/recommended']],
    plugins: { noshell: { rules: { layers: layersRule } } },
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      ...regexpRules,
      // The layers of src/ (eslint/layers.mjs): a folder imports only from those below it.
      'noshell/layers': 'error',
      // Style only: \d for [0-9], \w, the i flag.
      'regexp/prefer-d': 'off',
      'regexp/prefer-w': 'off',
      'regexp/use-ignore-case': 'off',
      'no-restricted-syntax': ['error', repeatedGroup, optionsOverDefaults],
      // `return p` inside try: a rejection skips the catch.
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-misused-spread': 'error',
      '@typescript-eslint/no-deprecated': 'error',
      // A caught `unknown` passed on as it came is not a new non-Error rejection.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // Destructuring to leave keys out (`{ shell: _sh, ...spawnOptions }`).
      '@typescript-eslint/no-unused-vars': ['error', { varsIgnorePattern: '^_', argsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Typed EventEmitter overloads are declared by merging an interface into the class.
      '@typescript-eslint/no-unsafe-declaration-merging': 'off',
      // An async function with no await still returns the promise an interface asks for.
      '@typescript-eslint/require-await': 'off',
      // A callback that names the object being built (`let child; … child = new …`).
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      eqeqeq: ['error', 'smart'],
      'array-callback-return': 'error',
      'no-self-compare': 'error',
      'no-template-curly-in-string': 'error',
      'no-unmodified-loop-condition': 'error',
      'no-unreachable-loop': 'error',
    },
  },
  {
    // Tests, scripts and this config: not type-checked anywhere, so no type-aware rules.
    files: ['test/**/*.{ts,mts,cts,js,mjs}', 'scripts/**/*.{js,mjs}', '.ci/*.mjs', 'eslint/*.mjs', '*.{mjs,mts}'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    plugins: { regexp },
    rules: {
      ...regexpRules,
      '@typescript-eslint/no-unused-vars': ['error', { varsIgnorePattern: '^_', argsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Node's globals; TypeScript checks names in .ts files, nothing does in .mjs.
      'no-undef': 'off',
      // Tests read the JSON their child processes print.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // CommonJS on purpose: the fallback loader and the require() entry point.
    files: ['test/fallback/*.js', 'test/consumer/*.cts', 'test/env-race/*.js'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
