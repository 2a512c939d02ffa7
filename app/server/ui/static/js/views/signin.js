// Sign in by pasting a token: checked against the API, then kept in this tab's sessionStorage.
import { ApiError, api, remember } from "../api.js";
import { errorBox, field, h, replaceChildren } from "../dom.js";

export function showSignIn(view, onSignedIn) {
  const input = h("input", {
    type: "password", name: "token", autocomplete: "off", spellcheck: "false",
    required: true, autocapitalize: "off",
  });
  const problem = h("div", { "aria-live": "assertive" });
  const button = h("button", { type: "submit", class: "primary" }, "Sign in");
  // method=post: should the script ever fail, the browser posts the form to this
  // page instead of putting the token in the address bar.
  const form = h("form", { method: "post", class: "card narrow", "aria-labelledby": "signin-title" },
    h("h1", { id: "signin-title" }, "Sign in"),
    h("p", { class: "lead" }, "Paste a Wenchang token to see and correct the memories it can reach."),
    field("Token", input, "Kept only in this browser tab until you sign out or close it."),
    problem,
    h("div", { class: "actions" }, button));

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const secret = input.value.trim();
    if (!secret) return;
    button.disabled = true;
    replaceChildren(problem);
    try {
      await api.index(secret);
      input.value = "";
      remember(secret);
      onSignedIn();
    } catch (error) {
      const message = error instanceof ApiError && error.status === 401
        ? new ApiError(401, { code: "UNAUTHORIZED", message: "This token was not accepted. Check it and try again." })
        : error;
      replaceChildren(problem, errorBox(message));
      button.disabled = false;
      input.focus();
    }
  });
  replaceChildren(view.main, form);
  input.focus();
}
