// Webhooks of one scope: add a URL (its secret shown once), each endpoint's delivery
// state (active, retrying, failed; changes skipped as no longer kept), enable a failed
// one, remove one. Owners only: the
// server refuses anyone else, and the page shows its refusal.
import { api } from "../api.js";
import { announce, errorBox, field, h, replaceChildren, when } from "../dom.js";

function stateText(delivery) {
  if (delivery.status === "failed") return "failed";
  if (delivery.status === "retrying") return `retrying (${delivery.attempts} failed)`;
  return "active";
}

async function act(request, done, refresh) {
  try {
    await request();
    announce(done);
  } catch (error) {
    announce(error.message || String(error));
  }
  await refresh();
}

function hookRow(scope, hook, refresh) {
  const delivery = hook.delivery;
  const actions = h("td", {});
  if (delivery.status === "failed") {
    const enable = h("button", { type: "button" }, "Enable");
    enable.addEventListener("click", () => act(() => api.enableWebhook(scope, hook.id), `Webhook ${hook.id} enabled.`, refresh));
    actions.append(enable);
  }
  const remove = h("button", { type: "button" }, "Remove");
  remove.addEventListener("click", () => act(() => api.removeWebhook(scope, hook.id), `Webhook ${hook.id} removed.`, refresh));
  actions.append(remove);
  return h("tr", { "data-id": hook.id },
    h("td", {}, h("code", {}, hook.url), hook.description ? h("p", { class: "description" }, hook.description) : null),
    h("td", {}, h("span", { class: delivery.status === "active" ? "ok" : "bad", "data-status": delivery.status }, stateText(delivery)),
      delivery.skipped_at ? h("p", { class: "bad", "data-skipped": "" }, "Missed changes no longer kept, skipped ", when(delivery.skipped_at)) : null),
    h("td", {}, delivery.last_error || ""),
    h("td", {}, when(delivery.last_delivered_at)),
    h("td", {}, when(delivery.next_attempt_at || delivery.failed_at)),
    actions);
}

export async function showWebhooks(view, query) {
  const scope = query.get("scope") || "user";
  const scopeInput = h("input", { type: "text", name: "scope", value: scope, required: "" });
  const urlInput = h("input", { type: "url", name: "url", required: "", placeholder: "https://hooks.example.com/wenchang" });
  const description = h("input", { type: "text", name: "description" });
  const problem = h("div");
  const secret = h("div");
  const body = h("tbody");
  const form = h("form", { class: "card inline-form" },
    h("h2", {}, "Add a webhook"),
    field("Scope", scopeInput),
    field("URL", urlInput, "Each change of your files in this scope is POSTed here, signed (Standard Webhooks)."),
    field("Description", description),
    h("button", { type: "submit" }, "Add webhook"));
  replaceChildren(view.main,
    h("h1", {}, "Webhooks"),
    h("p", { class: "lead" }, `Endpoints that receive the changes of your files in scope ${scope}.`),
    problem, secret, form,
    h("div", { class: "card table-wrap" },
      h("table", { class: "webhooks" },
        h("caption", { class: "sr-only" }, `Webhooks of scope ${scope}`),
        h("thead", {}, h("tr", {}, ["URL", "State", "Last error", "Last delivered", "Next attempt or failed at", "Actions"].map((c) => h("th", { scope: "col" }, c)))),
        body)));
  const refresh = async () => {
    try {
      const { data } = await api.webhooks(scope);
      replaceChildren(body, ...data.webhooks.map((hook) => hookRow(scope, hook, refresh)));
      if (!data.webhooks.length) replaceChildren(body, h("tr", {}, h("td", { colspan: "6" }, "No webhooks yet.")));
    } catch (error) {
      replaceChildren(problem, errorBox(error));
    }
  };
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const target = scopeInput.value.trim();
    if (target !== scope) {
      view.go(`#/webhooks?scope=${encodeURIComponent(target)}`);
      return;
    }
    try {
      const { data } = await api.addWebhook(scope, { url: urlInput.value, description: description.value });
      replaceChildren(problem);
      replaceChildren(secret, h("div", { class: "card", role: "note" },
        h("p", {}, "The signing secret of ", h("code", {}, data.id), " is shown only now:"),
        h("p", {}, h("code", { class: "secret" }, data.secret))));
      form.reset();
      scopeInput.value = scope;
      announce("Webhook added.");
      await refresh();
    } catch (error) {
      replaceChildren(problem, errorBox(error));
    }
  });
  await refresh();
  if (view.live()) view.done();
}
