// The summary bar (functions native / fallback, sites per outcome, analyze time) and the
// diagnostics list (module diagnostics such as syntax errors first, then why each function
// falls back).
export function renderSummary(el, report, sites, analyzeMs) {
  const functions = report.functions ?? [];
  const native = functions.filter((f) => f.route === "native").length;
  const counts = { claimed: 0, rejected: 0, not_covered: 0 };
  for (const site of sites) counts[site.outcome] = (counts[site.outcome] ?? 0) + 1;
  const moduleErrors = (report.diagnostics ?? []).length;
  el.replaceChildren();
  const parts = [
    ["fn-native", "native", native, "functions lowered to Rust"],
    ["fn-fallback", "fallback", functions.length - native, "functions kept on the Python fallback"],
    ["claimed", "claimed", counts.claimed, "sites claimed"],
    ["rejected", "rejected", counts.rejected, "sites rejected"],
    ["not_covered", "not covered", counts.not_covered, "sites not covered"],
  ];
  const fnGroup = group("functions");
  const siteGroup = group("sites");
  for (const [key, label, count, title] of parts) {
    const item = document.createElement("span");
    item.className = `count ${key}`;
    item.dataset.count = key;
    item.title = title;
    item.innerHTML = `<b></b> ${label}`;
    item.firstChild.textContent = String(count);
    (key.startsWith("fn-") ? fnGroup : siteGroup).appendChild(item);
  }
  el.append(fnGroup, siteGroup);
  if (moduleErrors) {
    const err = document.createElement("span");
    err.className = "count module-errors";
    err.dataset.count = "module-diagnostics";
    err.textContent = `${moduleErrors} module diagnostic${moduleErrors > 1 ? "s" : ""}`;
    el.appendChild(err);
  }
  const time = document.createElement("span");
  time.className = "timing";
  time.dataset.analyzeMs = analyzeMs.toFixed(3);
  time.textContent = `analyzed in ${analyzeMs.toFixed(1)} ms`;
  el.appendChild(time);
}

function group(name) {
  const el = document.createElement("span");
  el.className = `group ${name}`;
  el.dataset.group = name;
  const label = document.createElement("span");
  label.className = "group-label";
  label.textContent = name;
  el.appendChild(label);
  return el;
}

/** Lists module diagnostics, then per-function ones; `onJump(item)` moves the cursor there. */
export function renderDiagnostics(el, report, { onCodeClick, onJump }) {
  el.replaceChildren();
  const entries = [
    ...(report.diagnostics ?? []).map((diag) => ({ diag, scope: "module" })),
    ...(report.functions ?? []).flatMap((fn) => (fn.diagnostics ?? []).map((diag) => ({ diag, scope: fn.name }))),
  ];
  el.hidden = entries.length === 0;
  for (const { diag, scope } of entries) {
    const row = document.createElement("div");
    row.className = `diagnostic ${diag.severity ?? "error"} ${scope === "module" ? "module" : "function"}`;
    row.dataset.scope = scope === "module" ? "module" : "function";
    const where = document.createElement("button");
    where.type = "button";
    where.className = "where";
    where.textContent = `${diag.line}:${diag.col}`;
    where.addEventListener("click", () => onJump(diag));
    const code = document.createElement("button");
    code.type = "button";
    code.className = "code-link";
    code.textContent = diag.code;
    code.addEventListener("click", () => onCodeClick(diag.code));
    const text = document.createElement("span");
    text.className = "message";
    text.textContent = `${scope === "module" ? "" : `${scope}: `}${diag.message}`;
    row.append(where, " ", code, " ", text);
    if (diag.hint) {
      const hint = document.createElement("div");
      hint.className = "hint";
      hint.textContent = `hint: ${diag.hint}`;
      row.appendChild(hint);
    }
    el.appendChild(row);
  }
}
