// The CodeMirror extensions both panes share. Like codemirror's basicSetup, except that
// completion opens only on request (Ctrl-Space): popping up while typing would let Enter pick
// a keyword instead of ending the line.
import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap } from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import {
  bracketMatching,
  defaultHighlightStyle,
  foldGutter,
  foldKeymap,
  indentOnInput,
  syntaxHighlighting,
} from "@codemirror/language";
import { highlightSelectionMatches, searchKeymap } from "@codemirror/search";
import { EditorState } from "@codemirror/state";
import {
  drawSelection,
  highlightActiveLine,
  highlightActiveLineGutter,
  highlightSpecialChars,
  keymap,
  lineNumbers,
} from "@codemirror/view";

/** Viewing and navigation: both panes. */
const viewing = [
  lineNumbers(),
  highlightActiveLineGutter(),
  highlightSpecialChars(),
  foldGutter(),
  drawSelection(),
  syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
  bracketMatching(),
  highlightActiveLine(),
  highlightSelectionMatches(),
];

/** The source editor. */
export const editingSetup = [
  ...viewing,
  history(),
  indentOnInput(),
  closeBrackets(),
  autocompletion({ activateOnTyping: false }),
  EditorState.allowMultipleSelections.of(true),
  keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...searchKeymap, ...historyKeymap, ...foldKeymap, ...completionKeymap]),
];

/** The read-only Rust pane. */
export const readOnlySetup = [
  ...viewing,
  EditorState.readOnly.of(true),
  keymap.of([...defaultKeymap, ...searchKeymap, ...foldKeymap]),
];
