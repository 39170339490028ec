// The bundled examples: every .py file in ../examples, embedded at build time. The file name
// (without its number prefix) is the example's id; its first comment line is its title.
const files = import.meta.glob("../examples/*.py", { query: "?raw", import: "default", eager: true });

export const examples = Object.entries(files)
  .sort(([a], [b]) => a.localeCompare(b))
  .map(([path, source]) => {
    const base = path.split("/").pop().replace(/\.py$/, "");
    const id = base.replace(/^\d+_/, "");
    // "# Accepted (seed: Phase A certified chain): ..." -> "Accepted (seed: Phase A certified chain)"
    const firstLine = source.split("\n", 1)[0].replace(/^#\s*/, "");
    const title = (firstLine.match(/^[^(:]*(\([^)]*\))?/)?.[0] ?? id).trim();
    return { id, title, source };
  });

export function findExample(id) {
  return examples.find((e) => e.id === id) ?? null;
}
