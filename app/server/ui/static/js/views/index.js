// The index: every file the token reaches, grouped by scope and area, with the capped notice.
import { api, call, showExpired, showingExpired } from "../api.js";
import { chips, errorBox, field, fileHash, h, replaceChildren, when } from "../dom.js";

function grouped(entries) {
  const scopes = new Map();
  for (const entry of entries) {
    if (!scopes.has(entry.scope)) scopes.set(entry.scope, new Map());
    const areas = scopes.get(entry.scope);
    if (!areas.has(entry.area)) areas.set(entry.area, []);
    areas.get(entry.area).push(entry);
  }
  return scopes;
}

// An expiring file says when it goes; an expired one (shown to owners who ask) says so.
export function expiryNote(expiresAt) {
  if (!expiresAt) return null;
  const gone = new Date(expiresAt).getTime() <= Date.now();
  return h("span", { class: gone ? "expiry expired" : "expiry" }, gone ? "Expired " : "Expires ", when(expiresAt));
}

export function fileRow(entry) {
  const text = [entry.scope, entry.area, entry.name, entry.description, ...(entry.aliases || [])];
  return h("li", { class: "file-row", "data-text": text.join("\n").toLowerCase() },
    h("div", { class: "file-main" },
      h("a", { href: fileHash(entry.scope, entry.area, entry.name), class: "file-name" }, entry.name),
      entry.description ? h("p", { class: "description" }, entry.description) : null),
    h("div", { class: "file-meta" },
      chips(entry.aliases, `Aliases of ${entry.name}`),
      h("span", { class: "updated" }, "Updated ", when(entry.last_updated)),
      expiryNote(entry.expires_at)));
}

function areaSection(scope, area, entries) {
  const id = `area-${scope}-${area}`.replace(/[^A-Za-z0-9_-]/g, "_");
  return h("section", { class: "area", "aria-labelledby": id },
    h("h3", { id }, area, h("span", { class: "count" }, ` ${entries.length} file${entries.length === 1 ? "" : "s"}`)),
    h("ul", { class: "files" }, entries.map(fileRow)));
}

function scopeSection(scope, areas) {
  const id = `scope-${scope}`.replace(/[^A-Za-z0-9_-]/g, "_");
  const names = [...areas.keys()].sort();
  return h("section", { class: "scope card", "aria-labelledby": id },
    h("h2", { id }, h("span", { class: "label" }, "Scope"), " ", scope),
    names.map((area) => areaSection(scope, area, areas.get(area))));
}

// A capped area is listed page by page through the listing endpoint.
async function listArea(row, target, button) {
  button.disabled = true;
  let cursor = row.cursor;
  const path = `/v1/files/${encodeURIComponent(row.scope)}/${encodeURIComponent(row.area)}`;
  try {
    const { data } = await call("GET", path, { query: { cursor } });
    target.append(...data.entries.map(fileRow));
    row.cursor = data.next_cursor;
    button.disabled = !data.next_cursor;
    if (!data.next_cursor) button.textContent = "All files listed";
  } catch (error) {
    target.append(h("li", {}, errorBox(error)));
    button.disabled = false;
  }
}

function cappedNotice(capped) {
  if (!capped.length) return null;
  const total = capped.reduce((sum, row) => sum + row.omitted, 0);
  return h("section", { class: "notice", "aria-labelledby": "capped-title" },
    h("h2", { id: "capped-title" }, `The index is capped: ${total} more file${total === 1 ? "" : "s"} not shown`),
    h("p", {}, "The index stays within its size budget. Search, or list an area to see every file."),
    h("ul", { class: "capped" }, capped.map((row) => {
      const list = h("ul", { class: "files" });
      const button = h("button", { type: "button" }, `List ${row.scope} / ${row.area}`);
      button.addEventListener("click", () => listArea(row, list, button));
      return h("li", {}, h("span", {}, `${row.scope} / ${row.area}: ${row.omitted} omitted `), button, list);
    })));
}

// Narrows what is already on the page; the server's search is the search.
function filterBox(root) {
  const input = h("input", { type: "search", name: "filter", autocomplete: "off" });
  const summary = h("p", { class: "hint", "aria-live": "polite" });
  input.addEventListener("input", () => {
    const needle = input.value.trim().toLowerCase();
    let shown = 0;
    for (const row of root.querySelectorAll(".file-row")) {
      row.hidden = Boolean(needle) && !row.dataset.text.includes(needle);
      if (!row.hidden) shown++;
    }
    for (const section of root.querySelectorAll("section.area, section.scope")) {
      section.hidden = !section.querySelector(".file-row:not([hidden])");
    }
    summary.textContent = needle ? `${shown} shown` : "";
  });
  return h("div", { class: "filter" }, field("Filter this page", input), summary);
}

// Owners may list expired files too; the server refuses anyone else, and says why.
function expiredToggle(view) {
  const box = h("input", { type: "checkbox", name: "show_expired" });
  box.checked = showingExpired();
  box.addEventListener("change", () => {
    showExpired(box.checked);
    showIndex(view);
  });
  return h("label", { class: "toggle-expired" }, box, " Show expired files (scope owners)");
}

export async function showIndex(view) {
  replaceChildren(view.main, h("p", { class: "loading" }, "Loading the index…"));
  let data;
  try {
    ({ data } = await api.index(undefined, showingExpired()));
  } catch (error) {
    if (view.live()) replaceChildren(view.main, h("h1", {}, "Memory index"), expiredToggle(view), errorBox(error));
    view.done();
    return;
  }
  if (!view.live()) return;
  const scopes = grouped(data.entries);
  const count = data.entries.length;
  const listing = h("div", {},
    count ? [...scopes].map(([scope, areas]) => scopeSection(scope, areas))
      : h("p", { class: "empty card" }, "No memories yet. Create the first file, or let an agent write one."));
  replaceChildren(view.main,
    h("div", { class: "page-head" },
      h("h1", {}, "Memory index"),
      h("p", { class: "lead" }, `${count} file${count === 1 ? "" : "s"} in ${scopes.size} scope${scopes.size === 1 ? "" : "s"}`),
      h("a", { href: "#/new", class: "button primary" }, "New file"),
      expiredToggle(view)),
    cappedNotice(data.capped),
    count ? filterBox(listing) : null,
    listing);
  view.done();
}
