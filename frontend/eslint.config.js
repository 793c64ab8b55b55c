import { fileURLToPath } from 'node:url';
import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import { boundaryConfigs } from './eslint-rules/boundaries.js';

// Imports flow one way: routes -> features/<feature> -> api, components, lib. Every folder under
// src/features is a feature and is guarded (eslint-rules/boundaries.js reads the folder list).
const srcDir = fileURLToPath(new URL('./src', import.meta.url));

export default tseslint.config(
  { ignores: ['dist', 'node_modules', 'src/api/schema.ts'] },
  {
    files: ['**/*.{ts,tsx}'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    languageOptions: { ecmaVersion: 2023, globals: globals.browser },
    plugins: { 'react-hooks': reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'smart'],
      'no-console': ['error', { allow: ['warn', 'error'] }],
    },
  },
  ...boundaryConfigs(srcDir),
  {
    // Recharts (~110 KB gz) is a chunk of its own, fetched when the first chart is drawn, so no page's first load
    // carries it (150 KB gz per route, bench/frontend_budget.py). Only the chart module imports it, and only its
    // lazy wrapper (components/TimeSeriesChart/index.ts) imports that module.
    files: ['src/**/*.{ts,tsx}'],
    ignores: ['src/components/TimeSeriesChart/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'recharts', message: 'Draw charts with @/components/TimeSeriesChart (loaded lazily), or lazy-load a new chart component with React.lazy.' }],
          patterns: [
            {
              group: ['**/TimeSeriesChart/TimeSeriesChart'],
              allowTypeImports: true,
              message: 'Import the chart from @/components/TimeSeriesChart: that one loads Recharts lazily.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['vite.config.ts', 'eslint.config.js', 'eslint-rules/**/*.{js,ts}'],
    languageOptions: { globals: globals.node },
  },
);
