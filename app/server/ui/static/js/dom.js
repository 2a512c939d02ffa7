// Building the page from untrusted data: text nodes only, except markdown, which is
// rendered by marked and then sanitised by DOMPurify into a DOM fragment.
import { Marked } from "../vendor/marked.esm.js";
import DOMPurify from "../vendor/purify.es.js";

// h("a", {href: "#/", class: "x", onclick: fn}, "text", child) — strings become text nodes.
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) element.addEventListener(key.slice(2), value);
    else if (key === "class") element.className = value;
    else if (value === true) element.setAttribute(key, "");
    else element.setAttribute(key, String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function replaceChildren(element, ...children) {
  element.replaceChildren();
  append(element, children);
}

const SAFE_LINK = /^(?:https?:|mailto:)/i;
const FORBIDDEN_TAGS = ["img", "svg", "math", "style", "form", "input", "button", "textarea",
  "select", "iframe", "object", "embed", "video", "audio", "source", "picture", "link", "meta"];

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    const href = node.getAttribute("href") || "";
    if (!SAFE_LINK.test(href.trim())) {
      node.removeAttribute("href");
    } else {
      node.setAttribute("rel", "noopener noreferrer nofollow");
      node.setAttribute("target", "_blank");
    }
  }
});

const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

// Raw HTML inside memory content is shown as the text it is, never parsed as markup.
const parser = new Marked({
  async: false,
  gfm: true,
  breaks: false,
  renderer: { html: ({ text }) => escapeHtml(text) },
});

// Markdown → a sanitised fragment: raw HTML stays text; DOMPurify then removes any
// script, event handler, style, image or form that markdown itself could express;
// links only to http(s) and mailto (javascript: and data: stay text).
export function markdown(text) {
  const html = parser.parse(text);
  const fragment = DOMPurify.sanitize(html, {
    RETURN_DOM_FRAGMENT: true,
    FORBID_TAGS: FORBIDDEN_TAGS,
    FORBID_ATTR: ["style", "class", "id", "srcset"],
    ALLOWED_URI_REGEXP: SAFE_LINK,
  });
  return demoteHeadings(fragment);
}

// A file's own "# Title" sits below the page's h1 and the section's h2.
function demoteHeadings(fragment) {
  for (const heading of fragment.querySelectorAll("h1, h2, h3, h4, h5, h6")) {
    const level = Math.min(6, Number(heading.tagName[1]) + 2);
    const replacement = document.createElement(`h${level}`);
    replacement.append(...heading.childNodes);
    heading.replaceWith(replacement);
  }
  return fragment;
}

// A search snippet marks matched terms with **…**; show them as <mark>, the rest as text.
export function highlighted(snippet) {
  const parts = String(snippet || "").split("**");
  return parts.map((part, i) => (i % 2 === 1 ? h("mark", {}, part) : part));
}

export function when(timestamp) {
  if (!timestamp) return "";
  const date = new Date(timestamp);
  if (Number.isNaN(date.getTime())) return String(timestamp);
  return h("time", { datetime: timestamp, title: timestamp }, date.toLocaleString());
}

export function fileHash(scope, area, name, view = "") {
  const parts = ["#/f", scope, area, name].map((part, i) => (i ? encodeURIComponent(part) : part));
  return parts.join("/") + (view ? "/" + view : "");
}

export function chips(values, label) {
  if (!values || !values.length) return null;
  return h("ul", { class: "chips", "aria-label": label }, values.map((v) => h("li", {}, v)));
}

let statusTimer = null;

export function announce(message) {
  const status = document.getElementById("status");
  status.textContent = message;
  status.classList.add("visible");
  clearTimeout(statusTimer);
  statusTimer = setTimeout(() => status.classList.remove("visible"), 4000);
}

export function errorBox(error) {
  return h("div", { class: "error", role: "alert" },
    h("p", { class: "error-code" }, error.code || "Error"),
    h("p", {}, error.message || String(error)));
}

export function field(label, control, hint, extraClass = "") {
  const id = control.id || "f-" + Math.random().toString(36).slice(2);
  control.id = id;
  const hintId = hint ? id + "-hint" : null;
  if (hintId) control.setAttribute("aria-describedby", hintId);
  return h("div", { class: `field ${extraClass}`.trim() },
    h("label", { for: id }, label),
    control,
    hint ? h("p", { class: "hint", id: hintId }, hint) : null);
}

export function focusHeading(root) {
  const heading = root.querySelector("h1");
  if (heading) {
    heading.setAttribute("tabindex", "-1");
    heading.focus({ preventScroll: false });
  }
}
