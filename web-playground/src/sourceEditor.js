// The Python source editor: CodeMirror 6 with Python highlighting, plus the analyzer's sites
// drawn over the text (a mark per span, a gutter marker per line, a hover with the details)
// and module/function diagnostics underlined.
import { python } from "@codemirror/lang-python";
import { indentUnit } from "@codemirror/language";
import { Compartment, EditorState, StateEffect, StateField, RangeSetBuilder } from "@codemirror/state";
import { Decoration, EditorView, GutterMarker, gutter, hoverTooltip } from "@codemirror/view";
import { editingSetup } from "./editorSetup.js";

const OUTCOMES = ["claimed", "not_covered", "rejected"];
export const OUTCOME_LABEL = { claimed: "claimed", rejected: "rejected", not_covered: "not covered" };

/** New analysis result: functions, sites and the diagnostics to underline. */
const setAnalysis = StateEffect.define();
/** The site or function (by key) the user selected, or null. */
const setSelected = StateEffect.define();

/**
 * Document position of a 1-based line/column, clamped into the document. The analyzer counts
 * columns in Unicode scalar values, CodeMirror positions in UTF-16 units: they differ only
 * after a character outside the BMP on the same line.
 */
export function positionOf(doc, line, col) {
  if (line < 1) return 0;
  if (line > doc.lines) return doc.length;
  const l = doc.line(line);
  let offset = 0;
  for (let scalars = 1; scalars < col && offset < l.text.length; scalars++) {
    offset += l.text.codePointAt(offset) > 0xffff ? 2 : 1;
  }
  return l.from + offset;
}

/** Sorted [from, to) span of anything with line/col/end_line/end_col. */
function spanOf(doc, item) {
  const from = positionOf(doc, item.line, item.col);
  const to = positionOf(doc, item.end_line ?? item.line, item.end_col ?? item.col);
  if (to > from) return { from, to };
  // An empty span (e.g. "unexpected end of file") still gets one visible character: the one
  // at the position, or else the last non-blank one before it.
  const next = doc.sliceString(from, from + 1);
  if (next && !/\s/.test(next)) return { from, to: from + 1 };
  let end = from;
  while (end > 0 && /\s/.test(doc.sliceString(end - 1, end))) end--;
  return end > 0 ? { from: end - 1, to: end } : { from, to: Math.min(from + 1, doc.length) };
}

class SiteGutterMarker extends GutterMarker {
  constructor(outcomes, title) {
    super();
    this.outcomes = outcomes;
    this.title = title;
  }
  eq(other) {
    return other.title === this.title && other.outcomes.join() === this.outcomes.join();
  }
  toDOM() {
    const el = document.createElement("span");
    el.className = "site-gutter-marker";
    el.title = this.title;
    for (const outcome of this.outcomes) {
      const dot = document.createElement("span");
      dot.className = `site-dot ${outcome}`;
      dot.dataset.outcome = outcome;
      el.appendChild(dot);
    }
    return el;
  }
}

/** Everything the overlay knows: sites with document spans, diagnostics, selection. */
const analysisField = StateField.define({
  create: () => ({ functions: [], sites: [], diagnostics: [], selected: null }),
  update(value, tr) {
    let next = value;
    for (const effect of tr.effects) {
      if (effect.is(setAnalysis)) {
        const doc = tr.state.doc;
        next = {
          ...next,
          functions: effect.value.functions.map((fn) => ({ fn, line: Math.min(Math.max(fn.line, 1), doc.lines) })),
          sites: effect.value.sites.map((site) => ({ site, ...spanOf(doc, site) })),
          diagnostics: effect.value.diagnostics.map((diag) => ({ diag, ...spanOf(doc, diag) })),
        };
      } else if (effect.is(setSelected)) {
        next = { ...next, selected: effect.value };
      }
    }
    if (tr.docChanged && next === value) {
      // Keep the marks attached to the text until the next analysis replaces them.
      const map = (entry) => {
        const from = tr.changes.mapPos(entry.from, 1);
        const to = Math.max(tr.changes.mapPos(entry.to, -1), from);
        return { ...entry, from, to };
      };
      const functions = next.functions.filter(({ line }) => line <= tr.state.doc.lines);
      next = { ...next, functions, sites: next.sites.map(map), diagnostics: next.diagnostics.map(map) };
    }
    return next;
  },
  provide: (field) => [
    EditorView.decorations.compute([field], (state) => buildDecorations(state.field(field), state.doc)),
    gutter({
      class: "cm-site-gutter",
      markers: (view) => buildGutterMarkers(view.state.field(field), view.state.doc),
    }),
  ],
});

function buildDecorations({ functions, sites, diagnostics, selected }, doc) {
  const ranges = [];
  for (const { fn, line } of functions) {
    if (fn.key === selected) ranges.push(Decoration.line({ class: "cm-fn-selected" }).range(doc.line(line).from));
  }
  for (const { site, from, to } of sites) {
    if (to <= from) continue;
    const classes = [`cm-site`, `cm-site-${site.outcome}`];
    if (site.knockOn) classes.push("cm-site-knock-on");
    if (site.key === selected) classes.push("cm-site-selected");
    ranges.push(
      Decoration.mark({
        class: classes.join(" "),
        attributes: { "data-site": site.id, "data-outcome": site.outcome },
      }).range(from, to),
    );
  }
  for (const { diag, from, to } of diagnostics) {
    if (to <= from) continue;
    ranges.push(
      Decoration.mark({ class: `cm-diagnostic cm-diagnostic-${diag.severity ?? "error"}` }).range(from, to),
    );
  }
  return Decoration.set(ranges, true);
}

