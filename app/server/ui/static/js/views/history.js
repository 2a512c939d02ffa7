// A file's history: every version, a diff between any two, and restore in one click.
import { ApiError, api } from "../api.js";
import { diffView } from "../diff.js";
import { announce, errorBox, fileHash, h, replaceChildren, when } from "../dom.js";
import { breadcrumb } from "./file.js";

async function currentVersion(where) {
  try {
    return (await api.read(where.scope, where.area, where.name)).data.version;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    throw error;
  }
}

async function restore(view, where, record, problem) {
  try {
    const current = await currentVersion(where);
    const { data } = await api.restore(where.scope, where.area, where.name, record.version, current);
    announce(`Restored ${where.name} from ${record.version}; new version ${data.version}.`);
    view.go(fileHash(where.scope, where.area, where.name));
  } catch (error) {
    replaceChildren(problem, errorBox(error));
    problem.focus();
  }
}

function shortVersion(version) {
  return version.length > 14 ? version.slice(0, 12) + "…" : version;
}

function recordRow(view, where, record, state, problem) {
  const pick = (side) => {
    const radio = h("input", { type: "radio", name: `side-${side}`, value: record.version,
      "aria-label": `Compare ${side === "a" ? "from" : "to"} version ${record.version}` });
    radio.checked = state[side] === record.version;
    radio.addEventListener("change", () => { state[side] = record.version; });
    return radio;
  };
  const restoreButton = record.deleted ? h("span", { class: "muted" }, "deletion")
    : h("button", { type: "button", "aria-label": `Restore version ${record.version}` }, "Restore");
  if (!record.deleted) restoreButton.addEventListener("click", () => restore(view, where, record, problem));
  return h("tr", { class: record.deleted ? "tombstone" : "" },
    h("td", {}, pick("a")), h("td", {}, pick("b")),
    h("td", {}, h("code", { title: record.version }, shortVersion(record.version))),
    h("td", {}, record.operation), h("td", {}, record.actor), h("td", {}, when(record.at)),
    h("td", { class: "num" }, record.deleted ? "—" : String(record.size)),
    h("td", {}, restoreButton));
}

async function contentOf(where, version) {
  const { data } = await api.version(where.scope, where.area, where.name, version);
  return data.deleted ? "" : (data.file?.content ?? data.content ?? "");
}

async function compare(where, state, target) {
  if (!state.a || !state.b) return replaceChildren(target, h("p", {}, "Pick two versions to compare."));
  replaceChildren(target, h("p", { class: "loading" }, "Comparing…"));
  try {
    const [before, after] = await Promise.all([contentOf(where, state.a), contentOf(where, state.b)]);
    replaceChildren(target, diffView(before, after, `From ${shortVersion(state.a)} to ${shortVersion(state.b)}`));
  } catch (error) {
    replaceChildren(target, errorBox(error));
  }
}

export async function showHistory(view, where) {
  const state = { a: null, b: null, cursor: null, records: [] };
  let page;
  try {
    ({ data: page } = await api.versions(where.scope, where.area, where.name));
  } catch (error) {
    if (!view.live()) return;
    replaceChildren(view.main, breadcrumb(where, "History"), h("h1", {}, `History of ${where.name}`), errorBox(error));
    return view.done();
  }
  if (!view.live()) return;
  const records = page.entries;
  state.b = records[0]?.version ?? null;
  state.a = records.find((r, i) => i > 0 && !r.deleted)?.version ?? state.b;
  const problem = h("div", { tabindex: "-1" });
  const body = h("tbody", {}, records.map((r) => recordRow(view, where, r, state, problem)));
  const diffTarget = h("div", { "aria-live": "polite" });
  const compareButton = h("button", { type: "button", class: "primary" }, "Compare selected versions");
  compareButton.addEventListener("click", () => compare(where, state, diffTarget));
  const more = h("button", { type: "button", hidden: !page.next_cursor }, "Older versions");
  let cursor = page.next_cursor;
  more.addEventListener("click", async () => {
    const { data } = await api.versions(where.scope, where.area, where.name, cursor);
    body.append(...data.entries.map((r) => recordRow(view, where, r, state, problem)));
    cursor = data.next_cursor;
    more.hidden = !cursor;
  });
  replaceChildren(view.main,
    breadcrumb(where, "History"),
    h("h1", {}, `History of ${where.name}`),
    h("p", { class: "lead" }, "Newest first. Restoring writes that version again as a new version; nothing is lost."),
    problem,
    h("div", { class: "card table-wrap" },
      h("table", { class: "history" },
        h("caption", { class: "sr-only" }, `Versions of ${where.name}`),
        h("thead", {}, h("tr", {}, ["From", "To", "Version", "Operation", "Actor", "When", "Bytes", "Restore"].map((c) => h("th", { scope: "col" }, c)))),
        body),
      h("div", { class: "actions" }, compareButton, more)),
    diffTarget);
  if (state.a && state.b && state.a !== state.b) await compare(where, state, diffTarget);
  view.done();
}
