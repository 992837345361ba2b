// ESLint for every JavaScript file of the repository (make lint): the web client (browser
// modules), the JavaScript client (browser and Node) with its example bot and tools.
import js from '@eslint/js';
import globals from 'globals';

export default [
  { ignores: ['**/node_modules/', 'build/', '.venv/', '.venv-oldest/', 'htmlcov/'] },
  js.configs.recommended,
  {
    files: ['clients/web/js/**/*.js', 'clients/js/dicehall.js'],
    languageOptions: { ecmaVersion: 2022, sourceType: 'module', globals: globals.browser },
  },
  {
    files: ['clients/js/examples/**/*.mjs', 'clients/js/tools/**/*.mjs', 'eslint.config.js'],
    languageOptions: { ecmaVersion: 2022, sourceType: 'module', globals: globals.node },
  },
  {
    rules: {
      'no-unused-vars': ['error', { argsIgnorePattern: '^_', caughtErrors: 'none' }],
      eqeqeq: ['error', 'always'],
      'no-var': 'error',
      'prefer-const': 'error',
    },
  },
];
