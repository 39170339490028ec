// Wires the playground together: loads the analyzer wasm, analyzes the editor text on every
// edit (debounced), and keeps the source editor, emitted Rust, sites table, summary,
// diagnostics, rules panel and URL fragment in step with the latest report and selection.
// A module example (moduleExamples.js) shows its class read-only and is analyzed from the
// generated functions typed by the description panel.
import "./style.css";
import { loadAnalyzer, selectableItems } from "./analyzer.js";
import { createSourceEditor, positionOf } from "./sourceEditor.js";
import { createRustPane } from "./rustPane.js";
import { createSitesTable } from "./sitesTable.js";
import { renderSummary, renderDiagnostics } from "./summary.js";
import { createRulesPanel } from "./rulesPanel.js";
import { examples, findExample } from "./examples.js";
import { analysisText, describe, entryTypes, findModuleExample, inFileTerms, moduleExamples } from "./moduleExamples.js";
import { readFragment, writeFragment } from "./urlState.js";
import { EditorView } from "@codemirror/view";

const ANALYZE_DEBOUNCE_MS = 150;
const DEFAULT_EXAMPLE = "phase_a_chain";

/**
 * Measurements and the latest state, for the browser tests and for anyone curious:
 * `analyses` holds one `{ analyzeMs, renderMs, chars }` per analysis run.
 */
const stats = { analyses: [], failures: [], firstAnalysisAt: null, lastReport: null, analyzedText: null, ready: false };
window.torchlowerPlayground = stats;

const $ = (id) => document.getElementById(id);

