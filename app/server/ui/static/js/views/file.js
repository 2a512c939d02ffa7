// One file: rendered (sanitised) and raw, its metadata, and the small version-guarded edits.
import { ApiError, api, showingExpired, watchChanges } from "../api.js";
import { announce, chips, errorBox, field, fileHash, h, markdown, replaceChildren, when } from "../dom.js";

const LABELS = ["stated", "observed", "inferred", "system"];

export function metadata(file) {
  const row = (term, value) => [h("dt", {}, term), h("dd", {}, value || h("span", { class: "muted" }, "none"))];
  return h("dl", { class: "meta" },
    row("Description", file.description),
    row("Aliases", chips(file.aliases, "Aliases")),
    row("Sources", chips(file.sources, "Sources")),
    row("Last updated", when(file.last_updated)),
    row("Expires", file.expires_at ? when(file.expires_at) : "never"),
    row("Version", h("code", { class: "version" }, file.version)));
}

function contentPanels(content) {
  const rendered = h("div", { class: "markdown", id: "rendered" }, markdown(content));
  const raw = h("pre", { class: "raw", id: "raw", hidden: true, tabindex: "0", "aria-label": "Raw text" }, content);
  const buttons = [["Rendered", rendered], ["Raw text", raw]].map(([label, panel], i) => {
    const button = h("button", { type: "button", "aria-pressed": String(i === 0), "aria-controls": panel.id }, label);
    button.addEventListener("click", () => {
      for (const other of buttons) other.setAttribute("aria-pressed", String(other === button));
      rendered.hidden = panel !== rendered;
      raw.hidden = panel !== raw;
    });
    return button;
  });
  return h("section", { class: "card content", "aria-labelledby": "content-title" },
    h("h2", { id: "content-title", class: "sr-only" }, "Content"),
    h("div", { class: "toggle", role: "group", "aria-label": "Show content as" }, buttons),
    rendered, raw);
}

// A change refused because the file moved on: reload it, keep what the person typed.
async function afterConflict(view, where, error, keep) {
  announce("Someone changed this file meanwhile; review the current version.");
  await showFile(view, where, { notice: error, keep });
}

function appendForm(view, where, file, keep) {
  const label = h("select", { name: "label" }, LABELS.map((l) => h("option", { value: l }, l)));
  const text = h("input", { type: "text", name: "fact", required: true, value: keep?.fact || "" });
  if (keep?.label) label.value = keep.label;
  const form = h("form", { class: "inline-form", "aria-labelledby": "append-title" },
    h("h2", { id: "append-title" }, "Append a fact"),
    h("div", { class: "row" }, field("Label", label, null, "narrow-field"), field("Fact", text, "One line, e.g. Prefers tea.")),
    h("button", { type: "submit" }, "Append"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const body = { line: `- [${label.value}] ${text.value.trim()}` };
    const kept = { fact: text.value, label: label.value };
    mutate(view, where, kept, () => api.append(where.scope, where.area, where.name, body, file.version), "Fact appended");
  });
  return form;
}

function replaceForm(view, where, file, keep) {
  const old = h("textarea", { name: "old_string", rows: "2", required: true }, keep?.old || "");
  const replacement = h("textarea", { name: "new_string", rows: "2" }, keep?.replacement || "");
  const form = h("form", { class: "inline-form", "aria-labelledby": "replace-title" },
    h("h2", { id: "replace-title" }, "Replace text"),
    h("div", { class: "stack" },
      field("Find (exactly once)", old),
      field("Replace with", replacement, "Leave empty to delete the text.")),
    h("button", { type: "submit" }, "Replace"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const body = { old_string: old.value, new_string: replacement.value };
    const kept = { old: old.value, replacement: replacement.value };
    mutate(view, where, kept, () => api.replace(where.scope, where.area, where.name, body, file.version), "Text replaced");
  });
  return form;
}

async function mutate(view, where, kept, request, done) {
  stopWatching(); // this page's own change is not someone else's
  try {
    const { data } = await request();
    announce(`${done}. New version ${data.version}.`);
    await showFile(view, where);
  } catch (error) {
    if (error instanceof ApiError && error.status === 412) return afterConflict(view, where, error, kept);
    await showFile(view, where, { notice: error, keep: kept });
  }
}

function deleteDialog(view, where, file) {
  const dialog = h("dialog", { "aria-labelledby": "delete-title", class: "card" },
    h("h2", { id: "delete-title" }, `Delete ${where.name}?`),
    h("p", {}, "The file disappears for every agent. History keeps its versions, so you can restore it."));
  const cancel = h("button", { type: "button" }, "Cancel");
  const confirm = h("button", { type: "button", class: "danger" }, "Delete");
  cancel.addEventListener("click", () => dialog.close());
  confirm.addEventListener("click", async () => {
    dialog.close();
    stopWatching();
    try {
      await api.remove(where.scope, where.area, where.name, file.version);
      announce(`Deleted ${where.name}.`);
      view.go("#/");
    } catch (error) {
      if (error instanceof ApiError && error.status === 412) return afterConflict(view, where, error);
      await showFile(view, where, { notice: error });
    }
  });
  dialog.append(h("div", { class: "actions" }, cancel, confirm));
  return dialog;
}

