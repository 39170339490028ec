// The table of sites: one row per site with position, function, target, outcome and the rule
// (claimed) or diagnostic code (rejected / not covered). Clicking a row selects the site;
// clicking the code opens its explanation.
import { OUTCOME_LABEL } from "./sourceEditor.js";

export function createSitesTable(table, { onSiteClick, onCodeClick }) {
  const body = table.tBodies[0];
  let rows = new Map();
  return {
    show(sites, selectedKey) {
      body.replaceChildren();
      rows = new Map();
      if (!sites.length) {
        const row = body.insertRow();
        const cell = row.insertCell();
        cell.colSpan = 5;
        cell.className = "empty";
        cell.textContent = "no torch sites in this source";
        return;
      }
      for (const site of sites) {
        const row = body.insertRow();
        row.className = `site-row ${site.outcome}`;
        row.dataset.site = site.id;
        row.dataset.outcome = site.outcome;
        row.tabIndex = 0;
        row.insertCell().textContent = `${site.line}:${site.col}`;
        row.insertCell().textContent = site.fn.name;
        const target = row.insertCell();
        target.innerHTML = "";
        target.appendChild(codeText(site.target));
        const outcome = row.insertCell();
        outcome.innerHTML = `<span class="badge ${site.outcome}"></span>`;
        outcome.firstChild.textContent = OUTCOME_LABEL[site.outcome] ?? site.outcome;
        const ruleCell = row.insertCell();
        const ref = site.code ?? site.rule;
        if (ref) {
          const link = document.createElement("button");
          link.type = "button";
          link.className = "code-link";
          link.textContent = ref;
          link.addEventListener("click", (event) => {
            event.stopPropagation();
            onCodeClick(ref);
          });
          ruleCell.appendChild(link);
        }
        if (site.message) row.title = site.message + (site.hint ? `\nhint: ${site.hint}` : "");
        row.addEventListener("click", () => onSiteClick(site));
        row.addEventListener("keydown", (event) => {
          if (event.key === "Enter") onSiteClick(site);
        });
        rows.set(site.key, row);
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

function codeText(text) {
  const el = document.createElement("code");
  el.textContent = text;
  return el;
}
