// Search every file the token reaches; matched terms in each snippet are highlighted.
import { api } from "../api.js";
import { chips, errorBox, field, fileHash, h, highlighted, replaceChildren } from "../dom.js";

function hitRow(hit) {
  return h("li", { class: "file-row hit" },
    h("div", { class: "file-main" },
      h("a", { href: fileHash(hit.scope, hit.area, hit.name), class: "file-name" }, hit.name),
      h("span", { class: "where" }, ` ${hit.scope} / ${hit.area}`),
      hit.description ? h("p", { class: "description" }, hit.description) : null,
      h("p", { class: "snippet" }, highlighted(hit.snippet))),
    h("div", { class: "file-meta" }, chips(hit.aliases, `Aliases of ${hit.name}`)));
}

async function run(view, query, list, more, summary) {
  try {
    const { data } = await api.search(query);
    if (!view.live()) return;
    list.append(...data.hits.map(hitRow));
    const shown = list.children.length;
    summary.textContent = shown ? `${shown} result${shown === 1 ? "" : "s"} for “${query.q}”` : `Nothing matches “${query.q}”.`;
    more.hidden = !data.next_cursor;
    query.cursor = data.next_cursor;
  } catch (error) {
    list.append(h("li", {}, errorBox(error)));
  }
}

export async function showSearch(view, params) {
  const q = params.get("q") || "";
  const input = h("input", { type: "search", name: "q", value: q, required: true, maxlength: "256" });
  const form = h("form", { role: "search", class: "card search-form", "aria-label": "Memory search" },
    field("Search memories", input, "Every word must match: names, aliases, descriptions, content."),
    h("button", { type: "submit", class: "primary" }, "Search"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    view.go(`#/search?${new URLSearchParams({ q: input.value })}`);
  });
  const list = h("ul", { class: "files results" });
  const summary = h("p", { class: "lead", "aria-live": "polite" });
  const more = h("button", { type: "button", hidden: true }, "More results");
  const query = { q, limit: 20 };
  more.addEventListener("click", () => run(view, query, list, more, summary));
  replaceChildren(view.main, h("h1", {}, "Search"), form, summary, list, more);
  if (q.trim()) await run(view, query, list, more, summary);
  if (!view.live()) return;
  if (q) view.done();
  else input.focus();
}
