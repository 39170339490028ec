// The rules panel: the registry's entry for a rule id or diagnostic code (summary,
// explanation, example, hint), as returned by the analyzer's `rules()`.
const KIND_LABEL = { rule: "claim rule", code: "diagnostic code", extension: "extension" };

export function createRulesPanel(panel, body, closeButton, registry) {
  const close = () => {
    panel.hidden = true;
  };
  closeButton.addEventListener("click", close);
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape") close();
  });
  return {
    open(name) {
      const entry = registry.byName.get(String(name));
      body.replaceChildren();
      panel.dataset.rule = name;
      const title = document.createElement("h2");
      title.textContent = name;
      body.appendChild(title);
      if (!entry) {
        addBlock(body, "p", "missing", `The analyzer's registry has no entry named ${name}.`);
      } else {
        const facts = [KIND_LABEL[entry.kind] ?? entry.kind, entry.lane ?? entry.area];
        if (entry.extension) facts.push("beyond the seed surface");
        addBlock(body, "p", "facts", facts.filter(Boolean).join(" · "));
        for (const field of ["summary", "explanation"]) {
          if (entry[field]) addBlock(body, "p", field, entry[field]);
        }
        if (entry.example) {
          addBlock(body, "h3", "", "Example");
          addBlock(body, "pre", "example", entry.example);
        }
        if (entry.hint) addBlock(body, "p", "hint", `Hint: ${entry.hint}`);
      }
      panel.hidden = false;
    },
    close,
  };
}

function addBlock(parent, tag, className, text) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  el.textContent = text;
  parent.appendChild(el);
}
