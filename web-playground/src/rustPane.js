// The emitted Rust: a read-only CodeMirror view of the report's `rust` (the generated
// lib.rs), with the selected site's code highlighted and every site's code faintly marked.
// A pointer click inside a site's code selects that site (the reverse link).
import { EditorView, basicSetup } from "codemirror";
import { rust } from "@codemirror/lang-rust";
import { EditorState, StateEffect, StateField } from "@codemirror/state";
import { Decoration } from "@codemirror/view";

const setRanges = StateEffect.define();

/** Site ranges in the Rust text and the selected one. */
const rangesField = StateField.define({
  create: () => ({ sites: [], selected: null }),
  update(value, tr) {
    for (const effect of tr.effects) if (effect.is(setRanges)) return effect.value;
    return value;
  },
  provide: (field) =>
    EditorView.decorations.from(field, ({ sites, selected }) => {
      const marks = [];
      for (const site of sites) {
        const selectedHere = site.key === selected;
        marks.push(
          Decoration.mark({
            class: selectedHere ? "cm-rust-site cm-rust-selected" : "cm-rust-site",
            attributes: { "data-site": site.id },
          }).range(site.rustFrom, site.rustTo),
        );
      }
      return Decoration.set(marks, true);
    }),
});

/** The innermost site whose Rust range contains `pos`. */
function siteAtRust(state, pos) {
  let best = null;
  for (const site of state.field(rangesField).sites) {
    if (pos < site.rustFrom || pos > site.rustTo) continue;
    if (!best || site.rustTo - site.rustFrom < best.rustTo - best.rustFrom) best = site;
  }
  return best;
}

/** Creates the Rust pane; `onSiteClick(site)` fires when a click lands in a site's code. */
export function createRustPane(parent, { onSiteClick }) {
  const view = new EditorView({
    parent,
    doc: "",
    extensions: [
      basicSetup,
      rust(),
      EditorState.readOnly.of(true),
      rangesField,
      EditorView.updateListener.of((update) => {
        const pointer = update.transactions.some((tr) => tr.isUserEvent("select.pointer"));
        if (!pointer || !update.selectionSet) return;
        const site = siteAtRust(update.state, update.state.selection.main.head);
        if (site) onSiteClick(site);
      }),
    ],
  });
  let current = { text: "", sites: [], selected: null };
  return {
    view,
    /** Shows the emitted Rust; `sites` are those whose rust range lies inside it. */
    show(text, sites, selected) {
      const inText = sites.filter((s) => s.rustFrom !== null && s.rustTo > s.rustFrom && s.rustTo <= text.length);
      const changes = text === current.text ? [] : { from: 0, to: view.state.doc.length, insert: text };
      current = { text, sites: inText, selected };
      view.dispatch({ changes, effects: setRanges.of({ sites: inText, selected }) });
    },
    /** Highlights the selected site's code and, if asked, scrolls it into view. */
    select(site, { scroll = true } = {}) {
      current.selected = site?.key ?? null;
      const effects = [setRanges.of({ sites: current.sites, selected: current.selected })];
      const target = current.sites.find((s) => s.key === current.selected);
      if (target && scroll) effects.push(EditorView.scrollIntoView(target.rustFrom, { y: "center" }));
      view.dispatch({ effects });
    },
  };
}
