import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from '@playwright/test';
import { expect, test } from '../fixtures';

// The weekly email as a mail client's HTML engine lays it out: headless Chromium at a desktop reading pane's
// 600 px and a phone's 390 px (an iPhone 12-15's CSS width), in light and dark mode.

interface Preview {
  subject: string;
  html: string;
  text: string;
}
interface Fleet {
  items: {
    name: string;
    open_by_severity: Record<string, number>;
    nearest_ceiling: { entity_id: string; days: number } | null;
  }[];
  total_savings_usd: number;
}

// The metric registry's ids (backend/headroom/domain/snapshot/metric_ids.py): none may reach a reader.
const here = dirname(fileURLToPath(import.meta.url));
const METRIC_IDS = [
  ...readFileSync(join(here, '../../backend/headroom/domain/snapshot/metric_ids.py'), 'utf8').matchAll(
    /^[A-Z0-9_]+: Final = "([^"]+)"$/gm,
  ),
].map((m) => m[1] as string);

const SEVERITIES = ['critical', 'warning', 'info'] as const;
const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });

/** Every element with text of its own: its text colour and the background it is drawn on (the nearest ancestor
 * with an opaque background), with the WCAG contrast ratio between them. */
async function contrasts(mail: Page) {
  return mail.evaluate(() => {
    const parse = (c: string) => {
      const m = c.match(/rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)/);
      return m ? { r: +m[1]!, g: +m[2]!, b: +m[3]!, a: m[4] === undefined ? 1 : +m[4] } : null;
    };
    const lum = ({ r, g, b }: { r: number; g: number; b: number }) => {
      const f = (v: number) => {
        const s = v / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      };
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const canvas = getComputedStyle(document.documentElement).colorScheme.includes('dark')
      ? parse(getComputedStyle(document.body).backgroundColor)
      : null;
    const out: { text: string; color: string; background: string; ratio: number }[] = [];
    for (const el of Array.from(document.body.querySelectorAll<HTMLElement>('*'))) {
      const own = Array.from(el.childNodes).some((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim());
      if (!own || el.offsetParent === null) continue;
      const color = parse(getComputedStyle(el).color)!;
      let bg = null;
      for (let at: HTMLElement | null = el; at; at = at.parentElement) {
        const c = parse(getComputedStyle(at).backgroundColor);
        if (c && c.a > 0.5) {
          bg = c;
          break;
        }
      }
      bg = bg ?? canvas ?? { r: 255, g: 255, b: 255, a: 1 };
      const [hi, lo] = [lum(color), lum(bg)].sort((a, b) => b - a) as [number, number];
      out.push({
        text: el.textContent!.trim().slice(0, 40),
        color: getComputedStyle(el).color,
        background: `rgb(${bg.r}, ${bg.g}, ${bg.b})`,
        ratio: (hi + 0.05) / (lo + 0.05),
      });
    }
    return out;
  });
}

test('the weekly email lays out at 600 and 390 px, in light and dark mode, and says the API figures', async ({
  page,
  openDemoCluster,
}, testInfo) => {
  // A fresh server needs its first minutes to simulate the demo fleet and run the advisor on it.
  test.setTimeout(300_000);
  await openDemoCluster();

  const email = (await (await page.request.get('/api/v1/org/digest/preview')).json()) as Preview;
  const fleet = (await (await page.request.get('/api/v1/fleet')).json()) as Fleet;
  // one number everywhere: the fleet page's counts, savings and nearest ceiling
  const counts = Object.fromEntries(
    SEVERITIES.map((s) => [s, fleet.items.reduce((n, c) => n + (c.open_by_severity[s] ?? 0), 0)]),
  );
  const ceilings = fleet.items.flatMap((c) => (c.nearest_ceiling ? [{ ...c.nearest_ceiling, cluster: c.name }] : []));
  const nearest = ceilings.sort((a, b) => a.days - b.days || a.cluster.localeCompare(b.cluster))[0];
  const savings = fleet.total_savings_usd > 0 ? usd.format(fleet.total_savings_usd) : 'none this week';
  // the text part's findings, in order: the cards must be the same ones
  const textTitles = [...email.text.matchAll(/^\d+\. \[[A-Z]+\] (.+)$/gm)].map((m) => m[1]);
  expect(textTitles.length).toBeGreaterThan(0);
  expect(email.text).toContain(
    `Open findings: ${SEVERITIES.map((s) => `${counts[s]!.toLocaleString('en-US')} ${s}`).join(', ')}.`,
  );
  expect(email.text).toContain(`Savings available: ${savings}`);

  for (const width of [600, 390]) {
    const mail = await page.context().newPage();
    await mail.setViewportSize({ width, height: 900 });
    await mail.setContent(email.html, { waitUntil: 'load' });

    const scrollWidth = await mail.evaluate(() => document.documentElement.scrollWidth);
    expect(scrollWidth, `horizontal overflow at ${width} px`).toBeLessThanOrEqual(width);
    for (const selector of ['body', 'td.card-cell', 'p.impact', 'h1']) {
      const family = await mail.locator(selector).first().evaluate((el) => getComputedStyle(el).fontFamily);
      expect(family, selector).toContain('sans-serif');
      expect(family.split(',')[0]?.trim(), selector).not.toMatch(/^(serif|Times|Times New Roman)$/);
    }

    const cards = mail.locator('[data-finding-card]');
    await expect(cards).toHaveCount(textTitles.length);
    for (const [i, title] of textTitles.entries()) {
      const card = cards.nth(i);
      await expect(card.getByRole('heading', { level: 3 })).toHaveText(title!);
      await expect(card.getByRole('link', { name: 'Open the finding' })).toBeVisible();
      await expect(card).toContainText(/critical|warning|info/i);
    }
    for (const s of SEVERITIES) {
      await expect(mail.locator(`[data-count="${s}"]`)).toHaveText(counts[s]!.toLocaleString('en-US'));
    }
    await expect(mail.locator('[data-savings]')).toContainText(savings);
    if (nearest) {
      const said = mail.locator('[data-nearest-ceiling]');
      await expect(said).toContainText(nearest.entity_id);
      await expect(said).toContainText(`on ${nearest.cluster}`);
      await expect(said).toContainText(
        nearest.days <= 0 ? 'already' : `${Math.round(nearest.days)} day${Math.round(nearest.days) === 1 ? '' : 's'}`,
      );
    }
    await expect(mail.getByRole('link', { name: 'Open the dashboard' })).toBeVisible();

    const shown = await mail.evaluate(() => document.body.innerText);
    expect(shown).not.toContain('docs/');
    expect(shown).not.toMatch(/\b(None|True|False)\b/);
    // no raw float ("= 250.0") and no AWS change key ("volume.throughput"): a fix is said in words
    expect(shown).not.toMatch(/(?<![\d.])\d+\.0(?![\d.%])/);
    expect(shown).not.toMatch(/\b(volume|instance)\.(type|iops|throughput|size|create|raid0-stripes)\b/);
    for (const id of METRIC_IDS) expect(shown, id).not.toContain(id);

    for (const scheme of ['light', 'dark'] as const) {
      await mail.emulateMedia({ colorScheme: scheme });
      const measured = await contrasts(mail);
      expect(measured.length).toBeGreaterThan(textTitles.length * 4); // every card's text is measured
      expect(measured.filter((c) => c.ratio < 4.5), `${scheme} mode at ${width} px`).toEqual([]);
    }
    const shot = testInfo.outputPath(`weekly-email-${width}-dark.png`);
    await mail.screenshot({ path: shot, fullPage: true });
    await testInfo.attach(`weekly-email-${width}-dark`, { path: shot, contentType: 'image/png' });
    await mail.close();
  }
});

test('the weekly email page shows its settings at once and the preview when it is ready, without scripts', async ({
  page,
  signInAsDemo,
}) => {
  await signInAsDemo();
  // hold the preview back: the page's own content must not wait for it
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  await page.route('**/api/v1/org/digest/preview', async (route) => {
    await held;
    await route.continue();
  });
  await page.goto('/settings/digest');
  // "at once": the settings are on the page while the preview is still held, which it is until release() below;
  // a page that waited for the preview would never show them (no timing here: how fast is the page bench's to say)
  await expect(page.getByRole('checkbox', { name: /Send the weekly advisory email/ })).toBeVisible();
  await expect(page.getByRole('heading', { name: 'Last sends' })).toBeVisible();
  await expect(page.getByText("Rendering this week's email…")).toBeVisible();
  release();
  const frame = page.getByTitle('Email preview');
  await expect(frame).toBeVisible({ timeout: 30_000 });
  await expect(frame).toHaveAttribute('sandbox', '');
  // the frame's document runs no script: a script added to it does not run
  const ran = await page
    .frameLocator('iframe[title="Email preview"]')
    .locator('body')
    .evaluate((body) => {
      const s = body.ownerDocument.createElement('script');
      s.textContent = 'document.body.dataset.ran = "yes"';
      body.appendChild(s);
      return body.dataset.ran ?? 'no';
    })
    .catch(() => 'blocked');
  expect(ran).not.toBe('yes');
});
