// The analyzer as the page sees it: the wasm-bindgen build of analyzer-wasm (feature `web`),
// loaded once, called with the editor text, its JSON report parsed and flattened into the
// shape the views share. No analysis happens in JavaScript.
//
// scripts/build-wasm.sh writes the wasm-bindgen output to web-playground/public/pkg/, which
// Vite copies unchanged next to index.html; it is loaded at run time from there rather than
// bundled (files under public/ cannot be imported by the bundle).
const PKG_MODULE = "pkg/torchlower_analyzer.js";
const FILENAME = "playground.py";

let wasmAnalyze;
let wasmRules;

/** Loads and instantiates the wasm module; resolves to `{ analyze, rules }`. */
export async function loadAnalyzer() {
  const pkg = await import(/* @vite-ignore */ new URL(PKG_MODULE, document.baseURI).href);
  await pkg.default();
  wasmAnalyze = pkg.analyze;
  wasmRules = pkg.rules;
  return { analyze, rules: loadRules() };
}

/**
 * Runs the analyzer on `source` and returns `{ report, functions, sites, analyzeMs }`: the
 * report as the analyzer emitted it, its functions and sites as selectable items (below), and
 * the time the wasm call plus JSON parsing took.
 */
export function analyze(source) {
  const started = performance.now();
  const report = JSON.parse(wasmAnalyze(source, FILENAME));
  const analyzeMs = performance.now() - started;
  return { report, ...selectableItems(report), analyzeMs };
}

/**
 * Functions and sites as the views select them: each keeps the report's fields and gains
 * `kind`, a `key` that survives re-analysis while the item is unchanged, an `id` (indices into
 * the report), and its Rust range as string indices (`rustFrom`, `rustTo`, or null).
 */
function selectableItems(report) {
  const toIndex = byteToIndexMapper(report.rust ?? "");
  const rustSpan = (range) =>
    Array.isArray(range) ? { rustFrom: toIndex(range[0]), rustTo: toIndex(range[1]) } : { rustFrom: null, rustTo: null };
  const functions = [];
  const sites = [];
  (report.functions ?? []).forEach((fn, fnIndex) => {
    const fnItem = { ...fn, kind: "function", key: `fn|${fn.name}|${fn.line}`, id: String(fnIndex), ...rustSpan(fn.rust_range) };
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
        id: `${fnIndex}.${siteIndex}`,
        knockOn: Array.isArray(site.caused_by),
        causeIds: (site.caused_by ?? []).map((i) => `${fnIndex}.${i}`),
        causeText: causes.map((c) => `${c.target} at ${c.line}:${c.col}`).join(", "),
        ...rustSpan(site.rust_range),
      });
    });
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
function loadRules() {
  const raw = JSON.parse(wasmRules());
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
