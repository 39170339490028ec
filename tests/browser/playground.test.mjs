// Browser tests of the playground in headless Chromium, against the real analyzer wasm: what
// the page shows (marks, gutter, summary, table, Rust highlight, rules panel) is checked
// against the analyzer's own report, and the typed function against the seed's outcomes.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import {
  ARTIFACTS,
  REPO,
  analysisCount,
  bundledExamples,
  editorText,
  lastReport,
  launchBrowser,
  openPlayground,
  outcomeCounts,
  reportSites,
  serveDist,
  waitForAnalysisAfter,
  waitForCurrentAnalysis,
  waitForReady,
} from "./harness.mjs";

let server;
let browser;
let examples;

before(async () => {
  server = await serveDist();
  browser = await launchBrowser();
  examples = await bundledExamples();
  await mkdir(ARTIFACTS, { recursive: true });
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** base64url of deflate-raw, written independently of the page's encoder. */
const encodeFragment = (source) => deflateRawSync(Buffer.from(source, "utf8")).toString("base64url");
const decodeFragment = (encoded) => inflateRawSync(Buffer.from(encoded, "base64url")).toString("utf8");

const assertNoPageErrors = (page) => assert.deepEqual(page.playgroundErrors, [], "page reported errors");

/** The summary bar's number for one counter (data-count attribute). */
async function summaryCount(page, key) {
  return Number(await page.locator(`#summary [data-count="${key}"] b`).innerText());
}

/** Concatenated text of every DOM piece of a mark class, in document order. */
const markedText = (page, selector) =>
  page.evaluate((sel) => [...document.querySelectorAll(sel)].map((el) => el.textContent).join(""), selector);

/**
 * Asserts the text under the Rust highlight becomes `expected`: CodeMirror redraws (and
 * scrolls) on its next animation frame, so the DOM is polled briefly before comparing.
 * A highlight spanning several lines is one mark piece per line, with the line breaks
 * themselves outside the DOM text, so they are dropped from `expected` (nothing else is).
 */
async function assertRustHighlight(page, rustSnippet) {
  const selector = "#rust-editor .cm-rust-selected";
  const expected = rustSnippet.replaceAll("\n", "");
  await page
    .waitForFunction(
      ([sel, want]) => [...document.querySelectorAll(sel)].map((el) => el.textContent).join("") === want,
      [selector, expected],
      { timeout: 5000 },
    )
    .catch(() => {});
  assert.equal(await markedText(page, selector), expected);
}

/** Site ids present as marks in the source editor, with their outcome attribute. */
const sourceMarks = (page) =>
  page.evaluate(() => {
    const marks = {};
    for (const el of document.querySelectorAll("#source-editor .cm-site")) marks[el.dataset.site] = el.dataset.outcome;
    return marks;
  });

async function loadExample(page, id) {
  await page.selectOption("#example-select", id);
  await waitForCurrentAnalysis(page);
  assert.equal(await editorText(page), examples.find((e) => e.id === id).source);
}

// The function typed key by key, and the text CodeMirror must end up with (its Python mode
// indents after `:`; Ctrl+[ dedents).
const TYPED_KEYS = [
  "from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D",
  "Enter", "Enter", "Enter",
  "def layer(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:",
  "Enter",
  "h = x @ w",
  "Enter",
  "return h.relu()",
  "Enter", "Enter", "Enter", "Control+BracketLeft",
  "def dot(a: TensorF32Cpu1D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:",
  "Enter",
  "return a @ b",
];
const TYPED_TEXT = `from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D


def layer(x: TensorF32Cpu2D, w: TensorF32Cpu2D) -> TensorF32Cpu2D:
    h = x @ w
    return h.relu()


def dot(a: TensorF32Cpu1D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return a @ b`;

test("typing a function marks its sites and updates the summary", async () => {
  const page = await openPlayground(browser.context, server.url);
  await page.click("#source-editor .cm-content");
  await page.keyboard.press("Control+a");
  await page.keyboard.press("Backspace");
  for (const key of TYPED_KEYS) {
    if (/^(Enter|Control\+\w+)$/.test(key)) await page.keyboard.press(key);
    else await page.keyboard.type(key, { delay: 2 });
  }
  await waitForCurrentAnalysis(page);
  const typed = (await editorText(page)).replace(/[ \t]+$/gm, "");
  assert.equal(typed, TYPED_TEXT);

  // The seed's outcomes: rank-2 matmul and relu are claimed, rank-1 @ rank-1 is rejected.
  const report = await lastReport(page);
  assert.deepEqual(report.diagnostics, []);
  const layer = report.functions.find((f) => f.name === "layer");
  const dot = report.functions.find((f) => f.name === "dot");
  assert.equal(layer.route, "native");
  assert.deepEqual(layer.sites.map((s) => s.outcome), ["claimed", "claimed"]);
  assert.equal(dot.route, "fallback");
  assert.deepEqual(dot.sites.map((s) => [s.target, s.outcome]), [["@", "rejected"]]);
  const rejected = dot.sites[0];
  assert.ok(rejected.code && rejected.message, "a rejected site carries a code and a message");

  // Every site is marked with its outcome; the gutter has a dot per outcome per line.
  const sites = reportSites(report);
  const marks = await sourceMarks(page);
  assert.deepEqual(marks, Object.fromEntries(sites.map((s) => [s.id, s.outcome])));
  const gutterDots = await page.locator("#source-editor .cm-site-gutter .site-dot").evaluateAll((els) =>
    els.map((el) => el.dataset.outcome).sort(),
  );
  const perLine = new Map();
  for (const s of sites) perLine.set(s.line, new Set([...(perLine.get(s.line) ?? []), s.outcome]));
  assert.deepEqual(gutterDots, [...perLine.values()].flatMap((set) => [...set]).sort());

  // The summary agrees with the report and with the seed.
  assert.equal(await summaryCount(page, "fn-native"), 1);
  assert.equal(await summaryCount(page, "fn-fallback"), 1);
  const counts = outcomeCounts(report);
  assert.deepEqual(counts, { claimed: 2, rejected: 1, not_covered: 0 });
  for (const outcome of ["claimed", "rejected", "not_covered"]) {
    assert.equal(await summaryCount(page, outcome), counts[outcome], outcome);
  }

  // Hovering the rejected span shows its code, message and hint.
  const rejectedId = sites.find((s) => s.outcome === "rejected").id;
  await page.locator(`#source-editor .cm-site[data-site="${rejectedId}"]`).first().hover();
  const tooltip = page.locator(".site-tooltip .tooltip-entry.rejected");
  await tooltip.waitFor({ timeout: 5000 });
  const tooltipText = await tooltip.innerText();
  assert.ok(tooltipText.includes(rejected.code), tooltipText);
  assert.ok(tooltipText.includes(rejected.message), tooltipText);
  if (rejected.hint) assert.ok(tooltipText.includes(rejected.hint), tooltipText);

  // The fragment now reproduces what was typed.
  const hash = await page.evaluate(() => location.hash);
  assert.match(hash, /^#code=/);
  assert.equal(decodeFragment(hash.slice("#code=".length)), await editorText(page));

  await page.screenshot({ path: path.join(ARTIFACTS, "typed-function.png") });
  assertNoPageErrors(page);
  await page.close();
});

test("clicking a site highlights its Rust, and clicking the Rust selects the site", async () => {
  const page = await openPlayground(browser.context, server.url);
  await loadExample(page, "control_flow");
  const report = await lastReport(page);
  assert.ok(report.rust, "the control-flow example is lowered");
  const sites = reportSites(report).filter((s) => s.outcome === "claimed" && Array.isArray(s.rust_range));
  assert.ok(sites.length >= 8, `claimed sites with a Rust range: ${sites.length}`);
  const rustOf = (site) => report.rust.slice(site.rust_range[0], site.rust_range[1]);
  for (const site of sites) {
    assert.ok(rustOf(site).length > 0, `empty Rust range for ${site.target} at ${site.line}:${site.col}`);
    if (site.rust) assert.ok(rustOf(site).includes(site.rust) || site.rust.includes(rustOf(site)));
  }

  // Table row -> Rust highlight, scrolled into view (the last site sits low in the Rust).
  const last = sites.at(-1);
  await page.click(`#sites tr[data-site="${last.id}"] td:first-child`);
  await assertRustHighlight(page, rustOf(last));
  assert.ok(await page.locator("#rust-editor .cm-rust-selected").first().isVisible());
  await assertInScrollView(page, "#rust-editor", "#rust-editor .cm-rust-selected");
  assert.equal(await page.locator(`#source-editor .cm-site-selected[data-site="${last.id}"]`).count() > 0, true);

  // Editor mark -> the innermost site under the click, and its Rust.
  const first = sites[0];
  const firstMark = page.locator(`#source-editor .cm-site[data-site="${first.id}"]`).first();
  await firstMark.click();
  const selectedRow = await page.locator("#sites tr.selected").getAttribute("data-site");
  const selected = reportSites(report).find((s) => s.id === selectedRow);
  assert.ok(selected, "a table row is selected after clicking a mark");
  await assertRustHighlight(page, rustOf(selected));
  await page.screenshot({ path: path.join(ARTIFACTS, "site-to-rust.png") });

  // Rust -> site: click inside the innermost Rust range of another site.
  const innermost = sites
    .filter((s) => !sites.some((o) => o !== s && o.rust_range[0] >= s.rust_range[0] && o.rust_range[1] <= s.rust_range[1]))
    .find((s) => s.id !== selected.id);
  const rustMark = page.locator(`#rust-editor .cm-rust-site[data-site="${innermost.id}"]`).first();
  await rustMark.scrollIntoViewIfNeeded();
  await rustMark.click();
  assert.equal(await page.locator("#sites tr.selected").getAttribute("data-site"), innermost.id);
  assert.ok((await page.locator(`#source-editor .cm-site-selected[data-site="${innermost.id}"]`).count()) > 0);
  await assertRustHighlight(page, rustOf(innermost));

  // A function's row -> its whole generated pyfunction (the report's function rust_range).
  const fnIndex = report.functions.length - 1;
  const fn = report.functions[fnIndex];
  assert.ok(Array.isArray(fn.rust_range) && fn.symbol, "a native function has a symbol and a Rust range");
  await page.click(`#sites tr[data-function="${fnIndex}"] td:first-child`);
  await page.waitForFunction(() => document.querySelector("#rust-editor .cm-rust-fn-selected"));
  const fnRust = report.rust.slice(fn.rust_range[0], fn.rust_range[1]);
  assert.ok(fnRust.includes(`fn ${fn.symbol}`), `the range holds fn ${fn.symbol}`);
  const shown = await markedText(page, "#rust-editor .cm-rust-fn-selected");
  // Marked pieces carry no line breaks, and CodeMirror draws only the lines in view.
  assert.ok(shown.length > 0 && fnRust.replaceAll("\n", "").startsWith(shown.slice(0, 60)), `highlighted: ${shown.slice(0, 60)}`);
  assertNoPageErrors(page);
  await page.close();
});

/** Asserts the first element matching `inner` lies inside the visible part of `outer`'s scroller. */
async function assertInScrollView(page, outer, inner) {
  const [box, view] = await Promise.all([
    page.locator(inner).first().boundingBox(),
    page.locator(`${outer} .cm-scroller`).boundingBox(),
  ]);
  assert.ok(box.y >= view.y - 1 && box.y + box.height <= view.y + view.height + 1, "highlight scrolled into view");
}

test("a URL fragment reproduces the source", async () => {
  const rejected = examples.find((e) => e.id === "rejected");
  const page = await openPlayground(browser.context, `${server.url}#code=${encodeFragment(rejected.source)}`);
  assert.equal(await editorText(page), rejected.source);
  const report = await lastReport(page);
  assert.ok(report.functions.length >= 8);
  for (const fn of report.functions) {
    assert.equal(fn.route, "fallback", `${fn.name} must fall back`);
    assert.ok(fn.sites.some((s) => s.outcome === "rejected"), `${fn.name} has a rejected site`);
  }
  assert.equal(await summaryCount(page, "fn-native"), 0);
  assert.equal(await summaryCount(page, "rejected"), outcomeCounts(report).rejected);
  assertNoPageErrors(page);

  // A named example in the fragment, and a fragment change in an open page.
  const classification = examples.find((e) => e.id === "classification_head");
  await page.goto(`${server.url}#example=classification_head`);
  await waitForReady(page);
  await waitForCurrentAnalysis(page);
  assert.equal(await editorText(page), classification.source);
  const phaseA = examples.find((e) => e.id === "phase_a_chain");
  await page.evaluate((hash) => (location.hash = hash), `#code=${encodeFragment(phaseA.source)}`);
  await page.waitForFunction((src) => window.torchlowerPlayground.analyzedText === src, phaseA.source);
  assert.equal((await lastReport(page)).functions[0].route, "native");
  assertNoPageErrors(page);
  await page.close();
});

// A function with an `Optional[...]` tensor parameter runs one specialised copy per None /
// tensor combination; the function itself only dispatches (no sites of its own).
const OPTIONAL_SOURCE = `from typing import Optional

import torch
from torchlower.types import TensorF32Cpu2D


def scores(q: TensorF32Cpu2D, k: TensorF32Cpu2D, mask: Optional[TensorF32Cpu2D] = None) -> TensorF32Cpu2D:
    s = q @ k.t()
    if mask is not None:
        s = s + mask
    return torch.softmax(s, dim=-1)
`;

test("a dispatching function lists its copies with their sites and Rust", async () => {
  const page = await openPlayground(browser.context, `${server.url}#code=${encodeFragment(OPTIONAL_SOURCE)}`);
  const report = await lastReport(page);
  const [fn] = report.functions;
  assert.equal(fn.route, "native");
  assert.deepEqual(fn.sites, [], "the dispatcher has no sites of its own");
  assert.equal(fn.specialisations.length, 2);
  // one header row per copy, after the function's, and every copy's site as a row and a mark
  const headers = await page.$$eval("#sites tr.fn-row", (rows) => rows.map((r) => [r.dataset.function, r.classList.contains("copy")]));
  assert.deepEqual(headers, [["0", false], ["0.s0", true], ["0.s1", true]]);
  const sites = reportSites(report);
  assert.ok(sites.length >= 4, `copies' sites: ${sites.length}`);
  assert.equal(await page.locator("#sites tr.site-row").count(), sites.length);
  assert.deepEqual(await sourceMarks(page), Object.fromEntries(sites.map((s) => [s.id, s.outcome])));
  assert.equal(await summaryCount(page, "claimed"), sites.filter((s) => s.outcome === "claimed").length);
  // the mask's `+` runs in the tensor copy only; its row leads to that copy's Rust
  const add = sites.find((s) => s.target === "+");
  assert.ok(add && add.id.startsWith("0.s"), "the + site belongs to a copy");
  await page.click(`#sites tr[data-site="${add.id}"] td:first-child`);
  await assertRustHighlight(page, report.rust.slice(add.rust_range[0], add.rust_range[1]));
  assertNoPageErrors(page);
  await page.close();
});

test("clicking a code opens the registry's explanation", async () => {
  const page = await openPlayground(browser.context, server.url);
  await loadExample(page, "rejected");
  const report = await lastReport(page);
  const rules = await page.evaluate(() => window.torchlowerPlayground.rules);
  const site = reportSites(report).find((s) => s.outcome === "rejected");
  await page.click(`#sites tr[data-site="${site.id}"] .code-link`);
  const panel = page.locator("#rules-panel");
  await panel.waitFor({ state: "visible" });
  assert.equal(await panel.locator("h2").innerText(), site.code);
  const entry = rules.find((r) => r.code === site.code || r.id === site.code);
  assert.ok(entry, `registry entry for ${site.code}`);
  const text = await panel.innerText();
  for (const field of ["summary", "explanation"]) {
    if (entry[field]) assert.ok(text.includes(entry[field].trim().split("\n")[0]), `${field} shown`);
  }
  await page.screenshot({ path: path.join(ARTIFACTS, "rules-panel.png") });
  await page.click("#rules-close");
  assert.equal(await panel.isVisible(), false);
  assertNoPageErrors(page);
  await page.close();
});

test("every rule and code used by the bundled examples is in the registry", async () => {
  const page = await openPlayground(browser.context, server.url);
  const rules = await page.evaluate(() => window.torchlowerPlayground.rules);
  const names = new Set(rules.flatMap((r) => [r.id, r.code].filter(Boolean)));
  for (const example of examples) {
    await loadExample(page, example.id);
    const report = await lastReport(page);
    const diagnostics = [...report.diagnostics, ...report.functions.flatMap((f) => f.diagnostics)];
    for (const used of [...reportSites(report).flatMap((s) => [s.rule, s.code]), ...diagnostics.map((d) => d.code)]) {
      if (used) assert.ok(names.has(used), `${example.id}: ${used} is not in rules()`);
    }
  }
  assertNoPageErrors(page);
  await page.close();
});

test("a syntax error is shown as a module diagnostic", async () => {
  const page = await openPlayground(browser.context, server.url);
  await loadExample(page, "syntax_error");
  const report = await lastReport(page);
  assert.ok(report.diagnostics.length >= 1, "the analyzer reports the syntax error");
  const diag = report.diagnostics[0];
  const shown = page.locator("#diagnostics .diagnostic.module").first();
  assert.ok(await shown.isVisible());
  const text = await shown.innerText();
  assert.ok(text.includes(diag.code) && text.includes(diag.message), text);
  assert.ok((await page.locator("#source-editor .cm-diagnostic").count()) > 0, "the span is underlined");
  assert.equal(await page.locator('#summary [data-count="module-diagnostics"]').isVisible(), true);
  assertNoPageErrors(page);
  await page.close();
});

test("each bundled example renders consistently with its report", async () => {
  const page = await openPlayground(browser.context, server.url);
  for (const example of examples) {
    await loadExample(page, example.id);
    const report = await lastReport(page);
    const sites = reportSites(report);
    assert.equal(await page.locator("#sites tr.site-row").count(), sites.length, example.id);
    assert.deepEqual(await sourceMarks(page), Object.fromEntries(sites.map((s) => [s.id, s.outcome])), example.id);
    const native = report.functions.filter((f) => f.route === "native").length;
    assert.equal(await summaryCount(page, "fn-native"), native, example.id);
    assert.equal(await summaryCount(page, "fn-fallback"), report.functions.length - native, example.id);
    assert.equal(await page.evaluate(() => window.torchlowerPlayground.rustText()), report.rust ?? "", example.id);
    // Every site the fusion pass grouped shows its kernel in its row, and no other row does.
    const fusedRows = await page.$$eval("#sites tr.site-row", (rows) =>
      Object.fromEntries(rows.map((r) => [r.dataset.site, r.querySelector(".badge.fused")?.textContent ?? null])),
    );
    assert.deepEqual(
      fusedRows,
      Object.fromEntries(sites.map((s) => [s.id, s.fused_into ? `fused: ${s.fused_into}` : null])),
      example.id,
    );
  }
  // The fusion pass groups something in the bundled examples (so the check above is not empty).
  await loadExample(page, "phase_a_chain");
  assert.ok(reportSites(await lastReport(page)).some((s) => s.fused_into), "phase_a_chain has fused sites");
  // The seed's accepted examples lower every function natively.
  for (const id of ["phase_a_chain", "control_flow", "cpu_followup", "classification_head"]) {
    await loadExample(page, id);
    const report = await lastReport(page);
    for (const fn of report.functions) assert.equal(fn.route, "native", `${id}: ${fn.name}`);
  }
  await loadExample(page, "phase_a_chain");
  await page.screenshot({ path: path.join(ARTIFACTS, "playground.png") });
  assertNoPageErrors(page);
  await page.close();
});

test("knock-on sites are greyed and name their root cause", async () => {
  const source = [
    "import torch",
    "import torch.nn.functional as F",
    "from torchlower.types import TensorF32Cpu1D, TensorF32Cpu2D",
    "",
    "def block(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:",
    "    h = torch.special.i0(x)",
    "    y = F.linear(h, w, b)",
    "    return y.relu() + x",
    "",
  ].join("\n");
  const page = await openPlayground(browser.context, `${server.url}#code=${encodeFragment(source)}`);
  const report = await lastReport(page);
  const knockOns = report.functions[0].sites.filter((s) => Array.isArray(s.caused_by));
  assert.equal(knockOns.length, 3, JSON.stringify(report.functions[0].sites));
  assert.equal(await page.locator("#sites tr.site-row.knock-on").count(), 3);
  assert.equal(await page.locator("#sites tr.site-row:not(.knock-on)").count(), 1);
  const titles = await page.$$eval("#sites tr.site-row.knock-on", (rows) => rows.map((r) => r.title));
  assert.ok(titles.some((t) => t.startsWith("knock-on of torch.special.i0 at 6:9")), titles.join(" | "));
  assert.ok((await page.locator("#source-editor .cm-site-knock-on").count()) >= 3);
  assertNoPageErrors(page);
  await page.close();
});

test("an analysis over the time budget is stopped in its worker, and the page recovers", async () => {
  // a 1 ms budget: every analysis is stopped (its Web Worker terminated and replaced)
  const page = await openPlayground(browser.context, `${server.url}?analysis-budget-ms=1`);
  const failures = await page.evaluate(() => window.torchlowerPlayground.failures);
  assert.ok(failures.length >= 1, "the first analysis ran past a 1 ms budget");
  assert.match(failures[0].message, /took longer than 0\.001 s and was stopped/);
  assert.match(await page.locator("#summary.fatal").innerText(), /analyzer failed: the analysis took longer/);
  assert.ok(page.playgroundErrors.every((e) => e.includes("took longer than")), page.playgroundErrors.join("\n"));
  // the page still answers: with a normal budget, the next edit is analyzed by a fresh worker
  await page.evaluate(() => window.torchlowerPlayground.setTimeBudget(10_000));
  await page.locator("#source-editor .cm-content").click();
  await page.keyboard.press("Control+End");
  await page.keyboard.type("\n# edited");
  await waitForCurrentAnalysis(page);
  assert.equal(await page.locator("#summary.fatal").count(), 0);
  assert.ok((await lastReport(page)).functions.length > 0);
  await page.close();
});

test("a module example shows its class read-only, claims on its statements, re-typed by the description", async () => {
  const page = await openPlayground(browser.context, server.url);
  const file = path.join(REPO, "web-playground/examples/modules/nanogpt_block.json");
  const block = JSON.parse(await readFile(file, "utf8"));
  const classLines = block.source.split("\n");
  let count = await analysisCount(page);
  await page.selectOption("#example-select", "module_nanogpt_block");
  await page.waitForFunction(
    (n) => window.torchlowerPlayground.analyses.length > n && window.torchlowerPlayground.analyzedText.includes("def _tl_module_forward("),
    count,
    { timeout: 10_000 },
  );
  assert.equal(await editorText(page), block.source);
  assert.equal(await page.locator("#module-panel").isVisible(), true);
  let report = await lastReport(page);
  // one function per instance of the tree, named after its method, all native (as `check` says)
  assert.deepEqual(
    report.functions.map((f) => f.name).sort(),
    ["Block.forward", "CausalSelfAttention.forward [attn]", "LayerNorm.forward [ln_1]", "LayerNorm.forward [ln_2]", "MLP.forward [mlp]"],
  );
  assert.ok(report.functions.every((f) => f.route === "native"), JSON.stringify(report.functions.map((f) => f.route)));
  assert.equal(await summaryCount(page, "fn-native"), 5);
  // every site lies in the class's file, the softmax on its own statement, and each is marked
  const sites = reportSites(report);
  assert.ok(sites.length > 20 && sites.every((s) => s.line >= 1 && s.line <= classLines.length));
  const softmaxLine = classLines.findIndex((l) => l.includes("att = F.softmax(att, dim=-1)")) + 1;
  assert.ok(sites.some((s) => s.target.endsWith("softmax") && s.line === softmaxLine));
  assert.deepEqual(await sourceMarks(page), Object.fromEntries(sites.map((s) => [s.id, s.outcome])));
  await page.screenshot({ path: path.join(ARTIFACTS, "playground-module.png") });
  // the class is read-only: typing changes nothing
  await page.locator("#source-editor .cm-content").click();
  await page.keyboard.type("zzz");
  assert.equal(await editorText(page), block.source);
  // rank 2 for x: `B, T, C = x.size()` no longer unpacks, so the attention and the block fall back
  count = await analysisCount(page);
  const description = JSON.parse(await page.inputValue("#module-description"));
  description.forward.x = "TensorF32Cpu2D";
  await page.fill("#module-description", JSON.stringify(description, null, 2));
  await waitForAnalysisAfter(page, count);
  report = await lastReport(page);
  const routes = Object.fromEntries(report.functions.map((f) => [f.name, f.route]));
  assert.equal(routes["Block.forward"], "fallback");
  assert.ok((await page.evaluate(() => window.torchlowerPlayground.analyzedText)).includes("x: TensorF32Cpu2D"));
  // a description that is not JSON says so and keeps the last view
  count = await analysisCount(page);
  await page.fill("#module-description", "{ not json");
  await page.waitForFunction(() => document.querySelector("#module-note").classList.contains("error"));
  assert.match(await page.locator("#module-note").innerText(), /not JSON/);
  assert.equal(await analysisCount(page), count);
  // a link reproduces the module example
  assert.match(page.url(), /#example=module_nanogpt_block$/);
  // a function example makes the editor editable again and hides the panel
  await loadExample(page, "phase_a_chain");
  assert.equal(await page.locator("#module-panel").isVisible(), false);
  assertNoPageErrors(page);
  await page.close();
});
