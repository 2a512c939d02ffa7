// The page's router: the hash names the view (never a token); no token → sign in.
import { available, forget, markdownArchive, token } from "./api.js";
import { announce, focusHeading } from "./dom.js";
import { showAudit } from "./views/audit.js";
import { showEditor } from "./views/edit.js";
import { showFile } from "./views/file.js";
import { showHistory } from "./views/history.js";
import { showIndex } from "./views/index.js";
import { showSearch } from "./views/search.js";
import { showSignIn } from "./views/signin.js";
import { showWebhooks } from "./views/webhooks.js";

const FILE_ROUTE = /^#\/f\/([^/]+)\/([^/]+)\/([^/]+?)(?:\/(edit|history|audit))?$/;
const FILE_VIEWS = { "": showFile, edit: showEditor, history: showHistory, audit: showAudit };

let generation = 0;

function route(hash) {
  if (hash === "#/new") return (view) => showEditor(view, null);
  if (hash === "#/search" || hash.startsWith("#/search?")) {
    const query = new URLSearchParams(hash.slice("#/search?".length));
    return (view) => showSearch(view, query);
  }
  if (hash === "#/webhooks" || hash.startsWith("#/webhooks?")) {
    const query = new URLSearchParams(hash.slice("#/webhooks?".length));
    return (view) => showWebhooks(view, query);
  }
  const file = FILE_ROUTE.exec(hash);
  if (file) {
    const [scope, area, name] = file.slice(1, 4).map(decodeURIComponent);
    return (view) => FILE_VIEWS[file[4] || ""](view, { scope, area, name });
  }
  return (view) => showIndex(view);
}

// A view renders into `main` only while it is still the current one.
function viewFor(current) {
  const main = document.getElementById("main");
  return {
    main,
    live: () => current === generation,
    go: (hash) => {
      if (window.location.hash === hash) render();
      else window.location.hash = hash;
    },
    features: available,
    done: () => {
      if (current !== generation) return;
      const heading = main.querySelector("h1");
      document.title = heading ? `${heading.textContent} — Wenchang memory` : "Wenchang memory";
      focusHeading(main);
    },
  };
}

async function render() {
  const current = ++generation;
  const signedIn = Boolean(token());
  document.getElementById("nav").hidden = !signedIn;
  const view = viewFor(current);
  if (!signedIn) return showSignIn(view, render);
  const features = await available();
  document.getElementById("nav-search-item").hidden = !features.search;
  document.getElementById("nav-webhooks-item").hidden = !features.webhooks;
  return route(window.location.hash || "#/")(view);
}

function signOut() {
  forget();
  window.location.hash = "#/";
  render();
  announce("Signed out. The token is forgotten in this tab.");
}

// The download is fetched with the token (a plain link could not send it), then saved.
async function exportZip() {
  announce("Preparing the markdown export…");
  try {
    const link = document.createElement("a");
    link.href = URL.createObjectURL(await markdownArchive());
    link.download = "wenchang-memory.zip";
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
    announce("Markdown export downloaded (wenchang-memory.zip).");
  } catch (error) {
    announce(`The export failed: ${error.message}`);
  }
}

document.getElementById("sign-out").addEventListener("click", signOut);
document.getElementById("export-zip").addEventListener("click", exportZip);
window.addEventListener("wenchang:signed-out", () => {
  render();
  announce("Your token is no longer accepted; sign in again.");
});
window.addEventListener("hashchange", render);
render();
