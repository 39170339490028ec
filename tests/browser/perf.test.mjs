// Timings in headless Chromium, printed by the test run and saved to
// artifacts/browser/perf.json: page load (navigation start to the first analysis rendered,
// HTTP cache disabled) and, per bundled example, the analyzer call (wasm + JSON parse) and the
// re-render for each keystroke typed at the end of the example.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { ARTIFACTS, analysisCount, bundledExamples, launchBrowser, openPlayground, serveDist, waitForAnalysisAfter, waitForReady } from "./harness.mjs";

const LOADS = 5;
const KEYSTROKES = "# timing keys";
// Generous budget: a keystroke's analysis must stay interactive even on a loaded 2-core CI box.
const ANALYZE_BUDGET_MS = 250;

let server;
let browser;
const results = { load: null, keystrokes: [] };

before(async () => {
  server = await serveDist();
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.close();
  await mkdir(ARTIFACTS, { recursive: true });
  await writeFile(path.join(ARTIFACTS, "perf.json"), JSON.stringify(results, null, 2));
});

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

test("page load to first analysis rendered", async (t) => {
  const samples = [];
  for (let i = 0; i < LOADS; i++) {
    const page = await browser.context.newPage();
    const cdp = await browser.context.newCDPSession(page);
    await cdp.send("Network.enable");
    await cdp.send("Network.setCacheDisabled", { cacheDisabled: true });
    await page.goto(server.url);
    await waitForReady(page);
    const ms = await page.evaluate(
      () => performance.getEntriesByName("torchlower:first-analysis-rendered")[0].startTime,
    );
    samples.push(ms);
    await page.close();
  }
  results.load = { samples, medianMs: median(samples) };
  t.diagnostic(`page load to first analysis rendered: median ${median(samples).toFixed(0)} ms (${samples.map((x) => x.toFixed(0)).join(", ")})`);
});

test("analyze time per keystroke on each bundled example", async (t) => {
  const examples = await bundledExamples();
  for (const example of examples) {
    const page = await openPlayground(browser.context, `${server.url}#example=${example.id}`);
    await page.click("#source-editor .cm-content");
    await page.keyboard.press("Control+End");
    const afterLoad = await analysisCount(page);
    await page.keyboard.press("Enter");
    await waitForAnalysisAfter(page, afterLoad);
    const before = await analysisCount(page);
    for (const key of KEYSTROKES) {
      const n = await analysisCount(page);
      await page.keyboard.type(key);
      await waitForAnalysisAfter(page, n);
    }
    const runs = await page.evaluate((from) => window.torchlowerPlayground.analyses.slice(from), before);
    // One analysis per keystroke: the debounce neither drops nor duplicates them when keys are
    // typed slower than it.
    assert.equal(runs.length, KEYSTROKES.length, example.id);
    const analyze = runs.map((r) => r.analyzeMs);
    const entry = {
      example: example.id,
      chars: runs.at(-1).chars,
      keystrokes: runs.length,
      analyzeMedianMs: median(analyze),
      analyzeMaxMs: Math.max(...analyze),
      renderMedianMs: median(runs.map((r) => r.renderMs)),
    };
    results.keystrokes.push(entry);
    t.diagnostic(
      `${example.id}: ${entry.chars} chars, analyze median ${entry.analyzeMedianMs.toFixed(2)} ms (max ${entry.analyzeMaxMs.toFixed(2)}), render median ${entry.renderMedianMs.toFixed(2)} ms`,
    );
    assert.ok(entry.analyzeMedianMs < ANALYZE_BUDGET_MS, `${example.id}: ${entry.analyzeMedianMs} ms per keystroke`);
    assert.deepEqual(page.playgroundErrors, []);
    await page.close();
  }
});