// A move to another area or name of the scope, history and all (one atomic rename).
function renameDialog(view, where, file) {
  const area = h("input", { type: "text", name: "area", required: true, value: where.area });
  const name = h("input", { type: "text", name: "name", required: true, value: where.name });
  const cancel = h("button", { type: "button" }, "Cancel");
  const form = h("form", { method: "dialog" },
    h("h2", { id: "rename-title" }, `Rename ${where.name}`),
    h("p", {}, "The file and its history move; the old path is gone for every agent."),
    h("div", { class: "stack" }, field("Area", area, "A lowercase slug, e.g. projects."), field("Name", name)),
    h("div", { class: "actions" }, cancel, h("button", { type: "submit", class: "primary" }, "Rename")));
  const dialog = h("dialog", { "aria-labelledby": "rename-title", class: "card", id: "rename-dialog" }, form);
  cancel.addEventListener("click", () => dialog.close());
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    dialog.close();
    stopWatching();
    const body = { area: area.value.trim(), name: name.value.trim() };
    try {
      const { data } = await api.rename(where.scope, where.area, where.name, body, file.version);
      announce(`Renamed to ${data.area}/${data.name}.`);
      view.go(fileHash(data.scope, data.area, data.name));
    } catch (error) {
      await showFile(view, where, { notice: error });
    }
  });
  return dialog;
}

function actions(view, where, file, features, dialog) {
  const remove = h("button", { type: "button", class: "danger" }, "Delete…");
  remove.addEventListener("click", () => dialog.showModal());
  const renaming = renameDialog(view, where, file);
  const rename = h("button", { type: "button" }, "Rename…");
  rename.addEventListener("click", () => renaming.showModal());
  return h("div", { class: "actions" },
    h("a", { class: "button primary", href: fileHash(where.scope, where.area, where.name, "edit") }, "Edit"),
    features.history ? h("a", { class: "button", href: fileHash(where.scope, where.area, where.name, "history") }, "History") : null,
    features.audit ? h("a", { class: "button", href: fileHash(where.scope, where.area, where.name, "audit") }, "Audit trail") : null,
    rename,
    remove,
    renaming);
}

export function breadcrumb(where, current) {
  return h("nav", { "aria-label": "Breadcrumb", class: "crumbs" },
    h("ol", {},
      h("li", {}, h("a", { href: "#/" }, "Index")),
      h("li", {}, where.scope),
      h("li", {}, where.area),
      h("li", {}, current ? h("a", { href: fileHash(where.scope, where.area, where.name) }, where.name) : where.name),
      current ? h("li", { "aria-current": "page" }, current) : null));
}

function missing(view, where, error, features) {
  const gone = error instanceof ApiError && error.status === 404;
  replaceChildren(view.main, breadcrumb(where), h("h1", {}, where.name),
    errorBox(error),
    gone && features.history
      ? h("p", {}, "If it was deleted, its history can bring it back: ",
        h("a", { href: fileHash(where.scope, where.area, where.name, "history") }, "open its history"), ".")
      : null);
  view.done();
}

export async function showFile(view, where, { notice, keep } = {}) {
  const features = await view.features();
  let file;
  let expired = false;
  try {
    ({ data: file } = await api.read(where.scope, where.area, where.name));
  } catch (error) {
    // Gone for everyone may mean expired: an owner showing expired files still sees it.
    const absent = error instanceof ApiError && error.status === 404;
    try {
      if (!absent || !showingExpired()) throw error;
      ({ data: file } = await api.readExpired(where.scope, where.area, where.name));
      expired = true;
    } catch {
      if (view.live()) missing(view, where, error, features);
      return;
    }
  }
  if (!view.live()) return;
  const dialog = deleteDialog(view, where, file);
  replaceChildren(view.main,
    breadcrumb(where),
    // An expired file cannot be changed (the server answers as if it were absent).
    h("div", { class: "page-head" }, h("h1", {}, where.name), expired ? null : actions(view, where, file, features, dialog)),
    notice ? errorBox(notice) : null,
    expired ? h("p", { class: "notice", id: "expired-notice" },
      "This file has expired: agents no longer see it, and it cannot be changed. " +
      "Write it again (a new file of the same name) to bring it back.") : null,
    h("div", { class: "file-layout" },
      contentPanels(file.content),
      h("aside", { class: "card", "aria-label": "Metadata" }, metadata(file))),
    expired ? null : h("section", { class: "card edits", "aria-label": "Quick edits" },
      appendForm(view, where, file, keep), replaceForm(view, where, file, keep)),
    dialog);
  view.done();
  if (features.changes && !expired) watchFile(view, where, file);
}

// Someone else's change to the open file shows at once: a notice, and a way to the new version.
// The page's own edits reload the view, which ends this watch first.
let watching = null;

function stopWatching() {
  watching?.stop();
  watching = null;
}

function watchFile(view, where, file) {
  stopWatching();
  const watch = watchChanges(where.scope, (change) => {
    if (!view.live()) return watch.stop();
    if (!change || change.area !== where.area || change.name !== where.name) return;
    if (change.version === file.version) return;
    watch.stop();
    const reload = h("button", { type: "button" }, "Show the current version");
    reload.addEventListener("click", () => showFile(view, where));
    const verb = { delete_file: "deleted", rename_file: "renamed" }[change.operation] || "changed";
    const notice = h("div", { class: "notice", role: "status", id: "changed-notice" },
      h("p", {}, `This file was ${verb} by ${change.actor} (${change.operation}) since you opened it.`),
      reload);
    view.main.querySelector(".page-head")?.after(notice);
  });
  const ended = setInterval(() => {
    if (!view.live() || watching?.stop !== stop) {
      watch.stop();
      clearInterval(ended);
    }
  }, 1000);
  const stop = () => {
    watch.stop();
    clearInterval(ended);
  };
  watching = { stop };
}
