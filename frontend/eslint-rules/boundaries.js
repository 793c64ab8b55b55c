// One-way imports between the front end's layers, checked on every import, re-export and dynamic import:
//   routes -> features/<feature> -> api, components, lib
// A feature never imports another feature (a route composes them), and the shared layers never import a
// feature or a route. Specifiers are resolved ("@/x" is src/x, "../x" is relative to the file), so every
// spelling of the same path is judged alike.
import { readdirSync } from 'node:fs';
import path from 'node:path';

/** The folders under `featuresDir`: every one of them is a feature, guarded without being listed by hand. */
export function featureFolders(featuresDir) {
  return readdirSync(featuresDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

const SHARED_LAYERS = ['api', 'components', 'lib'];
const APP_MODULES = ['routes', 'router', 'App', 'main', 'boot', 'first-requests'];

/** The path of `specifier` below src/ as segments, or null for a package import. */
function targetSegments(specifier, filename, srcDir) {
  let absolute;
  if (specifier.startsWith('@/')) absolute = path.join(srcDir, specifier.slice(2));
  else if (specifier.startsWith('.')) absolute = path.resolve(path.dirname(filename), specifier);
  else return null;
  const relative = path.relative(srcDir, absolute);
  if (relative.startsWith('..') || path.isAbsolute(relative)) return null;
  const segments = relative.split(path.sep).filter(Boolean);
  // "routes/x.tsx", "router.tsx" and "App" name the same layer with or without an extension.
  if (segments.length === 1) segments[0] = segments[0].replace(/\.(tsx?|jsx?)$/, '');
  return segments;
}

/** @type {import('eslint').Rule.RuleModule} */
const layers = {
  meta: {
    type: 'problem',
    docs: { description: 'Features never import each other; shared layers never import features or routes.' },
    schema: [
      {
        type: 'object',
        properties: {
          srcDir: { type: 'string' },
          feature: { type: 'string' },
          features: { type: 'array', items: { type: 'string' } },
        },
        required: ['srcDir', 'features'],
        additionalProperties: false,
      },
    ],
    messages: {
      otherFeature:
        'features/{{feature}} imports features/{{other}}: a feature never imports another feature. Compose them in a route, or move what both need to api/, components/ or lib/.',
      appFromFeature: 'features/{{feature}} imports {{target}}: features do not import routes or the app.',
      fromShared:
        '{{layer}}/ imports {{target}}: the shared layers (api, components, lib) never import features or routes.',
    },
  },
  create(context) {
    const { srcDir, feature, features } = context.options[0];
    const filename = context.filename;
    const own = path.relative(srcDir, filename).split(path.sep);
    const layer = own[0];

    function check(node, specifier) {
      if (typeof specifier !== 'string') return;
      const target = targetSegments(specifier, filename, srcDir);
      if (!target || target.length === 0) return;
      const [top, sub] = target;
      const isApp = APP_MODULES.includes(top);
      if (feature !== undefined) {
        if (top === 'features' && sub !== undefined && sub !== feature && features.includes(sub)) {
          context.report({ node, messageId: 'otherFeature', data: { feature, other: sub } });
        } else if (isApp) {
          context.report({ node, messageId: 'appFromFeature', data: { feature, target: target.join('/') } });
        }
      } else if (SHARED_LAYERS.includes(layer) && (top === 'features' || isApp)) {
        context.report({ node, messageId: 'fromShared', data: { layer, target: target.join('/') } });
      }
    }

    const fromSource = (node) => {
      if (node.source) check(node.source, node.source.value);
    };
    return {
      ImportDeclaration: fromSource,
      ExportNamedDeclaration: fromSource,
      ExportAllDeclaration: fromSource,
      ImportExpression(node) {
        if (node.source.type === 'Literal') check(node.source, node.source.value);
      },
    };
  },
};

export const boundariesPlugin = { rules: { layers } };

/**
 * Flat-config blocks: one per feature folder found under src/features (read from the disk each time ESLint
 * loads its config, so a new feature is guarded the moment its folder exists), and one for the shared layers.
 */
export function boundaryConfigs(srcDir) {
  const features = featureFolders(path.join(srcDir, 'features'));
  return [
    ...features.map((feature) => ({
      files: [`src/features/${feature}/**/*.{ts,tsx}`],
      plugins: { boundaries: boundariesPlugin },
      rules: { 'boundaries/layers': ['error', { srcDir, feature, features }] },
    })),
    {
      files: SHARED_LAYERS.map((layer) => `src/${layer}/**/*.{ts,tsx}`),
      plugins: { boundaries: boundariesPlugin },
      rules: { 'boundaries/layers': ['error', { srcDir, features }] },
    },
  ];
}
