// Properties checked on the page as it stands: no horizontal overflow, axe-core's findings,
// the contrast of the focus ring and of control borders, and no hostile markup that ran.
// Each failure is a defect (harness.mjs: listed at the end, fails the run).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { HERE, expect } from './harness.mjs';

// axe-core (pinned in package.json; read once installed), evaluated in the page through
// DevTools, so the page's CSP (no inline script) neither blocks it nor is loosened for it.
let axeSource = null;
// label-content-name-mismatch (WCAG 2.5.3) is one of axe's experimental rules: on by request.
const AXE_OPTIONS = { resultTypes: ['violations'],
  rules: { 'label-content-name-mismatch': { enabled: true } } };

export const axeTotals = { critical: 0, serious: 0, moderate: 0, minor: 0, pages: 0 };

// Runs axe on the page; critical and serious findings are defects, the others are counted.
export async function axe(page, where) {
  if (!(await page.evaluate(() => typeof window.axe === 'object')))
    await page.evaluate(axeSource ??=
      readFileSync(join(HERE, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8'));
  const found = await page.evaluate(async (opts) => {
    const r = await window.axe.run(document, opts);
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 5) }));
  }, AXE_OPTIONS);
  axeTotals.pages++;
  for (const v of found) {
    axeTotals[v.impact] = (axeTotals[v.impact] || 0) + v.nodes.length;
    const line = `axe ${v.impact} ${v.id} on ${where}: ${v.help} (${v.nodes.join(', ')})`;
    if (v.impact === 'critical' || v.impact === 'serious')
      expect(false, line);
    else
      console.log(`browser_dashboard: ${line}`);
  }
}

// Neither the page nor any table is wider than its box (a table-wrap scrolls: a table wider
// than it is hidden overflow, as the 10,660 px preferences table of issue 22 was).
export async function noOverflow(page, where) {
  const m = await page.evaluate(() => ({
    width: innerWidth,
    page: document.documentElement.scrollWidth,
    tables: [...document.querySelectorAll('.table-wrap')].map((w) => ({
      name: w.getAttribute('aria-label'), box: w.clientWidth, content: w.scrollWidth })),
    headings: [...document.querySelectorAll('h1, h2, h3')].map((h) => ({
      text: h.textContent.slice(0, 40), right: h.getBoundingClientRect().right,
      box: h.clientWidth, content: h.scrollWidth })),
    nav: [...document.querySelectorAll('#nav a')].filter((a) => a.offsetParent).map((a) => {
      // Out of sight: past the window, or past its list's box (scrolled away, no cue).
      const r = a.getBoundingClientRect();
      const box = a.closest('ul').getBoundingClientRect();
      return { text: a.textContent, left: r.left, right: r.right,
        clipped: r.left < box.left - 1 || r.right > box.right + 1 };
    }),
  }));
  expect(m.page <= m.width, `${where}: the page is ${m.page} px wide in a ${m.width} px window`);
  for (const t of m.tables)
    expect(t.content <= t.box + 1, `${where}: table "${t.name}" is ${t.content} px wide in ${t.box} px`);
  for (const h of m.headings)
    expect(h.content <= h.box + 1 && h.right <= m.width,
      `${where}: heading "${h.text}" overflows (${h.content} px in ${h.box} px)`);
  for (const a of m.nav)
    expect(a.left >= 0 && a.right <= m.width && !a.clipped,
      `${where}: nav link "${a.text}" is out of sight (${a.left}..${a.right} of ${m.width} px)`);
  return m;
}

// In the page: WCAG's contrast ratio of two computed colours, and the colour behind an
// element (the first ancestor with an opaque background; the canvas is white).
const CONTRAST = `
  window.rgContrast = {
    rgb(c) { return c.match(/[\\d.]+/g).map(Number); },
    lum(c) {
      const [r, g, b] = this.rgb(c).map((v) => v / 255)
        .map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    },
    ratio(a, b) {
      const [x, y] = [this.lum(a), this.lum(b)].sort((p, q) => q - p);
      return (x + 0.05) / (y + 0.05);
    },
    behind(node) {
      for (let n = node; n && n.nodeType === 1; n = n.parentElement) {
        const c = getComputedStyle(n).backgroundColor;
        const a = this.rgb(c);
        if (a.length < 4 || a[3] === 1)
          return c;
      }
      return 'rgb(255, 255, 255)';
    },
  };`;

// The focus ring of the focused element against what is behind it (the ring is drawn 2 px
// outside the element, over its parent's background).
export async function focusRing(page, where) {
  await page.evaluate(CONTRAST);
  const r = await page.evaluate(() => {
    const e = document.activeElement;
    const s = getComputedStyle(e);
    const c = window.rgContrast;
    const behind = c.behind(e.parentElement);
    return { tag: `${e.tagName.toLowerCase()} "${(e.textContent || e.name || '').slice(0, 20)}"`,
      style: s.outlineStyle, width: parseFloat(s.outlineWidth), color: s.outlineColor, behind,
      ratio: c.ratio(s.outlineColor, behind) };
  });
  expect(r.style !== 'none' && r.width >= 2, `${where}: ${r.tag} has no focus ring (${r.style} ${r.width}px)`);
  expect(r.ratio >= 3, `${where}: focus ring ${r.color} on ${r.behind} of ${r.tag} is ` +
    `${r.ratio.toFixed(2)}:1, below 3:1`);
  return r;
}

// Every text field and select: its border against its own fill and against what is around it.
export async function controlBorders(page, where) {
  await page.evaluate(CONTRAST);
  const found = await page.evaluate(() => {
    const c = window.rgContrast;
    return [...document.querySelectorAll('input:not([type=checkbox]):not([type=radio]), select')]
      .filter((e) => e.offsetParent).map((e) => {
        const s = getComputedStyle(e);
        return { name: e.name, color: s.borderTopColor, inside: c.behind(e),
          outside: c.behind(e.parentElement),
          ratio: Math.min(c.ratio(s.borderTopColor, c.behind(e)),
            c.ratio(s.borderTopColor, c.behind(e.parentElement))) };
      });
  });
  expect(found.length > 0, `${where}: no control to measure`);
  for (const f of found)
    expect(f.ratio >= 3, `${where}: the border ${f.color} of ${f.name} is ${f.ratio.toFixed(2)}:1 ` +
      `(on ${f.inside} / ${f.outside}), below 3:1`);
  return found;
}

// No hostile string ran or became an element.
export async function noXss(page, where) {
  const r = await page.evaluate(() => ({ ran: window.rgXss,
    elements: document.querySelectorAll('img[src="x"], svg[onload], iframe, body script:not([src])').length }));
  expect(r.ran === undefined && r.elements === 0,
    `${where}: hostile markup ran (rgXss=${r.ran}) or became ${r.elements} element(s)`);
}