function buildGutterMarkers({ sites }, doc) {
  const byLine = new Map();
  for (const { site, from } of sites) {
    const line = doc.lineAt(from).from;
    if (!byLine.has(line)) byLine.set(line, []);
    byLine.get(line).push(site);
  }
  const builder = new RangeSetBuilder();
  for (const line of [...byLine.keys()].sort((a, b) => a - b)) {
    const lineSites = byLine.get(line);
    const outcomes = OUTCOMES.filter((o) => lineSites.some((s) => s.outcome === o));
    const title = lineSites.map((s) => `${s.target}: ${OUTCOME_LABEL[s.outcome] ?? s.outcome}`).join("\n");
    builder.add(line, line, new SiteGutterMarker(outcomes, title));
  }
  return builder.finish();
}

/** The innermost (shortest) site whose span contains `pos`, or null. */
export function siteAt(state, pos) {
  let best = null;
  for (const entry of state.field(analysisField).sites) {
    if (pos < entry.from || pos > entry.to) continue;
    if (!best || entry.to - entry.from < best.to - best.from) best = entry;
  }
  return best?.site ?? null;
}

/** Hover: every site and diagnostic under the pointer, innermost first. */
function siteHover(onCodeClick) {
  return hoverTooltip((view, pos) => {
    const { sites, diagnostics } = view.state.field(analysisField);
    const hits = sites.filter((e) => pos >= e.from && pos <= e.to).sort((a, b) => a.to - a.from - (b.to - b.from));
    const diags = diagnostics.filter((e) => pos >= e.from && pos <= e.to);
    if (!hits.length && !diags.length) return null;
    const from = Math.min(...[...hits, ...diags].map((e) => e.from));
    const to = Math.max(...[...hits, ...diags].map((e) => e.to));
    return {
      pos: from,
      end: to,
      above: true,
      create: () => {
        const dom = document.createElement("div");
        dom.className = "site-tooltip";
        for (const { site } of hits) dom.appendChild(describe(site, site.target, site.outcome, onCodeClick));
        for (const { diag } of diags) dom.appendChild(describe(diag, diag.code, diag.severity ?? "error", onCodeClick));
        return { dom };
      },
    };
  });
}

function describe(item, title, outcome, onCodeClick) {
  const block = document.createElement("div");
  block.className = `tooltip-entry ${outcome}`;
  const head = document.createElement("div");
  head.className = "tooltip-head";
  const name = document.createElement("code");
  name.textContent = title;
  const badge = document.createElement("span");
  badge.className = `badge ${outcome}`;
  badge.textContent = OUTCOME_LABEL[outcome] ?? outcome;
  head.append(name, " ", badge);
  block.appendChild(head);
  const ruleOrCode = item.code ?? item.rule;
  if (ruleOrCode) {
    const link = document.createElement("button");
    link.type = "button";
    link.className = "code-link";
    link.textContent = ruleOrCode;
    link.addEventListener("click", () => onCodeClick(ruleOrCode));
    const line = document.createElement("div");
    line.append(item.code ? "code " : "rule ", link);
    if (item.code && item.rule) line.append(` (rule ${item.rule})`);
    block.appendChild(line);
  }
  if (item.result_type) appendText(block, "tooltip-type", `→ ${item.result_type}`);
  if (item.fused_into) appendText(block, "tooltip-fused", `fused into tl::fused::${item.fused_into}`);
  if (item.message) appendText(block, "tooltip-message", item.message);
  if (item.hint) appendText(block, "tooltip-hint", `hint: ${item.hint}`);
  return block;
}

function appendText(parent, className, text) {
  const el = document.createElement("div");
  el.className = className;
  el.textContent = text;
  parent.appendChild(el);
}

/**
 * Creates the source editor. `onChange()` fires on every document change; `onSiteClick(site)`
 * when a pointer selection lands in a site; `onCodeClick(code)` from a tooltip's code link.
 */
export function createSourceEditor(parent, { doc, onChange, onSiteClick, onCodeClick }) {
  const readOnly = new Compartment();
  const view = new EditorView({
    parent,
    doc,
    extensions: [
      editingSetup,
      python(),
      indentUnit.of("    "),
      readOnly.of(EditorState.readOnly.of(false)),
      analysisField,
      siteHover(onCodeClick),
      EditorView.updateListener.of((update) => {
        if (update.docChanged) onChange();
        const pointer = update.transactions.some((tr) => tr.isUserEvent("select.pointer"));
        if (pointer && update.selectionSet) {
          const site = siteAt(update.state, update.state.selection.main.head);
          if (site) onSiteClick(site);
        }
      }),
    ],
  });
  return {
    view,
    getText: () => view.state.doc.toString(),
    setText(text) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    /** A module example's class is shown read-only: its analysis comes from the description. */
    setReadOnly(flag) {
      view.dispatch({ effects: readOnly.reconfigure(EditorState.readOnly.of(flag)) });
    },
    showAnalysis(functions, sites, diagnostics) {
      view.dispatch({ effects: setAnalysis.of({ functions, sites, diagnostics }) });
    },
    /** Highlights the selected site or function (or nothing) and, if asked, scrolls to it. */
    select(item, { scroll = false } = {}) {
      const effects = [setSelected.of(item?.key ?? null)];
      if (item && scroll) {
        const from = positionOf(view.state.doc, item.line, item.col);
        effects.push(EditorView.scrollIntoView(from, { y: "center" }));
      }
      view.dispatch({ effects });
    },
  };
}
