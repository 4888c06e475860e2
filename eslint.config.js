// @ts-check
/**
 * typescript-eslint's recommended type-checked rules (every file is parsed with its types), and
 * the house's one architectural rule:
 * the core knows nothing of HTTP or of the gateway's services, and the services know nothing
 * of Fastify's adapters. Unused exports are knip's job (`npm run lint`).
 */
import eslint from '@eslint/js'
import tseslint from 'typescript-eslint'

const layer = (files, forbidden, message) => ({
  files,
  rules: {
    'no-restricted-imports': ['error', { patterns: forbidden.map(group => ({ group: [group], message })) }],
  },
})

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'runtime/**', 'bench/results/**'] },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: { allowDefaultProject: ['eslint.config.js', 'bench/targets/*.mjs', 'scripts/*.mjs', 'test/fixtures/*/*.mjs', 'plugins/approvals/page/*.js', 'plugins/console/page/*.js'] }, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-floating-promises': 'error',
      // Fastify handlers are async by contract whether or not they await.
      '@typescript-eslint/require-await': 'off',
      // A cast says what the code expects of a value (often an `any` from a library): removing
      // the ones this rule calls unnecessary lets `any` flow on unchecked.
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
      // A signal's reason, or a failure passed through, is rejected as it came.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-empty': ['error', { allowEmptyCatch: true }],
      // A `let` read by a closure made before its one assignment cannot be a `const`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  layer(['src/core/**/*.ts', 'src/index.ts'], ['**/services/**', '**/plugins/**', '**/bin/**', 'fastify', 'fastify-*', '@fastify/*', 'ioredis', 'prom-client', 'pino', 'jose'],
    'src/core is the framework-free core: it never imports the gateway\'s services, the plugins, the CLI, Fastify or a service client.'),
  layer(['src/services/**/*.ts'], ['**/plugins/**', '**/bin/**', 'fastify', 'fastify-*', '@fastify/*'],
    'src/services are the gateway\'s services: no Fastify and no plugins (those adapt the services, not the other way round).'),
  layer(['tools/**/*.ts'], ['**/src/**', '**/plugins/**', '**/bin/**'],
    'a tool imports toolgate by its package name (toolgate, toolgate/server), as a user\'s tool would.'),
  {
    // Plain JavaScript (this config, fixtures, bench targets): nothing typed to check against.
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // The pages' scripts run in a browser: its globals, and no Node.
    files: ['plugins/**/page/*.js'],
    // Plain JavaScript: its types are checked by tsconfig.page.json, not inferred here.
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      sourceType: 'script',
      globals: Object.fromEntries(['window', 'document', 'fetch', 'sessionStorage', 'location', 'history', 'setTimeout', 'clearTimeout', 'setInterval', 'Intl', 'URL', 'URLSearchParams', 'Headers', 'Option', 'uPlot'].map(name => [name, 'readonly'])),
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-floating-promises': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // Hostile fixtures throw what a careless tool throws; a test evaluates a page's snippet.
      '@typescript-eslint/only-throw-error': 'off',
      '@typescript-eslint/no-implied-eval': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
)
