// The memory API as the browser calls it: the token, the version guards, the errors.
// Every rule (grants, versions, limits) is the server's; this module only carries requests.

const TOKEN_KEY = "wenchang.token";

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function remember(value) {
  sessionStorage.setItem(TOKEN_KEY, value);
}

export function forget() {
  sessionStorage.removeItem(TOKEN_KEY);
}

export class ApiError extends Error {
  constructor(status, body) {
    const payload = body && typeof body === "object" ? body : {};
    super(payload.message || `The server answered ${status}.`);
    this.status = status;
    this.code = payload.code || "HTTP_" + status;
    this.details = payload.details || {};
  }
}

export function filePath(scope, area, name) {
  return ["/v1/files", scope, area, name].map((part, i) => (i ? encodeURIComponent(part) : part)).join("/");
}

export function quoted(version) {
  return `"${version}"`;
}

// ifVersion: a version string → If-Match; null → If-None-Match: * (create / re-create).
export function guard(ifVersion) {
  return ifVersion === null ? { "If-None-Match": "*" } : { "If-Match": quoted(ifVersion) };
}

export async function call(method, path, { body, headers = {}, query, secret } = {}) {
  const bearer = secret ?? token();
  const url = new URL(path, window.location.origin);
  for (const [key, value] of Object.entries(query || {})) {
    if (value !== undefined && value !== null && value !== "") url.searchParams.set(key, value);
  }
  const init = {
    method,
    headers: { Accept: "application/json", Authorization: `Bearer ${bearer}`, ...headers },
    credentials: "omit",
    cache: "no-store",
    referrerPolicy: "no-referrer",
  };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(url, init);
  const text = await response.text();
  const data = text ? safeJson(text) : null;
  if (response.status === 401 && secret === undefined) {
    // The kept token stopped working (revoked, expired): forget it and ask again.
    forget();
    window.dispatchEvent(new CustomEvent("wenchang:signed-out", { detail: data }));
  }
  if (!response.ok) throw new ApiError(response.status, data);
  return { status: response.status, data };
}

function safeJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

// Whether this tab asks for expired files too (owners only: the server refuses others).
const EXPIRED_KEY = "wenchang.showExpired";

export function showingExpired() {
  return sessionStorage.getItem(EXPIRED_KEY) === "true";
}

export function showExpired(on) {
  if (on) sessionStorage.setItem(EXPIRED_KEY, "true");
  else sessionStorage.removeItem(EXPIRED_KEY);
}

const EXPIRED = { include_expired: "true" };

export const api = {
  index: (secret, withExpired = false) =>
    call("GET", "/v1/index", { secret, query: withExpired ? EXPIRED : {} }),
  read: (s, a, n) => call("GET", filePath(s, a, n)),
  readExpired: (s, a, n) => call("GET", filePath(s, a, n), { query: EXPIRED }),
  write: (s, a, n, body, ifVersion) =>
    call("PUT", filePath(s, a, n), { body, headers: guard(ifVersion) }),
  append: (s, a, n, body, version) =>
    call("POST", filePath(s, a, n) + "/lines", { body, headers: guard(version) }),
  replace: (s, a, n, body, version) =>
    call("POST", filePath(s, a, n) + "/replace", { body, headers: guard(version) }),
  remove: (s, a, n, version) => call("DELETE", filePath(s, a, n), { headers: guard(version) }),
  rename: (s, a, n, body, version) =>
    call("POST", filePath(s, a, n) + "/rename", { body, headers: guard(version) }),
  versions: (s, a, n, cursor) => call("GET", filePath(s, a, n) + "/versions", { query: { cursor } }),
  version: (s, a, n, v) =>
    call("GET", filePath(s, a, n) + "/versions/" + encodeURIComponent(v)),
  restore: (s, a, n, version, ifVersion) =>
    call("POST", filePath(s, a, n) + "/restore", { body: { version }, headers: guard(ifVersion) }),
  search: (query) => call("GET", "/v1/search", { query }),
  audit: (query) => call("GET", "/v1/audit", { query }),
  webhooks: (scope) => call("GET", `/v1/webhooks/${encodeURIComponent(scope)}`),
  addWebhook: (scope, body) => call("POST", `/v1/webhooks/${encodeURIComponent(scope)}`, { body }),
  enableWebhook: (scope, id) =>
    call("POST", `/v1/webhooks/${encodeURIComponent(scope)}/${encodeURIComponent(id)}/enable`),
  removeWebhook: (scope, id) =>
    call("DELETE", `/v1/webhooks/${encodeURIComponent(scope)}/${encodeURIComponent(id)}`),
};

// Every file the token may read, as a zip of markdown files (GET /v1/export/markdown): a Blob.
export async function markdownArchive() {
  const response = await fetch("/v1/export/markdown", {
    headers: { Authorization: `Bearer ${token()}` }, credentials: "omit", cache: "no-store",
  });
  if (!response.ok) throw new ApiError(response.status, safeJson(await response.text()));
  return response.blob();
}

// The change feed of one scope as a stream (fetch, since EventSource cannot send the
// token): calls onChange with each change that lands from now on, until stop() is called.
export function watchChanges(scope, onChange) {
  const controller = new AbortController();
  const url = new URL("/v1/changes", window.location.origin);
  url.searchParams.set("scope", scope);
  const headers = { Accept: "text/event-stream", Authorization: `Bearer ${token()}` };
  (async () => {
    const response = await fetch(url, {
      headers, credentials: "omit", cache: "no-store", signal: controller.signal,
    });
    if (!response.ok || !response.body) return;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block.split("\n").find((line) => line.startsWith("data: "));
        if (data) onChange(safeJson(data.slice(6)));
      }
    }
  })().catch(() => {
    // Aborted, or the stream broke: the page simply stops watching.
  });
  return { stop: () => controller.abort() };
}

// Which optional parts of the API this server has: read from its public OpenAPI document,
// so a view appears only when the endpoint it calls exists.
let features = null;

export async function available() {
  if (features) return features;
  const found = { history: false, search: false, audit: false, changes: false, webhooks: false };
  try {
    const response = await fetch("/openapi.json", { credentials: "omit", cache: "no-store" });
    const paths = Object.keys((await response.json()).paths || {});
    found.history = paths.some((p) => p.endsWith("/versions") || p.endsWith("/restore"));
    found.search = paths.includes("/v1/search");
    found.audit = paths.includes("/v1/audit");
    found.changes = paths.includes("/v1/changes");
    found.webhooks = paths.includes("/v1/webhooks/{scope}");
  } catch {
    // Without the document, show only what every server has.
  }
  features = found;
  return found;
}
