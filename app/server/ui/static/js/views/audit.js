// A file's audit trail: who read or changed it, when, through which surface, with what outcome.
import { api } from "../api.js";
import { errorBox, h, replaceChildren, when } from "../dom.js";
import { breadcrumb } from "./file.js";

const PAGES_PER_CLICK = 5;

// An event concerns the file when it names it, or when a listing/search served it.
function concerns(event, where) {
  if (event.area === where.area && event.name === where.name) return true;
  return (event.files || []).includes(`${where.area}/${where.name}`);
}

function eventRow(event) {
  return h("tr", {},
    h("td", {}, when(event.at)),
    h("td", {}, event.actor || ""),
    h("td", {}, event.surface || ""),
    h("td", {}, event.operation || ""),
    h("td", {}, h("span", { class: event.outcome === "ok" ? "ok" : "bad" }, event.outcome || "")),
    h("td", {}, event.version ? h("code", {}, event.version) : ""));
}

async function load(where, state, body) {
  for (let page = 0; page < PAGES_PER_CLICK; page++) {
    const { data } = await api.audit({ scope: where.scope, area: where.area, name: where.name, cursor: state.cursor });
    body.append(...data.events.filter((e) => concerns(e, where)).map(eventRow));
    state.cursor = data.next_cursor;
    if (!state.cursor) return;
  }
}

export async function showAudit(view, where) {
  const state = { cursor: null };
  const body = h("tbody");
  const more = h("button", { type: "button" }, "Older events");
  const problem = h("div");
  replaceChildren(view.main,
    breadcrumb(where, "Audit trail"),
    h("h1", {}, `Audit trail of ${where.name}`),
    h("p", { class: "lead" }, "Every read and change of this file, newest first, including refused calls."),
    problem,
    h("div", { class: "card table-wrap" },
      h("table", { class: "audit" },
        h("caption", { class: "sr-only" }, `Events of ${where.name}`),
        h("thead", {}, h("tr", {}, ["When", "Actor", "Surface", "Operation", "Outcome", "Version"].map((c) => h("th", { scope: "col" }, c)))),
        body),
      h("div", { class: "actions" }, more)));
  const step = async () => {
    try {
      await load(where, state, body);
    } catch (error) {
      replaceChildren(problem, errorBox(error));
    }
    more.hidden = !state.cursor;
  };
  more.addEventListener("click", step);
  await step();
  if (view.live()) view.done();
}
