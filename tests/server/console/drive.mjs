// drive.mjs — drives the console (GET /console) in Debian's headless chromium for
// tests/server/test_console.py: one scenario per run, named by SCENARIO, against the
// server at CONSOLE_URL. It clicks and types as a person would, saves screenshots under
// OUT_DIR, and prints what the page showed as one JSON line for the test to judge; it
// judges nothing itself, except that a step it waits for must come within its timeout.
import puppeteer from 'puppeteer-core';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const url = process.env.CONSOLE_URL;
const out = process.env.OUT_DIR;
const scenario = process.env.SCENARIO;
const params = JSON.parse(process.env.CONSOLE_PARAMS || '{}');
const WAIT = { timeout: 15000 };

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--disable-extensions'],
});
const page = await browser.newPage();
await page.setViewport({ width: 1400, height: 1000 });

// What went wrong in the page: uncaught errors, console errors, failed requests and
// answers of 400 and above (with the operation they answered and their body).
const problems = { pageErrors: [], consoleErrors: [], failedRequests: [], errorResponses: [] };
page.on('pageerror', (e) => problems.pageErrors.push(String(e.message || e)));
page.on('console', (m) => {
  if (m.type() === 'error') problems.consoleErrors.push(m.text());
});
page.on('requestfailed', (r) => problems.failedRequests.push(`${r.url()} ${r.failure() && r.failure().errorText}`));
page.on('response', async (r) => {
  if (r.status() < 400) return;
  let body = '';
  try {
    body = (await r.text()).slice(0, 300);
  } catch (e) {
    body = '';
  }
  problems.errorResponses.push({ url: r.url(), status: r.status(), target: r.request().headers()['x-amz-target'] || '', body });
});

// A contract-shaped QuarryDescribeModel answer the test hands in, for the model views.
if (params.modelAnswer) {
  await page.setRequestInterception(true);
  page.on('request', (r) => {
    if ((r.headers()['x-amz-target'] || '').endsWith('.QuarryDescribeModel'))
      r.respond({ status: 200, contentType: 'application/x-amz-json-1.0', body: JSON.stringify(params.modelAnswer) });
    else r.continue();
  });
}

const shot = (name) => page.screenshot({ path: join(out, `${name}.png`), fullPage: true });
const text = (sel) => page.$eval(sel, (e) => e.textContent);
const tab = async (name) => {
  await page.click(`#tabs button[data-tab="${name}"]`);
};

// The item rows of the single-table view inside root: groups of {pk, rows: [{sk, entity, cls, attrs}]}.
const readItems = (root) => page.$eval(root, (r) => {
  const groups = [];
  for (const tr of r.querySelectorAll('table.items tbody tr')) {
    if (tr.classList.contains('group')) {
      groups.push({ pk: tr.querySelector('.vtext') ? tr.querySelector('.vtext').textContent : '', rows: [] });
    } else if (groups.length) {
      const attrs = {};
      for (const a of tr.querySelectorAll('.attr')) attrs[a.querySelector('.aname').textContent] = a.querySelector('.vtext').textContent;
      groups[groups.length - 1].rows.push({
        sk: tr.querySelector('.skcell .vtext') ? tr.querySelector('.skcell .vtext').textContent : '',
        entity: tr.dataset.entity, cls: tr.className, attrs,
      });
    }
  }
  return groups;
});

async function open() {
  await page.goto(`${url}/console`, { waitUntil: 'load' });
}

// Signed in, and the first table the page selects on its own is shown.
async function signedIn() {
  await page.waitForSelector('#table-list li[data-table].selected', WAIT);
}

