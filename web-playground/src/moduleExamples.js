// Module examples: an nn.Module class as `torchlower.compile(instance)` sees it. The rewriting
// of `forward` needs a live instance, which only the Python host has, so each example was made
// by `torchlower check FILE.py:ClassName --format json` (scripts/playground-module-examples.py):
// the class's file, a description of the instance (forward's example types and each tensor's
// type) and the generated functions with the source statement each of their lines came from.
// Here the description is editable: its types are written into the generated entry, the wasm
// analyzes the file with the generated functions appended, and every span is moved back onto
// the statement of the class it was rewritten from, as the CLI does.
const files = import.meta.glob("../examples/modules/*.json", { import: "default", eager: true });

/** The entry every rewriting generates (host-py/python/torchlower/_modules.py, ENTRY). */
const ENTRY = "_tl_module_forward";

export const moduleExamples = Object.entries(files)
  .sort(([a], [b]) => a.localeCompare(b))
  .map(([path, example]) => ({ ...example, id: `module_${path.split("/").pop().replace(/\.json$/, "")}` }));

export function findModuleExample(id) {
  return moduleExamples.find((e) => e.id === id) ?? null;
}

/** The description the panel shows: forward's types and the instance's tensors' types. */
export function describe(example) {
  const { forward, tensors } = example.module;
  return JSON.stringify({ class: example.class, init: example.init, forward, tensors }, null, 2);
}

/**
 * The entry's parameter types from an edited description, in the entry's parameter order
 * (forward's, then the tensors'); throws an Error that says what is wrong.
 */
export function entryTypes(example, text) {
  let description;
  try {
    description = JSON.parse(text);
  } catch (error) {
    throw new Error(`the description is not JSON: ${error.message}`);
  }
  const types = [];
  const take = (section, names, argumentOf) => {
    const given = description?.[section];
    if (typeof given !== "object" || given === null) throw new Error(`"${section}" must be an object`);
    for (const name of Object.keys(given)) {
      if (!names.includes(name)) throw new Error(`"${section}" has no entry "${name}" in ${example.class}`);
    }
    for (const name of names) {
      const type = given[name];
      if (typeof type !== "string" || !/^(Tensor\w+|int|float|bool)$/.test(type)) {
        throw new Error(`"${section}.${name}" must be a marker name, "int", "float" or "bool"`);
      }
      types.push([argumentOf(name), type]);
    }
  };
  const argumentOfPath = Object.fromEntries(Object.entries(example.module.arguments).map(([arg, path]) => [path, arg]));
  take("forward", Object.keys(example.module.forward), (name) => name);
  take("tensors", Object.keys(example.module.tensors), (path) => argumentOfPath[path]);
  return types;
}

/** The text the analyzer sees: the class's file, then the generated functions with the entry
 * typed as `types` says and the markers it names imported at the end. */
export function analysisText(example, types) {
  const lines = example.module.generated.replace(/\n+$/, "").split("\n");
  const markers = [...new Set(types.map(([, type]) => type).filter((t) => t.startsWith("Tensor")))].sort();
  const body = lines
    .filter((line) => !line.startsWith("from torchlower.types import "))
    .map((line) =>
      line.startsWith(`def ${ENTRY}(`) ? `def ${ENTRY}(${types.map(([n, t]) => `${n}: ${t}`).join(", ")}):` : line,
    );
  const imports = markers.length ? [`from torchlower.types import ${markers.join(", ")}`] : [];
  const source = example.source.endsWith("\n") ? example.source : `${example.source}\n`;
  return `${source}\n\n${[...body, ...imports].join("\n")}\n`;
}

/**
 * The report of `analysisText` in the class file's terms: only the generated functions, each
 * named after the method it came from, every span on the source statement it was rewritten
 * from (the analyzed span kept as `generated_span`); module diagnostics of the file itself.
 */
export function inFileTerms(report, example) {
  const firstGenerated = example.source.replace(/\n$/, "").split("\n").length + 1;
  const classLine = example.module.class_line ?? 1;
  const functions = [];
  for (const fn of report.functions ?? []) {
    const origin = example.module.origins[fn.name];
    if (!origin || fn.line < firstGenerated) continue;
    const place = (item) => {
      const span = origin.statements[String((item.line ?? fn.line) - fn.line + 1)] ??
        origin.statements["1"] ?? [classLine, 1, classLine, 1];
      const [line, col, endLine, endCol] = span;
      return {
        ...item,
        generated_span: [item.line, item.col, item.end_line, item.end_col],
        line, col, end_line: endLine, end_col: endCol,
      };
    };
    // a submodule's function is unannotated: what runs is its copy for the call's types
    const copies = fn.specialisations?.length ? fn.specialisations : [fn];
    for (const copy of copies) {
      const types = (copy.params ?? []).map((p) => p.type).join(", ");
      const own = { ...copy };
      delete own.specialisations;
      functions.push({
        ...place(own),
        name: origin.label + (copies.length > 1 ? ` (${types})` : ""),
        generated_name: copy.name,
        sites: (copy.sites ?? []).map(place),
        diagnostics: (copy.diagnostics ?? []).map(place),
      });
    }
  }
  const diagnostics = (report.diagnostics ?? []).filter((d) => (d.line ?? 1) < firstGenerated);
  return { ...report, functions, diagnostics };
}
