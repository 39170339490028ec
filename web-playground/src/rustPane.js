// The emitted Rust: a read-only CodeMirror view of the report's `rust` (the generated
// lib.rs). Every claimed site's code is faintly marked and the selected site's (or
// function's) code highlighted. A pointer click inside a site's code selects that site, and
// elsewhere inside a generated function selects the function: the reverse links.
import { rust } from "@codemirror/lang-rust";
import { StateEffect, StateField } from "@codemirror/state";
import { Decoration, EditorView } from "@codemirror/view";
import { readOnlySetup } from "./editorSetup.js";

const setRanges = StateEffect.define();

/** Items (sites, functions) with a Rust range, and the selected key. */
const rangesField = StateField.define({
  create: () => ({ sites: [], functions: [], selected: null }),
  update(value, tr) {
    for (const effect of tr.effects) if (effect.is(setRanges)) return effect.value;
    return value;
  },
  provide: (field) => EditorView.decorations.from(field, buildDecorations),
});

function buildDecorations({ sites, functions, selected }) {
  const marks = [];
  const fn = functions.find((f) => f.key === selected);
  if (fn) marks.push(Decoration.mark({ class: "cm-rust-fn-selected" }).range(fn.rustFrom, fn.rustTo));
  for (const site of sites) {
    const classes = site.key === selected ? "cm-rust-site cm-rust-selected" : "cm-rust-site";
    marks.push(Decoration.mark({ class: classes, attributes: { "data-site": site.id } }).range(site.rustFrom, site.rustTo));
  }
  return Decoration.set(marks, true);
}

/** The innermost item of `items` whose Rust range contains `pos`, or null. */
function innermostAt(items, pos) {
  let best = null;
  for (const item of items) {
    if (pos < item.rustFrom || pos > item.rustTo) continue;
    if (!best || item.rustTo - item.rustFrom < best.rustTo - best.rustFrom) best = item;
  }
  return best;
}

/** Items whose range is a non-empty slice of a text of `length`. */
const withRange = (items, length) => items.filter((i) => i.rustFrom !== null && i.rustTo > i.rustFrom && i.rustTo <= length);

/** Creates the Rust pane; `onSelect(item)` fires when a click lands in a site's or function's code. */
export function createRustPane(parent, { onSelect }) {
  const view = new EditorView({
    parent,
    doc: "",
    extensions: [
      readOnlySetup,
      rust(),
      EditorView.lineWrapping, // nested op calls make long lines: keep the whole site visible
      rangesField,
      EditorView.updateListener.of((update) => {
        const pointer = update.transactions.some((tr) => tr.isUserEvent("select.pointer"));
        if (!pointer || !update.selectionSet) return;
        const { sites, functions } = update.state.field(rangesField);
        const pos = update.state.selection.main.head;
        const item = innermostAt(sites, pos) ?? innermostAt(functions, pos);
        if (item) onSelect(item);
      }),
    ],
  });
  return {
    view,
    /** Shows the emitted Rust with the ranges of `sites` and `functions` inside it. */
    show(text, sites, functions, selected) {
      const changes = text === view.state.doc.toString() ? [] : { from: 0, to: view.state.doc.length, insert: text };
      const ranges = { sites: withRange(sites, text.length), functions: withRange(functions, text.length), selected };
      view.dispatch({ changes, effects: setRanges.of(ranges) });
    },
    /** Highlights the selected item's code (key or null) and, if asked, scrolls it into view. */
    select(selected, { scroll = true } = {}) {
      const { sites, functions } = view.state.field(rangesField);
      const effects = [setRanges.of({ sites, functions, selected })];
      const target = [...sites, ...functions].find((i) => i.key === selected);
      if (target && scroll) effects.push(EditorView.scrollIntoView(target.rustFrom, { y: "center" }));
      view.dispatch({ effects });
    },
  };
}