async function start() {
  const summaryEl = $("summary");
  let analyzer;
  try {
    // `?analysis-budget-ms=N` overrides the time budget (the browser tests use a tiny one)
    const budget = Number(new URLSearchParams(location.search).get("analysis-budget-ms"));
    analyzer = await loadAnalyzer(budget > 0 ? { timeBudgetMs: budget } : {});
  } catch (error) {
    summaryEl.textContent = `could not load the analyzer: ${error.message}`;
    summaryEl.classList.add("fatal");
    throw error;
  }
  const rulesPanel = createRulesPanel($("rules-panel"), $("rules-body"), $("rules-close"), analyzer.rules);

  let selectedKey = null;
  let debounceTimer = null;
  let fragmentWrite = 0;

  /** Selects a site or function (or nothing) in every view but scrolls only the others. */
  const select = (item, { from }) => {
    selectedKey = item?.key ?? null;
    source.select(item, { scroll: from !== "source" });
    rust.select(selectedKey, { scroll: from !== "rust" });
    table.select(selectedKey);
  };

  const source = createSourceEditor($("source-editor"), {
    doc: "",
    onChange: () => {
      clearTimeout(debounceTimer);
      debounceTimer = setTimeout(runAnalysis, ANALYZE_DEBOUNCE_MS);
    },
    onSiteClick: (site) => select(site, { from: "source" }),
    onCodeClick: (code) => rulesPanel.open(code),
  });
  const rust = createRustPane($("rust-editor"), { onSelect: (item) => select(item, { from: "rust" }) });
  const table = createSitesTable($("sites"), {
    onSelect: (item) => select(item, { from: "table" }),
    onCodeClick: (code) => rulesPanel.open(code),
  });

  /** The module example shown (its class read-only, typed by the description panel), or null. */
  let moduleExample = null;
  $("module-description").addEventListener("input", () => {
    clearTimeout(debounceTimer);
    debounceTimer = setTimeout(runAnalysis, ANALYZE_DEBOUNCE_MS);
  });

  /** What to analyze: the editor's text, or a module example's file with its generated
   * functions typed by the description (null, with the panel saying why, if it is invalid). */
  function analysisInput() {
    if (!moduleExample) return source.getText();
    const note = $("module-note");
    try {
      const text = analysisText(moduleExample, entryTypes(moduleExample, $("module-description").value));
      note.textContent = "the class is read-only here: edit the types to re-analyze";
      note.classList.remove("error");
      $("module-generated").textContent = text.slice(moduleExample.source.length).replace(/^\n+/, "");
      return text;
    } catch (error) {
      note.textContent = error.message;
      note.classList.add("error");
      return null;
    }
  }

  /** Analyzes the editor's text now and renders the result (the debounce timer ends here).
   * A result that arrives after a newer analysis started is dropped. */
  let analysisSeq = 0;
  async function runAnalysis() {
    clearTimeout(debounceTimer);
    const example = moduleExample;
    const text = analysisInput();
    if (text === null) return;
    const seq = ++analysisSeq;
    let analysis;
    try {
      analysis = await analyzer.analyze(text);
      if (example) {
        const report = inFileTerms(analysis.report, example);
        analysis = { ...analysis, report, ...selectableItems(report) };
      }
    } catch (error) {
      if (seq !== analysisSeq) return;
      // A stopped analysis (over the time budget) or, against the analyzer's contract, a
      // panic: say so and keep the last view.
      $("summary").textContent = `analyzer failed: ${error.message}`;
      $("summary").classList.add("fatal");
      stats.failures.push({ message: error.message, chars: text.length });
      console.error(error);
      return;
    }
    if (seq !== analysisSeq) return;
    $("summary").classList.remove("fatal");
    const renderStart = performance.now();
    render(analysis);
    recordAnalysis(text, analysis, performance.now() - renderStart);
    const write = ++fragmentWrite;
    if (example) history.replaceState(null, "", `#example=${example.id}`);
    else writeFragment(text, () => write === fragmentWrite);
  }

  /** Puts one analysis on every view, keeping the selection if its item still exists. */
  function render({ report, functions, sites, analyzeMs }) {
    const selected = [...sites, ...functions].find((item) => item.key === selectedKey) ?? null;
    selectedKey = selected?.key ?? null;
    source.showAnalysis(functions, sites, diagnosticsToUnderline(report, sites));
    source.select(selected);
    rust.show(report.rust ?? "", sites, functions, selectedKey);
    $("rust-note").textContent = report.rust
      ? ""
      : (report.diagnostics ?? []).length
        ? "(nothing lowered: the module has errors)"
        : "(nothing lowered: no function is native)";
    table.show(functions, sites, selectedKey);
    renderSummary($("summary"), report, sites, analyzeMs);
    renderDiagnostics($("diagnostics"), report, {
      onCodeClick: (code) => rulesPanel.open(code),
      onJump: (diag) => {
        const pos = positionOf(source.view.state.doc, diag.line, diag.col);
        source.view.dispatch({ selection: { anchor: pos }, effects: EditorView.scrollIntoView(pos, { y: "center" }) });
        source.view.focus();
      },
    });
  }

  function recordAnalysis(text, { report, analyzeMs }, renderMs) {
    stats.analyses.push({ analyzeMs, renderMs, chars: text.length });
    stats.lastReport = report;
    stats.analyzedText = text;
    if (stats.firstAnalysisAt === null) {
      stats.firstAnalysisAt = performance.now();
      performance.mark("torchlower:first-analysis-rendered");
    }
  }

  // Examples menu
  const exampleMenu = $("example-select");
  for (const example of examples) {
    const option = document.createElement("option");
    option.value = example.id;
    option.textContent = example.title;
    exampleMenu.appendChild(option);
  }
  const moduleGroup = document.createElement("optgroup");
  moduleGroup.label = "nn.Module (rewritten by the Python host)";
  for (const example of moduleExamples) {
    const option = document.createElement("option");
    option.value = example.id;
    option.textContent = example.title;
    moduleGroup.appendChild(option);
  }
  if (moduleExamples.length) exampleMenu.appendChild(moduleGroup);
  exampleMenu.addEventListener("change", () => {
    const module = findModuleExample(exampleMenu.value);
    if (module) return loadModule(module);
    const example = findExample(exampleMenu.value);
    if (example) loadSource(example.source, example.id);
  });

  /** Shows the module panel for `example` (null hides it and makes the source editable). */
  function setModuleExample(example) {
    moduleExample = example;
    $("module-panel").hidden = !example;
    source.setReadOnly(Boolean(example));
    if (example) $("module-description").value = describe(example);
  }

  function loadSource(text, exampleId = "") {
    setModuleExample(null);
    exampleMenu.value = exampleId;
    source.setText(text);
    selectedKey = null;
    return runAnalysis();
  }

  function loadModule(example) {
    setModuleExample(example);
    exampleMenu.value = example.id;
    source.setText(example.source);
    selectedKey = null;
    return runAnalysis();
  }

  async function loadFromFragment(hash = location.hash) {
    const wanted = await readFragment(hash);
    if (wanted.code !== undefined) return loadSource(wanted.code);
    const module = findModuleExample(wanted.example);
    if (module) return loadModule(module);
    const example = findExample(wanted.example ?? DEFAULT_EXAMPLE) ?? examples[0];
    await loadSource(example.source, example.id);
    if (wanted.error) $("rust-note").textContent = wanted.error;
  }
  // A fragment set from outside (a pasted link, history): load the fragment the event names,
  // and drop any write of ours still encoding the previous source (it would replace it).
  window.addEventListener("hashchange", (event) => {
    fragmentWrite++;
    loadFromFragment(new URL(event.newURL).hash);
  });

  $("copy-link").addEventListener("click", async () => {
    const url = moduleExample ? location.href : await writeFragment(source.getText());
    try {
      await navigator.clipboard.writeText(url);
      $("copy-link").textContent = "Link copied";
    } catch {
      $("copy-link").textContent = "Link in address bar";
    }
    setTimeout(() => ($("copy-link").textContent = "Copy link"), 1500);
  });

  stats.sourceText = () => source.getText();
  stats.moduleExample = () => moduleExample?.id ?? null;
  stats.rustText = () => rust.view.state.doc.toString();
  stats.selectedSiteKey = () => selectedKey;
  stats.rules = analyzer.rules.entries;
  stats.setTimeBudget = analyzer.setTimeBudget;
  await loadFromFragment();
  stats.ready = true;
  document.body.dataset.ready = "true";
}

/**
 * Diagnostics drawn in the editor: the module's, and each function's except those that repeat
 * a site's rejection (the site's own mark already shows it).
 */
function diagnosticsToUnderline(report, sites) {
  const repeatsSite = (diag) => sites.some((s) => s.code === diag.code && s.line === diag.line && s.col === diag.col);
  const fnDiagnostics = (report.functions ?? []).flatMap((f) => f.diagnostics ?? []);
  return [...(report.diagnostics ?? []), ...fnDiagnostics.filter((diag) => !repeatsSite(diag))];
}

start();
