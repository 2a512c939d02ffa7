// Create or edit a whole file. Saving is guarded by the version the person started from;
// if someone else saved meanwhile, their version is shown beside the person's to merge.
// Someone else's change shows at once while editing (who, which operation), with a way
// into that merge view before saving.
import { ApiError, api, watchChanges } from "../api.js";
import { diffView } from "../diff.js";
import { announce, errorBox, field, fileHash, h, replaceChildren } from "../dom.js";
import { breadcrumb, metadata } from "./file.js";

function aliasesOf(text) {
  return text.split("\n").map((line) => line.trim()).filter(Boolean);
}

// An expiry as a datetime-local value (the person's own time zone, to the second).
function localInput(expiresAt) {
  if (!expiresAt) return "";
  const d = new Date(expiresAt);
  const two = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}` +
    `T${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

// Untouched keeps the stored expiry (a new file: its area's default); emptied, never.
// After a conflict the form shows the person's choice, which the merged save still sends.
function expiryOf(input, pending) {
  if (input.value === input.defaultValue) return pending || {};
  if (!input.value) return { expires_at: null };
  return { expires_at: new Date(input.value).toISOString() };
}

function inputs(state) {
  const creating = state.creating;
  const text = (name, value, extra = {}) => h("input", { type: "text", name, value: value ?? "", ...extra });
  return {
    scope: creating ? text("scope", state.scope || "user", { required: true, list: "known-scopes" }) : null,
    area: creating ? text("area", state.area, { required: true, pattern: "[a-z0-9][a-z0-9_\\-]*" }) : null,
    name: creating ? text("name", state.name, { required: true }) : null,
    description: text("description", state.description),
    aliases: h("textarea", { name: "aliases", rows: "3" }, (state.aliases || []).join("\n")),
    content: h("textarea", { name: "content", rows: "16", class: "mono", spellcheck: "false" }, state.content || ""),
    expires: h("input", { type: "datetime-local", name: "expires_at", step: "1", value: localInput(state.expires_at) }),
  };
}

function theirsPanel(theirs, yours, fields) {
  if (!theirs) return null;
  const adopt = h("button", { type: "button" }, "Copy their version into the editor");
  adopt.addEventListener("click", () => {
    fields.content.value = theirs.content;
    fields.description.value = theirs.description;
    fields.aliases.value = theirs.aliases.join("\n");
    fields.content.focus();
  });
  return h("section", { class: "card theirs", "aria-labelledby": "theirs-title" },
    h("h2", { id: "theirs-title" }, "Their version (saved meanwhile)"),
    metadata(theirs),
    h("label", { for: "theirs-content" }, "Their content"),
    h("textarea", { id: "theirs-content", class: "mono", rows: "12", readonly: true }, theirs.content),
    h("div", { class: "actions" }, adopt),
    diffView(theirs.content, yours, "From their content to yours"));
}

function conflictNotice(state) {
  if (state.theirs) {
    return h("div", { class: "notice", role: "alert" },
      h("h2", {}, "Someone else changed this file while you were editing"),
      h("p", {}, "Nothing was overwritten. Their version is on the left; yours is kept in the form. " +
        "Merge what you want to keep, then save: the save applies on top of their version."));
  }
  if (state.vanished) {
    return h("div", { class: "notice", role: "alert" },
      h("h2", {}, "This file was deleted meanwhile"),
      h("p", {}, "Saving will create it again with your content."));
  }
  return null;
}

// The state with what the person has typed so far.
function edited(state, fields) {
  const where = state.creating
    ? { scope: fields.scope.value.trim(), area: fields.area.value.trim(), name: fields.name.value.trim() }
    : state.where;
  const body = {
    content: fields.content.value,
    description: fields.description.value,
    aliases: aliasesOf(fields.aliases.value),
  };
  const expiry = expiryOf(fields.expires, state.pendingExpiry);
  return { next: { ...state, ...where, ...body, ...expiry, pendingExpiry: expiry, where, error: null }, body, expiry, where };
}

async function save(view, state, fields) {
  watching?.stop(); // the save's own change is no one else's
  const { next, body, expiry, where } = edited(state, fields);
  try {
    const { data } = await api.write(where.scope, where.area, where.name, { ...body, ...expiry }, state.base);
    announce(`Saved ${where.name}, version ${data.version}.`);
    view.go(fileHash(where.scope, where.area, where.name));
  } catch (error) {
    await refused(view, next, error);
  }
}

// 412: show their current file beside the form, and save on top of it next time.
// 404 while editing: the file was deleted meanwhile; the next save re-creates it.
async function refused(view, state, error) {
  const status = error instanceof ApiError ? error.status : 0;
  if (status === 404 && error.details.reason === "file_absent" && !state.creating) {
    return render(view, { ...state, theirs: null, vanished: true, base: null, error: null });
  }
  if (status !== 412) return render(view, { ...state, error });
  return showTheirs(view, state);
}

// Their current file beside the person's edits (or, if it is gone, the deleted notice).
async function showTheirs(view, state) {
  try {
    const { data: theirs } = await api.read(state.where.scope, state.where.area, state.where.name);
    render(view, { ...state, creating: false, theirs, vanished: false, base: theirs.version });
  } catch (reread) {
    const gone = reread instanceof ApiError && reread.status === 404;
    render(view, { ...state, creating: false, theirs: null, vanished: gone, base: gone ? null : state.base, error: gone ? null : reread });
  }
}

// While a file is edited, someone else's change to it brings a notice at once.
let watching = null;

function watchEdited(view, state, fields, slot) {
  watching?.stop();
  const where = state.where;
  const watch = watchChanges(where.scope, (change) => {
    if (!view.live()) return stop();
    if (!change || change.area !== where.area || change.name !== where.name) return;
    if (change.version === state.base) return;
    stop();
    const verb = { delete_file: "deleted", rename_file: "renamed" }[change.operation] || "changed";
    const merge = h("button", { type: "button" }, "Show their version to merge");
    merge.addEventListener("click", () => showTheirs(view, edited(state, fields).next));
    replaceChildren(slot, h("div", { class: "notice", role: "status", id: "changed-notice" },
      h("p", {}, `This file was ${verb} by ${change.actor} (${change.operation}) since you began editing. ` +
        "Your edits are kept in the form."),
      merge));
  });
  const ended = setInterval(() => {
    if (!view.live()) stop();
  }, 1000);
  const stop = () => {
    watch.stop();
    clearInterval(ended);
    if (watching?.stop === stop) watching = null;
  };
  watching = { stop };
}

function render(view, state) {
  if (!view.live()) return;
  watching?.stop();
  const fields = inputs(state);
  const title = state.creating ? "New file" : `Edit ${state.where.name}`;
  const form = h("form", { class: "card editor", "aria-labelledby": "editor-title" },
    h("h2", { id: "editor-title" }, state.theirs ? "Your version" : "File"),
    fields.scope ? h("div", { class: "row" },
      field("Scope", fields.scope), field("Area", fields.area, "Lowercase letters, digits, - and _."),
      field("Name", fields.name)) : null,
    field("Description", fields.description, "One line that tells an agent when to read this file."),
    field("Aliases", fields.aliases, "One per line: other names agents may look this up by."),
    field("Content (markdown)", fields.content),
    field("Expires", fields.expires, "When agents stop seeing this file. Empty: never " +
      "(a new file left empty takes its area's default lifetime, if it has one)."),
    h("datalist", { id: "known-scopes" }, (state.scopes || []).map((s) => h("option", { value: s }))),
    h("div", { class: "actions" },
      h("button", { type: "submit", class: "primary" }, state.theirs ? "Save merged version" : state.creating ? "Create" : "Save"),
      h("a", { class: "button", href: state.creating ? "#/" : fileHash(state.where.scope, state.where.area, state.where.name) }, "Cancel")));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    save(view, state, fields);
  });
  const slot = h("div");
  replaceChildren(view.main,
    state.creating ? null : breadcrumb(state.where, "Edit"),
    h("h1", {}, title),
    slot,
    conflictNotice(state),
    state.error ? errorBox(state.error) : null,
    h("div", { class: state.theirs ? "merge" : "" }, theirsPanel(state.theirs, state.content || "", fields), form));
  view.done();
  if (!state.creating && !state.vanished) {
    view.features().then((features) => {
      if (features.changes && view.live()) watchEdited(view, state, fields, slot);
    });
  }
}

export async function showEditor(view, where) {
  if (!where) {
    let scopes = ["user"];
    try {
      const { data } = await api.index();
      scopes = [...new Set([...scopes, ...data.entries.map((e) => e.scope)])];
    } catch {
      // The scope field still accepts any name; the server says which are granted.
    }
    return render(view, { creating: true, base: null, scopes });
  }
  try {
    const { data: file } = await api.read(where.scope, where.area, where.name);
    render(view, { where, base: file.version, ...file });
  } catch (error) {
    if (!view.live()) return;
    replaceChildren(view.main, breadcrumb(where, "Edit"), h("h1", {}, `Edit ${where.name}`), errorBox(error));
    view.done();
  }
}