const scenarios = {
  // Loads, lists the tables, browses the table and every index, and checks the signer.
  async browse() {
    await open();
    await signedIn();
    const tables = await page.$$eval('#table-list li[data-table]', (l) => l.map((e) => e.dataset.table));
    await page.click(`#table-list li[data-table="${params.table}"]`);
    await page.waitForFunction((t) => document.querySelector('#tab-table h3') && document.querySelector('#tab-table h3').textContent === t, WAIT, params.table);
    const tableText = await text('#tab-table');
    await shot('table');
    await tab('items');
    await page.waitForSelector('#tab-items table.items tbody tr.item', WAIT);
    const views = await page.$$eval('#tab-items .views button', (l) => l.map((b) => b.dataset.view));
    const byView = { '': await readItems('#tab-items') };
    const modelNote = await text('#tab-items p.note');
    await shot('items-table');
    for (const v of views.filter((x) => x)) {
      await page.click(`#tab-items .views button[data-view="${v}"]`);
      await page.waitForFunction((x) => document.querySelector('#tab-items .views button.active') && document.querySelector('#tab-items .views button.active').dataset.view === x
        && document.querySelector('#tab-items table.items'), WAIT, v);
      byView[v] = await readItems('#tab-items');
      await shot(`items-${v}`);
    }
    const injected = await page.evaluate(() => ({
      pwned: window.__pwned || null,
      images: document.querySelectorAll('main img').length,
      scripts: document.querySelectorAll('main script').length,
    }));
    // The plain-JavaScript SHA-256 and HMAC (for pages without SubtleCrypto) against it.
    const crypto = await page.evaluate(async () => {
      const s = await import('/console/sigv4.js');
      const enc = new TextEncoder();
      const inputs = ['', 'abc', 'x'.repeat(55), 'y'.repeat(56), 'z'.repeat(64), 'ünïcødé ✓ 🚀'.repeat(40)];
      let mismatches = 0;
      for (const i of inputs) {
        const d = enc.encode(i);
        if (s.hex(s.sha256Plain(d)) !== s.hex(new Uint8Array(await crypto.subtle.digest('SHA-256', d)))) mismatches++;
        for (const key of [enc.encode('key'), enc.encode('k'.repeat(100))]) {
          const k = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
          if (s.hex(s.hmacPlain(key, d)) !== s.hex(new Uint8Array(await crypto.subtle.sign('HMAC', k, d)))) mismatches++;
        }
      }
      return { mismatches, abc: s.hex(s.sha256Plain(enc.encode('abc'))), checked: inputs.length * 3 };
    });
    const noModel = await page.$eval('#model-status', (e) => e.textContent);
    return { tables, tableText, views, byView, modelNote, injected, crypto, noModel };
  },

  // Runs a Query through the form.
  async query() {
    await open();
    await signedIn();
    await page.click(`#table-list li[data-table="${params.table}"]`);
    await page.waitForFunction((t) => document.querySelector('#tab-table h3') && document.querySelector('#tab-table h3').textContent === t, WAIT, params.table);
    await tab('query');
    await page.waitForSelector('#query-form', WAIT);
    if (params.index) await page.select('#q-index', params.index);
    await page.type('#q-pk', params.pk);
    if (params.skop) {
      await page.select('#q-skop', params.skop);
      await page.type('#q-sk', params.sk);
    }
    if (params.order) await page.select('#q-order', params.order);
    if (params.limit) await page.type('#q-limit', String(params.limit));
    await page.click('#q-run');
    await page.waitForSelector('#q-summary, #q-error', WAIT);
    const result = {
      summary: await page.$eval('#q-out', (e) => (e.querySelector('#q-summary') || e.querySelector('#q-error')).textContent),
      request: JSON.parse(await page.$eval('#q-out pre.json', (e) => e.textContent)),
      pattern: await text('#q-pattern'),
      items: await readItems('#q-out'),
    };
    await shot('query');
    return result;
  },

  // The heat view of the keys and the capacity charts.
  async heat() {
    await open();
    await signedIn();
    await page.click(`#table-list li[data-table="${params.table}"]`);
    await page.waitForFunction((t) => document.querySelector('#tab-table h3') && document.querySelector('#tab-table h3').textContent === t, WAIT, params.table);
    await tab('heat');
    await page.waitForSelector('#heat-holder .heat-target', WAIT);
    const heat = await page.$$eval('#heat-holder .heat-target', (boxes) => boxes.map((b) => ({
      target: b.dataset.target,
      title: b.querySelector('h3').textContent,
      heatmaps: b.querySelectorAll('svg.heatmap').length,
      cells: [...b.querySelectorAll('svg.heatmap rect.hcell')].filter((r) => r.getAttribute('fill') !== '#f1f1f1').length,
      topKeys: [...b.querySelectorAll('tr.topkey')].map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
    })));
    await shot('heat');
    await tab('capacity');
    // Samples of /metrics make rates: wait for reads (the test sends them meanwhile).
    await page.waitForFunction(() => {
      const c = document.querySelector('#capacity-charts svg.chart');
      return c && Number(c.dataset.max) > 0 && Number(c.dataset.points) >= 3;
    }, { timeout: 20000 });
    const capacity = await page.$$eval('#capacity-charts svg.chart', (l) => l.map((s) => ({
      title: s.querySelector('.ctitle').textContent, max: Number(s.dataset.max || 0),
      lines: s.querySelectorAll('path.series').length,
      legend: [...s.querySelectorAll('.legendtext')].map((t) => t.textContent),
    })));
    const totals = await page.$$eval('#tab-capacity table.totals tbody tr', (l) => l.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    await shot('capacity');
    return { heat, capacity, totals };
  },

  // A server with --credentials: refused until the user enters a key, then signed.
  async signed() {
    await open();
    await page.waitForFunction(() => document.querySelector('#status').classList.contains('error'), WAIT);
    const refused = await text('#status');
    await shot('signed-refused');
    await page.type('#key-id', params.key);
    await page.type('#key-secret', params.secret);
    await page.click('#signin-button');
    await signedIn();
    const tables = await page.$$eval('#table-list li[data-table]', (l) => l.map((e) => e.dataset.table));
    const status = await text('#status');
    await page.click(`#table-list li[data-table="${params.table}"]`);
    await tab('items');
    await page.waitForSelector('#tab-items table.items tbody tr.item', WAIT);
    const items = await readItems('#tab-items');
    await tab('capacity');
    await page.waitForSelector('#capacity-charts svg.chart', WAIT);
    await shot('signed-items');
    return { refused, tables, status, items };
  },

  // The model views: the patterns panel, entity colours, and the pattern a query is.
  async model() {
    await open();
    await signedIn();
    await page.click(`#table-list li[data-table="${params.table}"]`);
    await page.waitForFunction((t) => document.querySelector('#tab-table h3') && document.querySelector('#tab-table h3').textContent === t, WAIT, params.table);
    await tab('patterns');
    await page.waitForSelector('#patterns-table, #patterns-none', WAIT);
    const none = await page.$('#patterns-none');
    if (none) return { none: await text('#patterns-none') };
    await page.$$eval('#findings details', (l) => l.forEach((d) => { d.open = true; }));
    const panel = {
      patterns: await page.$$eval('#patterns-table tbody tr', (l) => l.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent))),
      findings: await page.$$eval('#findings .finding-card', (l) => l.map((c) => ({
        kind: c.dataset.kind, message: c.querySelector('.fmessage').textContent,
        sample: c.querySelector('pre.sample') ? JSON.parse(c.querySelector('pre.sample').textContent) : null,
      }))),
      unused: await page.$$eval('#unused-indexes li', (l) => l.map((e) => e.textContent)),
      unexercised: await page.$$eval('#unexercised li', (l) => l.map((e) => e.textContent)),
    };
    await shot('patterns');
    let items = null;
    if (params.colours) {
      await tab('items');
      await page.waitForSelector('#tab-items table.items tbody tr.item', WAIT);
      items = await readItems('#tab-items');
      await shot('items-coloured');
    }
    let query = null;
    if (params.query) {
      await tab('query');
      await page.waitForSelector('#query-form', WAIT);
      if (params.query.op) await page.select('#q-op', params.query.op);
      if (params.query.pk) await page.type('#q-pk', params.query.pk);
      if (params.query.skop) {
        await page.select('#q-skop', params.query.skop);
        await page.type('#q-sk', params.query.sk);
      }
      if (params.query.limit) await page.type('#q-limit', String(params.query.limit));
      if (params.query.filter) {
        await page.type('#q-filter', params.query.filter);
        await page.type('#q-fvalues', params.query.fvalues);
      }
      await page.click('#q-run');
      await page.waitForSelector('#q-summary, #q-error', WAIT);
      query = { pattern: await text('#q-pattern'), summary: await page.$eval('#q-out', (e) => (e.querySelector('#q-summary') || e.querySelector('#q-error')).textContent) };
      await shot('query-pattern');
    }
    const injected = await page.evaluate(() => ({ pwned: window.__pwned || null, images: document.querySelectorAll('main img').length }));
    return { panel, items, query, injected };
  },
};

let result;
try {
  result = await scenarios[scenario]();
} catch (e) {
  try {
    await shot(`${scenario}-failed`);
  } catch (ignored) {
    // the page may be gone
  }
  result = { error: String(e && e.stack ? e.stack : e), status: await page.$eval('#status', (x) => x.textContent).catch(() => '') };
}
result.problems = problems;
writeFileSync(join(out, `${scenario}.json`), JSON.stringify(result, null, 2));
await browser.close();
console.log(JSON.stringify(result));
