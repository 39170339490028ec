// Shared pieces of the browser tests: a static file server for the built playground on a
// random localhost port, and headless Chromium (Debian's /usr/bin/chromium) driven by
// playwright-core with a fresh profile.
import { createServer } from "node:http";
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const DIST = process.env.PLAYGROUND_DIST ?? path.join(REPO, "web-playground/dist");
export const ARTIFACTS = path.join(REPO, "artifacts/browser");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

const MIME = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".wasm": "application/wasm",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".py": "text/plain; charset=utf-8",
};

/** Serves DIST on 127.0.0.1 at a free port; resolves to `{ url, close() }`. */
export async function serveDist() {
  await stat(path.join(DIST, "index.html")).catch(() => {
    throw new Error(`${DIST}/index.html is missing: run scripts/build-playground.sh first`);
  });
  const server = createServer(async (req, res) => {
    const urlPath = decodeURIComponent(new URL(req.url, "http://x").pathname);
    const file = path.join(DIST, urlPath.endsWith("/") ? urlPath + "index.html" : urlPath);
    if (!file.startsWith(DIST)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { "content-type": MIME[path.extname(file)] ?? "application/octet-stream" });
      res.end(body);
    } catch {
      res.writeHead(404).end("not found");
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((r) => server.close(r)) };
}

/** Headless Chromium with a throwaway profile; resolves to `{ context, close() }`. */
export async function launchBrowser() {
  const userDataDir = await mkdtemp(path.join(tmpdir(), "torchlower-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 900 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Opens the playground and waits for its first analysis to be rendered. Fails on any page
 * error or console error, which the tests treat as bugs.
 */
export async function openPlayground(context, url) {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(`pageerror: ${error.message}`));
  page.on("console", (msg) => {
    if (msg.type() === "error") errors.push(`console: ${msg.text()}`);
  });
  await page.goto(url);
  await waitForReady(page, errors);
  page.playgroundErrors = errors;
  return page;
}

/** Waits for the page's first analysis; fails fast with the page's own message if it broke. */
export async function waitForReady(page, errors = []) {
  const state = await page.waitForFunction(
    () =>
      window.torchlowerPlayground?.ready === true ? "ready"
      : document.querySelector("#summary.fatal") ? document.querySelector("#summary").textContent
      : false,
    null,
    { timeout: 30_000 },
  );
  const outcome = await state.jsonValue();
  if (outcome !== "ready") throw new Error(`the playground did not start: ${outcome}\n${errors.join("\n")}`);
}

/** Number of analyses the page has run so far. */
export const analysisCount = (page) => page.evaluate(() => window.torchlowerPlayground.analyses.length);

/** Waits until the page has run more than `count` analyses. */
export async function waitForAnalysisAfter(page, count) {
  await page.waitForFunction((n) => window.torchlowerPlayground.analyses.length > n, count, { timeout: 10_000 });
}

/** The latest report the page rendered (the analyzer's own JSON). */
export const lastReport = (page) => page.evaluate(() => window.torchlowerPlayground.lastReport);

/** The editor's document text. */
export const editorText = (page) => page.evaluate(() => window.torchlowerPlayground.sourceText());

/** Waits until the rendered analysis is of the editor's current text (debounce elapsed). */
export async function waitForCurrentAnalysis(page) {
  await page.waitForFunction(
    () => window.torchlowerPlayground.analyzedText === window.torchlowerPlayground.sourceText(),
    null,
    { timeout: 10_000 },
  );
}

/** Every site of a report, with the `id` the page gives it ("<function>.<site>" indices). */
export function reportSites(report) {
  const sitesOf = (fn, id) => fn.sites.map((site, s) => ({ ...site, fn: fn.name, id: `${id}.${s}` }));
  // a function's specialised copies (`Optional[...]` combinations, a helper's call types) follow it
  return report.functions.flatMap((fn, f) => [
    ...sitesOf(fn, f),
    ...(fn.specialisations ?? []).flatMap((copy, c) => sitesOf(copy, `${f}.s${c}`)),
  ]);
}

/** Counts of sites per outcome in a report. */
export function outcomeCounts(report) {
  const counts = { claimed: 0, rejected: 0, not_covered: 0 };
  for (const site of reportSites(report)) counts[site.outcome] += 1;
  return counts;
}

/** The bundled example sources, read from the repository (what the page must show). */
export async function bundledExamples() {
  const dir = path.join(REPO, "web-playground/examples");
  const names = (await readdir(dir)).filter((n) => n.endsWith(".py")).sort();
  return Promise.all(
    names.map(async (name) => ({
      id: name.replace(/\.py$/, "").replace(/^\d+_/, ""),
      source: await readFile(path.join(dir, name), "utf8"),
    })),
  );
}
