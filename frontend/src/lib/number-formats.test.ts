import { beforeAll, describe, expect, it } from 'vitest';
import { SIZE_READING, settingText } from './change';
import { QUANTITY_RULES, formatDuration, formatQuantity, humanUnit } from './format';

// docs/number-formats.json is the one table of how a number is written, with cases; the backend's test
// (backend/tests/domain/test_number_formats.py) reads the same file, so the app and the weekly email agree.
interface Shared {
  rules: Record<string, unknown>;
  quantities: { value: number; unit: string; text: string }[];
  durations: { seconds: number; text: string }[];
}
interface Fs {
  readFileSync(path: string, encoding: 'utf8'): string;
}
let shared: Shared = { rules: {}, quantities: [], durations: [] };
beforeAll(async () => {
  // The app's tsconfig has no Node types, hence the untyped import; Vitest runs in frontend/.
  const fs = (await import(/* @vite-ignore */ `node:${'fs'}`)) as Fs;
  const cwd = (globalThis as unknown as { process: { cwd(): string } }).process.cwd();
  shared = JSON.parse(fs.readFileSync(`${cwd}/../docs/number-formats.json`, 'utf8')) as Shared;
});

describe('docs/number-formats.json', () => {
  it('is the table the front end formats with', () => {
    expect(QUANTITY_RULES).toEqual(shared.rules);
  });
  it('writes every quantity as the backend does', () => {
    expect(shared.quantities.length).toBeGreaterThan(10);
    for (const c of shared.quantities) expect(`${c.value} ${c.unit}: ${formatQuantity(c.value, c.unit)}`).toBe(`${c.value} ${c.unit}: ${c.text}`);
  });
  it('writes every duration as the backend does', () => {
    expect(shared.durations.length).toBeGreaterThan(3);
    for (const c of shared.durations) expect(formatDuration(c.seconds)).toBe(c.text);
  });
  it('puts the 90 % line of 125 MiB/s at 113 MiB/s', () => {
    expect(formatQuantity(0.9 * 125, 'MiB/s')).toBe('113 MiB/s');
  });
});

describe('a change value, as the backend writes it', () => {
  let settings: { key: string; value: unknown; text: string }[] = [];
  beforeAll(async () => {
    const fs = (await import(/* @vite-ignore */ `node:${'fs'}`)) as Fs;
    const cwd = (globalThis as unknown as { process: { cwd(): string } }).process.cwd();
    settings = (JSON.parse(fs.readFileSync(`${cwd}/../docs/number-formats.json`, 'utf8')) as { settings: typeof settings }).settings;
  });
  it('reads a TiKV size in GiB from the size the backend does', async () => {
    const fs = (await import(/* @vite-ignore */ `node:${'fs'}`)) as Fs;
    const cwd = (globalThis as unknown as { process: { cwd(): string } }).process.cwd();
    const file = JSON.parse(fs.readFileSync(`${cwd}/../docs/number-formats.json`, 'utf8')) as { size_reading: unknown };
    expect(SIZE_READING).toEqual(file.size_reading);
  });
  it('scales a stored unit to the unit and by the factor the backend does', async () => {
    const fs = (await import(/* @vite-ignore */ `node:${'fs'}`)) as Fs;
    const cwd = (globalThis as unknown as { process: { cwd(): string } }).process.cwd();
    const file = JSON.parse(fs.readFileSync(`${cwd}/../docs/number-formats.json`, 'utf8')) as {
      stored_to_shown: { stored: string; shown: string; factor: number }[];
    };
    expect(file.stored_to_shown.length).toBeGreaterThanOrEqual(5);
    for (const row of file.stored_to_shown) {
      expect({ stored: row.stored, ...humanUnit(row.stored) }).toEqual({ stored: row.stored, unit: row.shown, scale: row.factor });
    }
  });
  it('reads every setting case of docs/number-formats.json the same way', () => {
    expect(settings.length).toBeGreaterThan(10);
    for (const c of settings) expect(`${c.key}: ${settingText(c.value, c.key)}`).toBe(`${c.key}: ${c.text}`);
  });
});
