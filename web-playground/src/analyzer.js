// The analyzer as the page sees it: the wasm-bindgen build of analyzer-wasm (feature `web`),
// run in a Web Worker (analyzerWorker.js), called with the editor text, its JSON report parsed
// and flattened into the shape the views share. No analysis happens in JavaScript.
//
// Each analysis has a time budget: past it the worker is terminated (the only way to stop a
// wasm call) and a fresh one started, the analysis fails with a message, and the page stays
// usable. The analyzer bounds its own work too; the budget is what keeps the page alive if
// some input ever defeats those bounds.
//
// scripts/build-wasm.sh writes the wasm-bindgen output to web-playground/public/pkg/, which
// Vite copies unchanged next to index.html; the worker loads it at run time from there rather
// than from the bundle (files under public/ cannot be imported by the bundle).
const PKG_MODULE = "pkg/torchlower_analyzer.js";
const FILENAME = "playground.py";
/** How long one analysis may take before the worker is stopped (the page's own budget). */
export const TIME_BUDGET_MS = 4000;

/** A running worker: resolves once its wasm is instantiated. */
function startWorker(pkgUrl) {
  const worker = new Worker(new URL("./analyzerWorker.js", import.meta.url), { type: "module" });
  const pending = new Map();
  const ready = new Promise((resolve, reject) => {
    worker.onmessage = ({ data }) => {
      if (data.type === "ready") resolve(data.rules);
      else if (data.type === "failed") reject(new Error(data.message));
      else {
        const call = pending.get(data.id);
        if (!call) return;
        pending.delete(data.id);
        clearTimeout(call.timer);
        if (data.type === "report") call.resolve(data);
        else call.reject(new Error(data.message));
      }
    };
    worker.onerror = (event) => reject(new Error(event.message || "the analyzer worker failed to start"));
  });
  worker.postMessage({ type: "init", pkgUrl });
  return { worker, pending, ready };
}

/**
 * Starts the analyzer worker; resolves to `{ analyze, rules, setTimeBudget }` (`analyze`
 * returns a promise; `setTimeBudget(ms)` changes the budget of later analyses).
 */
export async function loadAnalyzer({ timeBudgetMs = TIME_BUDGET_MS } = {}) {
  const pkgUrl = new URL(PKG_MODULE, document.baseURI).href;
  let current = startWorker(pkgUrl);
  const rulesJson = await current.ready;
  let nextId = 0;

  /** Terminates a worker that ran past the budget and starts a fresh one for later calls. */
  const restart = (stuck) => {
    stuck.worker.terminate();
    for (const call of stuck.pending.values()) {
      clearTimeout(call.timer);
      call.reject(new Error(`the analysis took longer than ${timeBudgetMs / 1000} s and was stopped; edit the source to try again`));
    }
    stuck.pending.clear();
    if (current === stuck) current = startWorker(pkgUrl);
  };

  const analyze = async (source) => {
    const started = performance.now();
    const running = current;
    await running.ready;
    const id = ++nextId;
    const answer = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => restart(running), timeBudgetMs);
      running.pending.set(id, { resolve, reject, timer });
      running.worker.postMessage({ type: "analyze", id, source, filename: FILENAME });
    });
    const report = JSON.parse(answer.json);
    const analyzeMs = performance.now() - started;
    return { report, ...selectableItems(report), analyzeMs, wasmMs: answer.ms };
  };
  const setTimeBudget = (ms) => {
    timeBudgetMs = ms;
  };
  return { analyze, rules: loadRules(rulesJson), setTimeBudget };
}

/**
 * Functions and sites as the views select them: each keeps the report's fields and gains
 * `kind`, a `key` that survives re-analysis while the item is unchanged, an `id` (indices into
 * the report), and its Rust range as string indices (`rustFrom`, `rustTo`, or null). A
 * function's specialised copies (`specialisations`: one per None/tensor combination of its
 * `Optional[...]` parameters, or per call types of a helper) follow it as functions of their
 * own (`copyOf`), with their sites: what runs is a copy, so that is where the claims are.
 */
export function selectableItems(report) {
  const toIndex = byteToIndexMapper(report.rust ?? "");
  const rustSpan = (range) =>
    Array.isArray(range) ? { rustFrom: toIndex(range[0]), rustTo: toIndex(range[1]) } : { rustFrom: null, rustTo: null };
  const functions = [];
  const sites = [];
  const addFunction = (fn, id, extra = {}) => {
    const fnItem = { ...fn, kind: "function", key: `fn|${fn.name}|${fn.line}`, id, ...extra, ...rustSpan(fn.rust_range) };
    delete fnItem.specialisations;
    functions.push(fnItem);
    const fnSites = fn.sites ?? [];
    fnSites.forEach((site, siteIndex) => {
      // a knock-on (`caused_by`): the failed sites its input came from, for the table's note
      const causes = (site.caused_by ?? []).map((i) => fnSites[i]).filter(Boolean);
      sites.push({
        ...site,
        kind: "site",
        fn: fnItem,
        key: `${fn.name}|${site.line}:${site.col}-${site.end_line}:${site.end_col}|${site.target}`,
        id: `${id}.${siteIndex}`,
        knockOn: Array.isArray(site.caused_by),
        causeIds: (site.caused_by ?? []).map((i) => `${id}.${i}`),
        causeText: causes.map((c) => `${c.target} at ${c.line}:${c.col}`).join(", "),
        ...rustSpan(site.rust_range),
      });
    });
    return fnItem;
  };
  (report.functions ?? []).forEach((fn, fnIndex) => {
    const parent = addFunction(fn, String(fnIndex));
    (fn.specialisations ?? []).forEach((copy, copyIndex) => addFunction(copy, `${fnIndex}.s${copyIndex}`, { copyOf: parent.key }));
  });
  return { functions, sites };
}

/**
 * rust_range holds UTF-8 byte offsets into `report.rust`; CodeMirror indexes UTF-16 units.
 * The emitted Rust is ASCII today, where both agree; the mapping keeps us right if a comment
 * ever carries a non-ASCII identifier from the source.
 */
function byteToIndexMapper(text) {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(text)) return (offset) => Math.min(offset, text.length);
  const byteAt = [];
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    byteAt.push(bytes);
    const code = text.codePointAt(i);
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    if (code >= 0x10000) {
      byteAt.push(bytes);
      i++;
    }
  }
  byteAt.push(bytes);
  return (offset) => {
    let lo = 0;
    let hi = byteAt.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (byteAt[mid] < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/**
 * The rule registry (`{ rules, extensions, codes }`), flattened into one list where each entry
 * carries its `kind`, and indexed by every name a report may use: rule id or diagnostic code.
 */
function loadRules(rulesJson) {
  const raw = JSON.parse(rulesJson);
  const entries = [
    ...(raw.rules ?? []).map((entry) => ({ ...entry, kind: "rule" })),
    ...(raw.extensions ?? []).map((entry) => ({ ...entry, kind: "extension" })),
    ...(raw.codes ?? []).map((entry) => ({ ...entry, kind: "code" })),
  ];
  const byName = new Map();
  for (const entry of entries) {
    for (const name of [entry.id, entry.code]) if (name) byName.set(String(name), entry);
  }
  return { entries, byName };
}
