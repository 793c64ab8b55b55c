// The boundary rule is judged by running ESLint with the project's own config on probe files: a rule that
// let a cross-feature import through would make these tests fail.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { featureFolders } from './boundaries.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = path.join(root, 'src');
const features = featureFolders(path.join(src, 'features'));

async function boundaryErrors(file: string, code: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: root });
  const [result] = await eslint.lintText(code, { filePath: path.join(src, file) });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'boundaries/layers').map((m) => m.message);
}

/** The same through the eslint command, in a fresh process: the config is read anew, as in CI. */
function boundaryErrorsByCommand(file: string, code: string): string[] {
  const bin = path.join(root, 'node_modules', 'eslint', 'bin', 'eslint.js');
  const run = spawnSync(process.execPath, [bin, '--format', 'json', '--stdin', '--stdin-filename', path.join(src, file)], {
    cwd: root,
    input: code,
    encoding: 'utf8',
  });
  const [result] = JSON.parse(run.stdout) as { messages: { ruleId: string | null; message: string }[] }[];
  return (result?.messages ?? []).filter((m) => m.ruleId === 'boundaries/layers').map((m) => m.message);
}

describe('front-end boundaries', () => {
  it('guards every feature folder', () => {
    expect(features.length).toBeGreaterThanOrEqual(9);
    expect(features).toEqual(expect.arrayContaining(['auth', 'clusters', 'findings', 'patches', 'sources']));
  });

  it.each(features)('features/%s may not import another feature, in any spelling', async (feature) => {
    const other = features.find((f) => f !== feature) as string;
    const code = [
      `import { a } from '@/features/${other}';`,
      `import { b } from '@/features/${other}/api';`,
      `import { c } from '../../${other}/components/X';`,
      `export { d } from '../../${other}';`,
      `export const e = () => import('@/features/${other}/api');`,
      `export const all = [a, b, c];`,
    ].join('\n');
    const errors = await boundaryErrors(`features/${feature}/components/Probe.tsx`, code);
    expect(errors).toHaveLength(5);
    expect(errors[0]).toContain(`features/${feature} imports features/${other}`);
  });

  it('lets a feature import itself and the shared layers', async () => {
    const code = [
      "import { a } from '../api';",
      "import { b } from './Other';",
      "import { c } from '@/features/findings/evidence';",
      "import { d } from '@/api/errors';",
      "import { e } from '@/components/EmptyState';",
      "import { f } from '@/lib/format';",
      "import { useState } from 'react';",
      'export const all = [a, b, c, d, e, f, useState];',
    ].join('\n');
    expect(await boundaryErrors('features/findings/components/Probe.tsx', code)).toEqual([]);
  });

  it('keeps routes out of features and features out of the shared layers', async () => {
    expect(await boundaryErrors('features/patches/Probe.ts', "export { a } from '@/routes/cluster';")).toHaveLength(1);
    expect(await boundaryErrors('features/patches/Probe.ts', "export { a } from '../../router';")).toHaveLength(1);
    expect(await boundaryErrors('lib/Probe.ts', "export { a } from '@/features/findings';")).toHaveLength(1);
    expect(await boundaryErrors('components/Probe.ts', "export { a } from '../features/org/form';")).toHaveLength(1);
    expect(await boundaryErrors('api/Probe.ts', "export { a } from '@/routes/settings';")).toHaveLength(1);
    // Routes compose features: that is what they are for.
    expect(await boundaryErrors('routes/Probe.tsx', "export { a } from '@/features/findings';")).toEqual([]);
  });

  it('guards a feature folder the moment it exists, without a list to edit', async () => {
    const fresh = `zz-probe-${process.pid}`;
    mkdirSync(path.join(src, 'features', fresh));
    try {
      expect(boundaryErrorsByCommand(`features/${fresh}/Probe.ts`, "export { a } from '@/features/findings';")).toHaveLength(1);
      expect(boundaryErrorsByCommand('features/findings/Probe.ts', `export { a } from '@/features/${fresh}';`)).toHaveLength(1);
    } finally {
      rmSync(path.join(src, 'features', fresh), { recursive: true, force: true });
    }
  });
});
