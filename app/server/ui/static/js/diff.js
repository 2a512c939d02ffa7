// A line diff (longest common subsequence) for showing two versions side by side in time.
import { h } from "./dom.js";

// "a\nb\n" is two lines, not three: the final newline ends the last line; "" is none.
function lines(text) {
  if (text === "") return [];
  const split = text.split("\n");
  if (split.length > 1 && split[split.length - 1] === "") split.pop();
  return split;
}

export function lineDiff(before, after) {
  const a = lines(before);
  const b = lines(after);
  const rows = a.length + 1;
  const cols = b.length + 1;
  const lengths = new Uint32Array(rows * cols);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lengths[i * cols + j] = a[i] === b[j]
        ? lengths[(i + 1) * cols + j + 1] + 1
        : Math.max(lengths[(i + 1) * cols + j], lengths[i * cols + j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push({ kind: "same", text: a[i++] });
      j++;
    } else if (i < a.length && (j === b.length || lengths[(i + 1) * cols + j] >= lengths[i * cols + j + 1])) {
      out.push({ kind: "removed", text: a[i++] });
    } else {
      out.push({ kind: "added", text: b[j++] });
    }
  }
  return out;
}

const MARK = { same: " ", added: "+", removed: "−" };
const SPOKEN = { same: "", added: "added: ", removed: "removed: " };

export function diffView(before, after, label) {
  const lines = lineDiff(before, after);
  const changed = lines.filter((line) => line.kind !== "same").length;
  return h("figure", { class: "diff" },
    h("figcaption", {}, label, h("span", { class: "muted" }, ` — ${changed} line${changed === 1 ? "" : "s"} changed`)),
    h("pre", { tabindex: "0", "aria-label": label },
      lines.map((line) => {
        const tag = line.kind === "added" ? "ins" : line.kind === "removed" ? "del" : "span";
        return h(tag, { class: `line ${line.kind}` },
          h("span", { class: "sr-only" }, SPOKEN[line.kind]),
          h("span", { class: "mark", "aria-hidden": "true" }, MARK[line.kind]),
          line.text, "\n");
      })));
}
