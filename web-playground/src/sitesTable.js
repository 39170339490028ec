// The table of sites, grouped by function: a header row per function (name, route, the
// generated symbol; a specialised copy's row under its function's, indented) and one row per site with position, target, outcome and the rule
// (claimed) or diagnostic code (rejected / not covered), and the fused kernel a claimed site
// was grouped into. Knock-on sites (they fail only because an input did) are greyed, their
// title naming the root cause. Clicking a row selects its site or
// function; clicking a code opens its explanation.
import { OUTCOME_LABEL } from "./sourceEditor.js";

export function createSitesTable(table, { onSelect, onCodeClick }) {
  const body = table.tBodies[0];
  let rows = new Map();

  function addRow(item, className, cells) {
    const row = body.insertRow();
    row.className = className;
    row.tabIndex = 0;
    for (const cell of cells) {
      const td = row.insertCell();
      if (cell.span) td.colSpan = cell.span;
      if (cell.node) td.appendChild(cell.node);
      else td.textContent = cell.text ?? "";
    }
    row.addEventListener("click", () => onSelect(item));
    row.addEventListener("keydown", (event) => {
      if (event.key === "Enter") onSelect(item);
    });
    rows.set(item.key, row);
    return row;
  }

  function codeLink(ref) {
    const link = document.createElement("button");
    link.type = "button";
    link.className = "code-link";
    link.textContent = ref;
    // The click also reaches the row, so the site is selected as its rule opens.
    link.addEventListener("click", () => onCodeClick(ref));
    return link;
  }

  return {
    show(functions, sites, selectedKey) {
      body.replaceChildren();
      rows = new Map();
      if (!functions.length) {
        const cell = body.insertRow().insertCell();
        cell.colSpan = 4;
        cell.className = "empty";
        cell.textContent = "no functions in this source";
        return;
      }
      for (const fn of functions) {
        const name = document.createElement("span");
        name.innerHTML = `<code></code> <span class="badge route"></span> <span class="symbol"></span>`;
        name.children[0].textContent = `def ${fn.name}`;
        name.children[1].textContent = fn.route;
        name.children[1].classList.add(fn.route);
        name.children[2].textContent = fn.symbol ? `→ ${fn.symbol}` : "";
        const row = addRow(fn, `fn-row ${fn.route}${fn.copyOf ? " copy" : ""}`, [{ text: `${fn.line}:${fn.col}` }, { node: name, span: 3 }]);
        row.dataset.function = fn.id;
        if (fn.copyOf) row.title = "a specialised copy: what runs for these argument types";
        const fnSites = sites.filter((s) => s.fn.key === fn.key);
        for (const site of fnSites) {
          const target = document.createElement("code");
          target.textContent = site.target;
          const outcome = document.createElement("span");
          outcome.className = `badge ${site.outcome}`;
          outcome.textContent = OUTCOME_LABEL[site.outcome] ?? site.outcome;
          const outcomeCell = document.createElement("span");
          outcomeCell.append(outcome);
          if (site.fused_into) {
            // the fusion pass grouped this site with others into one tl::fused kernel
            const fused = document.createElement("span");
            fused.className = "badge fused";
            fused.textContent = `fused: ${site.fused_into}`;
            fused.title = `computed inside tl::fused::${site.fused_into} together with the other sites of its group`;
            outcomeCell.append(" ", fused);
          }
          const ref = site.code ?? site.rule;
          const siteRow = addRow(site, `site-row ${site.outcome}${site.knockOn ? " knock-on" : ""}`, [
            { text: `${site.line}:${site.col}` },
            { node: target },
            { node: outcomeCell },
            ref ? { node: codeLink(ref) } : { text: "" },
          ]);
          siteRow.dataset.site = site.id;
          siteRow.dataset.outcome = site.outcome;
          if (site.message) siteRow.title = site.message + (site.hint ? `\nhint: ${site.hint}` : "");
          if (site.knockOn) {
            // greyed: it fails only because an input did; the root cause is the site named here
            siteRow.title = `knock-on of ${site.causeText || "an earlier failure"}\n${siteRow.title}`;
            siteRow.dataset.causes = site.causeIds.join(" ");
          }
        }
        if (!fnSites.length) {
          const cell = body.insertRow().insertCell();
          cell.colSpan = 4;
          cell.className = "empty";
          cell.textContent = "no torch sites";
        }
      }
      this.select(selectedKey);
    },
    select(selectedKey) {
      for (const [key, row] of rows) {
        const selected = key === selectedKey;
        row.classList.toggle("selected", selected);
        row.setAttribute("aria-selected", String(selected));
        if (selected) row.scrollIntoView({ block: "nearest" });
      }
    },
  };
}
