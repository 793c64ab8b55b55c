import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// Feature folders never import each other; shared layers (api, components, lib) never import
// features or routes. Imports flow one way: routes -> features -> components/api/lib.
const FEATURES = ['auth', 'clusters'];

const featureBoundaries = FEATURES.map((feature) => ({
  files: [`src/features/${feature}/**/*.{ts,tsx}`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            group: FEATURES.filter((f) => f !== feature).flatMap((other) => [
              `@/features/${other}`,
              `@/features/${other}/*`,
              `**/features/${other}`,
              `**/features/${other}/*`,
              `../../${other}`,
              `../../${other}/*`,
              `../${other}`,
              `../${other}/*`,
            ]),
            message: 'A feature never imports another feature; compose them in a route instead.',
          },
          { group: ['@/routes/*', '@/router', '@/App'], message: 'Features do not import routes or the app.' },
        ],
      },
    ],
  },
}));

export default tseslint.config(
  { ignores: ['dist', 'node_modules', 'src/api/schema.d.ts'] },
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
  {
    files: ['src/api/**/*.{ts,tsx}', 'src/components/**/*.{ts,tsx}', 'src/lib/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@/features/*', '@/routes/*', '@/router', '@/App', '**/features/*', '**/routes/*'],
              message: 'Shared layers (api, components, lib) never import features or routes.',
            },
          ],
        },
      ],
    },
  },
  ...featureBoundaries,
  {
    files: ['vite.config.ts', 'eslint.config.js'],
    languageOptions: { globals: globals.node },
  },
);
