// The analyzer as the page sees it: the wasm-bindgen build of analyzer-wasm (feature `web`),
// loaded once, called with the editor text, its JSON report parsed and flattened into the
// shape the views share. No analysis happens in JavaScript.
import initWasm, { analyze as wasmAnalyze, rules as wasmRules } from "./pkg/torchlower_analyzer.js";

const FILENAME = "playground.py";

/** Loads and instantiates the wasm module (the .wasm is a hashed asset next to the page). */
export async function loadAnalyzer() {
  await initWasm();
  return { analyze, rules: loadRules() };
}

/**
 * Runs the analyzer on `source` and returns `{ report, sites, analyzeMs }`: the report as the
 * analyzer emitted it, every site with its function and its Rust range as string indices,
 * and the time the wasm call plus JSON parsing took.
 */
export function analyze(source) {
  const started = performance.now();
  const report = JSON.parse(wasmAnalyze(source, FILENAME));
  const analyzeMs = performance.now() - started;
  return { report, sites: flattenSites(report), analyzeMs };
}

/** One entry per site, in source order, with a stable key and its function. */
function flattenSites(report) {
  const toIndex = byteToIndexMapper(report.rust ?? "");
  const sites = [];
  (report.functions ?? []).forEach((fn, fnIndex) => {
    (fn.sites ?? []).forEach((site, siteIndex) => {
      const range = Array.isArray(site.rust_range) ? site.rust_range : null;
      sites.push({
        ...site,
        fn,
        key: `${fn.name}|${site.line}:${site.col}-${site.end_line}:${site.end_col}|${site.target}`,
        id: `${fnIndex}.${siteIndex}`,
        rustFrom: range ? toIndex(range[0]) : null,
        rustTo: range ? toIndex(range[1]) : null,
      });
    });
  });
  sites.sort((a, b) => a.line - b.line || a.col - b.col);
  return sites;
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
