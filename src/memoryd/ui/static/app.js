// memoryd ui: the page. Every piece of memory text reaches the DOM as a text node
// (h() below never parses HTML), because a memory is untrusted input.
"use strict";

const TOKEN = metaContent("memoryd-token");
const CSRF = metaContent("memoryd-csrf");
const LABELS = {
  relevance: "relevance (bm25)",
  scope: "scope prior",
  age: "age factor",
  hits: "hits boost",
};

function metaContent(name) {
  const el = document.querySelector(`meta[name="${name}"]`);
  return el ? el.content : "";
}

function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "class") el.className = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  return add(el, ...kids);
}

// Append kids (nested arrays flattened, null/false left out), strings as text nodes.
function add(el, ...kids) {
  for (const kid of kids.flat(Infinity)) {
    if (kid === null || kid === undefined || kid === false) continue;
    el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return el;
}

class ApiError extends Error {
  constructor(data) {
    super(data.error || "request failed");
    this.hint = data.hint;
  }
}

async function api(name, params) {
  const query = new URLSearchParams(params || {});
  const res = await fetch(`/api/${name}?${query}`, { headers: { "X-Memoryd-Token": TOKEN } });
  const data = await res.json();
  if (!res.ok) throw new ApiError(data);
  return data;
}

async function post(name, body) {
  const res = await fetch(`/api/${name}`, {
    method: "POST",
    headers: {
      "X-Memoryd-Token": TOKEN,
      "X-CSRF-Token": CSRF,
      "Content-Type": "application/json",
    },
    body: JSON.stringify(body),
  });
  const data = await res.json();
  if (!res.ok) throw new ApiError(data);
  return data;
}

function errorBox(err) {
  return h("div", { class: "error", role: "alert" }, err.message,
    err.hint ? h("div", { class: "muted" }, "hint: ", err.hint) : null);
}

function ago(ms, now) {
  if (!ms) return "—";
  const s = Math.max(0, ((now || Date.now()) - ms) / 1000);
  if (s < 90) return `${Math.round(s)} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  if (s < 129600) return `${Math.round(s / 3600)} h`;
  if (s < 86400 * 60) return `${Math.round(s / 86400)} d`;
  if (s < 86400 * 730) return `${Math.round(s / (86400 * 30.4))} mo`;
  return `${(s / (86400 * 365.25)).toFixed(1)} y`;
}

function when(ms) {
  return ms ? `${new Date(ms).toISOString().replace("T", " ").slice(0, 19)} UTC (${ago(ms)} ago)` : "never";
}

function num(value) {
  return typeof value === "number" ? Number(value.toPrecision(4)).toString() : String(value);
}

// A link to a memory's page; ``ref`` (the name's bytes) when the server gave one, since a
// file name need not be UTF-8.
// A bar of used / allowed; the width is set through the CSSOM (the CSP allows no inline style).
function meter(used, allowed) {
  const bar = h("div", {});
  bar.style.width = `${Math.min(100, (100 * used) / allowed).toFixed(1)}%`;
  return h("div", { class: used > allowed ? "meter over" : "meter", id: "context-meter",
    title: `${used} of ${allowed} characters` }, bar);
}

function memoryLink(root, path, text, ref) {
  const query = new URLSearchParams(ref ? { root, ref } : { root, path });
  return h("a", { href: `#memory?${query}`, class: "memory-link" }, text);
}

// «term» marks in a snippet become <mark> elements; the rest stays text.
function marked(snippet) {
  const out = [];
  const re = /«([^«»]*)»/g;
  let last = 0;
  let m;
  while ((m = re.exec(snippet)) !== null) {
    out.push(snippet.slice(last, m.index), h("mark", {}, m[1]));
    last = re.lastIndex;
  }
  out.push(snippet.slice(last));
  return out;
}

// -- views -------------------------------------------------------------------------------

const VIEWS = {};

VIEWS.search = async (main, params) => {
  const input = h("input", { type: "search", id: "search-q", name: "q", value: params.get("q") || "",
    placeholder: "words to recall, in any language", autofocus: true });
  const results = h("div", { id: "search-results" });
  add(main, h("h2", {}, "Search: what recall returns"),
    h("form", { class: "bar", onsubmit: (e) => { e.preventDefault(); go("search", { q: input.value }); } },
      input, h("button", { type: "submit" }, "Search")),
    results);
  const query = (params.get("q") || "").trim();
  if (!query) {
    results.append(h("p", { class: "muted" },
      "Type a query to see what memoryd recall returns from this folder, why each memory matched, and the parts of its score. Looking here does not count as a hit."));
    return;
  }
  const data = await api("search", { q: query });
  results.append(h("p", { class: "muted" }, `${data.hits.length} result(s) for “${data.query}” in `,
    data.roots.join(", ")));
  data.hits.forEach((hit, i) => results.append(hitCard(hit, i + 1)));
  if (!data.hits.length) results.append(h("p", {}, "No memory matches. Try fewer or rarer words, or another language."));
};

function hitCard(hit, rank) {
  const parts = Object.entries(hit.parts || {});
  return h("div", { class: "card hit", "data-id": hit.id },
    h("div", { class: "hit-head" },
      h("span", { class: "rank" }, `${rank}.`),
      memoryLink(hit.root, hit.rel, hit.id, hit.ref),
      h("span", { class: "badge" }, hit.kind || hit.type || "memory"),
      h("span", { class: "badge" }, hit.scope),
      h("span", { class: "muted" }, `score ${num(hit.score)}`)),
    hit.summary ? h("div", { class: "summary" }, hit.summary) : null,
    h("div", { class: "snippet" }, marked(hit.snippet || "")),
    h("div", { class: "why" }, "matched: ",
      Object.entries(hit.terms).map(([t, n]) => `${t} ×${n}`).join(", ") || "—"),
    h("table", { class: "parts" },
      h("tr", {}, parts.map(([k]) => h("th", { class: "num" }, LABELS[k] || k)), h("th", { class: "num" }, "= score")),
      h("tr", {}, parts.map(([k, v]) => h("td", { class: "num", "data-part": k },
        k === "hits" ? `${num(v)} (${hit.hit_count} hits)` : num(v))),
        h("td", { class: "num" }, num(hit.score)))));
}

VIEWS.context = async (main, params) => {
  const prompt = params.get("q") || "";
  const box = h("textarea", { id: "context-q", rows: 3, placeholder: "a prompt, as the agent would get it" }, prompt);
  const out = h("div", { id: "context-out" });
  add(main, h("h2", {}, "What the agent sees"),
    h("form", { class: "bar", onsubmit: (e) => { e.preventDefault(); go("context", { q: box.value }); } },
      box, h("button", { type: "submit" }, "Show the block")),
    out);
  if (!params.has("q")) {
    out.append(h("p", { class: "muted" }, "The exact block memoryd context adds to a prompt: iron rules, the outline, and the bodies of the best hits within the budget."));
    return;
  }
  const data = await api("context", { q: prompt });
  const cutEntries = data.entries.filter((e) => e.cut);
  const budget = data.budget;
  const known = new Set(["text", "rules", "entries", "cut", "chars", "budget", "outline_cut",
    "rules_left_out", "cut_roots"]);
  const total = budget.max_total_chars;
  const more = Object.entries(data).filter(([k]) => !known.has(k));
  add(out,
    h("p", { id: "context-size" }, `${data.chars} characters in the block; `,
      `${data.entries.length} of at most ${budget.max_entries} memories shown; body budget ${budget.max_chars} characters, outline budget ${budget.outline_chars}.`),
    total ? meter(data.chars, total) : null,
    total ? h("p", { id: "context-total" }, `${data.chars} of the ${total} characters the block may take (injection.max_total_chars).`) : null,
    h("p", { class: "muted", id: "context-budget" }, "settings (injection.*): ",
      Object.entries(budget).map(([k, v]) => `${k} ${v}`).join(", ")),
    h("ul", { id: "context-cuts" },
      !data.cut ? h("li", {}, "Nothing was cut.") : null,
      data.outline_cut && !(data.cut_roots || []).length ? h("li", {}, "The outline was cut at its budget.") : null,
      (data.cut_roots || []).map((r) => h("li", {}, `The outline of ${r} was cut at its share of the budget.`)),
      data.rules_left_out ? h("li", {}, `${data.rules_left_out} iron rule(s) left out: they do not fit in the total (memoryd inspect reports it).`) : null,
      cutEntries.map((e) => h("li", {}, `The body of ${e.id} was cut at the budget.`))),
    more.length ? h("dl", { class: "meta", id: "context-more" }, more.map(([k, v]) =>
      [h("dt", {}, k), h("dd", {}, typeof v === "string" ? v : JSON.stringify(v))])) : null,
    data.entries.length ? h("table", {},
      h("tr", {}, h("th", {}, "memory"), h("th", {}, "scope"), h("th", {}, "kind"), h("th", {}, "summary"), h("th", {}, "cut")),
      data.entries.map((e) => h("tr", {}, h("td", {}, e.id), h("td", {}, e.scope), h("td", {}, e.kind || "—"),
        h("td", {}, e.summary || ""), h("td", {}, e.cut ? "cut" : "whole")))) : null,
    h("h3", {}, "The block"),
    h("pre", { id: "context-block" }, data.text));
};

const SORTS = {
  id: (m) => m.id, kind: (m) => m.kind || "", scope: (m) => m.scope, folder: (m) => m.folder,
  age: (m) => -(m.stamp || 0), hits: (m) => m.hits, problems: (m) => m.problems.length,
};

VIEWS.memories = async (main) => {
  const data = await api("memories");
  const state = { sort: "id", desc: false };
  const text = h("input", { type: "search", id: "memories-filter", placeholder: "filter by id, summary or folder" });
  const kinds = [...new Set(data.memories.map((m) => m.kind || ""))].sort();
  const kind = h("select", { id: "memories-kind" }, h("option", { value: "*" }, "every kind"),
    kinds.map((k) => h("option", { value: k }, k || "(no kind)")));
  const folders = [...new Set(data.memories.map((m) => m.folder))].sort();
  const folder = h("select", { id: "memories-folder" }, h("option", { value: "*" }, "every folder"),
    folders.map((f) => h("option", { value: f }, f || "(top)")));
  const scope = h("select", { id: "memories-scope" }, h("option", { value: "*" }, "every scope"),
    h("option", { value: "global" }, "global"), h("option", { value: "project" }, "project"));
  const flag = h("select", { id: "memories-flag" }, h("option", { value: "*" }, "all"),
    h("option", { value: "pinned" }, "pinned"), h("option", { value: "superseded" }, "superseded"),
    h("option", { value: "problems" }, "with problems"), h("option", { value: "never" }, "never hit"));
  const body = h("tbody", {});
  const count = h("span", { class: "muted" });
  const head = (key, label, cls) => h("th", { class: `sortable ${cls || ""}`, "data-sort": key,
    onclick: () => { state.desc = state.sort === key ? !state.desc : false; state.sort = key; draw(); } }, label);
  const roots = h("ul", { id: "roots" }, data.roots.map((r) => h("li", {}, `${r.path} `,
    h("span", { class: "badge" }, r.scope), " ", h("span", { class: "badge" }, r.layout), " ",
    `${data.memories.filter((m) => m.root === r.path).length} memory files`, r.exists ? "" : " (missing)")));
  add(main, h("h2", {}, "Memories"), roots,
    h("div", { class: "filters" }, text, kind, folder, scope, flag, count),
    h("table", { id: "memories-table" },
      h("thead", {}, h("tr", {}, head("id", "id"), head("kind", "kind"), head("scope", "scope"),
        head("folder", "folder"), h("th", {}, "flags"), head("age", "age", "num"),
        head("hits", "hits", "num"), head("problems", "problems"))),
      body));
  function keep(m) {
    const needle = text.value.trim().toLowerCase();
    if (needle && ![m.id, m.summary || "", m.folder, m.path].some((s) => s.toLowerCase().includes(needle))) return false;
    if (kind.value !== "*" && (m.kind || "") !== kind.value) return false;
    if (folder.value !== "*" && m.folder !== folder.value) return false;
    if (scope.value !== "*" && m.scope !== scope.value) return false;
    if (flag.value === "pinned" && !m.pinned) return false;
    if (flag.value === "superseded" && !m.superseded) return false;
    if (flag.value === "problems" && !m.problems.length) return false;
    if (flag.value === "never" && m.hits) return false;
    return true;
  }
  function draw() {
    const key = SORTS[state.sort];
    const rows = data.memories.filter(keep).sort((a, b) => {
      const x = key(a), y = key(b);
      const order = x < y ? -1 : x > y ? 1 : a.id < b.id ? -1 : 1;
      return state.desc ? -order : order;
    });
    count.textContent = `${rows.length} of ${data.memories.length} memories`;
    body.replaceChildren(...rows.map((m) => h("tr", { "data-id": m.id },
      h("td", {}, memoryLink(m.root, m.path, m.id, m.ref), m.summary ? h("div", { class: "muted" }, m.summary) : null),
      h("td", {}, m.kind || "—"), h("td", {}, m.scope), h("td", {}, m.folder || "(top)"),
      h("td", {}, m.pinned ? h("span", { class: "badge pinned" }, "pinned") : null, " ",
        m.superseded ? h("span", { class: "badge superseded" }, `superseded by ${m.superseded_by}`) : null),
      h("td", { class: "num" }, ago(m.stamp, data.now)), h("td", { class: "num" }, m.hits),
      h("td", {}, m.problems.map((p) => h("div", { class: "badge bad", title: p.fix }, p.message))))));
  }
  for (const el of [text, kind, folder, scope, flag]) el.addEventListener("input", draw);
  draw();
};

VIEWS.memory = async (main, params) => {
  const data = await api("memory", { root: params.get("root") || "", path: params.get("path") || "",
    ref: params.get("ref") || "" });
  const meta = Object.entries(data.meta);
  add(main, 
    h("p", {}, h("a", { href: "#memories" }, "← all memories")),
    h("h2", { id: "memory-title" }, data.id),
    h("p", { class: "muted" }, `${data.root}/${data.path} · ${data.scope} root · ${data.size} bytes`),
    data.problems.length ? h("div", { class: "error" }, data.problems.map((p) => h("div", {}, `${p.code}: ${p.message}`))) : null,
    h("h3", {}, "Frontmatter"),
    meta.length ? h("dl", { class: "meta", id: "memory-meta" }, meta.map(([k, v]) =>
      [h("dt", {}, k), h("dd", {}, typeof v === "string" ? v : JSON.stringify(v))])) : h("p", { class: "muted" }, "(none)"),
    h("h3", {}, "Body"),
    h("pre", { id: "memory-body" }, data.body),
    data.cut ? h("p", { class: "muted" }, "(the file is longer; the rest is not shown)") : null,
    h("h3", {}, "Supersedes chain"),
    data.chain.length ? h("ol", { class: "chain", id: "memory-chain" }, data.chain.map((c) =>
      h("li", { class: c.self ? "self" : "" }, c.exists && c.path && !c.self ? memoryLink(data.root, c.path, c.id) : c.id,
        c.summary ? ` — ${c.summary}` : "", c.exists ? "" : " (missing)"))) :
      h("p", { class: "muted" }, "It supersedes nothing and nothing supersedes it."),
    h("h3", {}, "History in git (git log --follow)"),
    data.history.length ? h("table", { id: "memory-history" },
      h("tr", {}, h("th", {}, "date"), h("th", {}, "author"), h("th", {}, "commit"), h("th", {}, "subject")),
      data.history.map((c) => h("tr", {}, h("td", {}, c.date), h("td", {}, c.author),
        h("td", {}, c.commit.slice(0, 10)), h("td", {}, c.subject)))) :
      h("p", { class: "muted" }, data.commits ? "Not in git (yet): the next sync commits it."
        : "Not in git: this root does not commit (its sync.commit is off)."));
};

VIEWS.conflicts = async (main) => {
  const data = await api("conflicts");
  const message = h("div", { id: "conflicts-message" });
  add(main, h("h2", {}, "Conflicts and sync"), message);
  const act = async (label, fn) => {
    message.replaceChildren(h("p", { class: "muted" }, `${label}…`));
    try {
      const text = await fn();
      await render();
      document.getElementById("conflicts-message").replaceChildren(h("div", { class: "ok", role: "status" }, text));
    } catch (err) {
      message.replaceChildren(errorBox(err));
    }
  };
  add(main, h("h3", {}, "Sync status per root"),
    h("table", { id: "sync-table" },
      h("tr", {}, h("th", {}, "root"), h("th", {}, "last sync"), h("th", {}, "last status"),
        h("th", { class: "num" }, "not pushed"), h("th", {}, "error / pause"), h("th", {}, "")),
      data.sync.map((s) => h("tr", { "data-root": s.root },
        h("td", {}, s.root, " ", h("span", { class: "badge" }, s.scope), s.syncs ? "" : h("span", { class: "muted" }, " (does not sync)")),
        h("td", {}, when(s.last_sync_ms)),
        h("td", {}, s.last_status || "—"),
        h("td", { class: "num" }, s.not_pushed),
        h("td", {},
          s.paused ? h("div", { class: "paused" }, `paused: ${s.paused.reason}`) : null,
          s.last_error && !s.paused ? h("div", {}, s.last_error) : null,
          s.ahead ? h("div", { class: "paused", "data-problem": "ahead" }, s.ahead) : null,
          s.quarantined.map((q) => h("div", { class: "muted" }, `kept out: ${q.path}:${q.line} ${q.rule}`))),
        h("td", {},
          s.paused ? h("button", { class: "danger", "data-action": "confirm-delete",
            onclick: () => { if (window.confirm(`Commit the deletion that paused ${s.root}? (memoryd sync --allow-mass-delete)`)) act("Syncing", async () => (await post("sync", { root: s.root, allow_mass_delete: true })).text); } },
          "Commit the deletion") : null,
          s.syncs ? h("button", { class: "plain", "data-action": "sync",
            onclick: () => act("Syncing", async () => (await post("sync", { root: s.root })).text) }, "Sync now") : null)))));
  add(main, h("h3", {}, `Conflict copies (${data.conflicts.length})`));
  if (!data.conflicts.length) add(main, h("p", { id: "no-conflicts" }, "No sync conflicts are waiting."));
  if (data.conflicts.length > 1) {
    const all = (how) => {
      if (!window.confirm(`Settle all ${data.conflicts.length} conflicts with keep ${how}? (memoryd resolve --all --keep ${how})`)) return;
      act("Settling", async () => {
        const done = await post("resolve-all", { keep: how });
        const lines = done.left.map((l) => `${l.id}: left pending: ${l.why}`);
        return [`settled ${done.settled.length} conflict(s), ${done.left.length} left pending`, ...lines].join("\n");
      });
    };
    add(main, h("div", { class: "buttons", id: "resolve-all" }, `All ${data.conflicts.length}:`,
      h("button", { "data-keep-all": "local", onclick: () => all("local") }, "Keep all local"),
      h("button", { "data-keep-all": "remote", onclick: () => all("remote") }, "Keep all remote"),
      h("button", { class: "plain", "data-keep-all": "both", onclick: () => all("both") }, "Keep all both")));
  }
  for (const c of data.conflicts) {
    const keep = (how) => act("Settling", async () => (await post("resolve", { id: c.id, keep: how })).done);
    add(main, h("div", { class: "card conflict", "data-id": c.id },
      h("div", {}, h("strong", {}, c.path), h("span", { class: "muted" }, ` in ${c.root}: ${c.device}'s version saved as ${c.copy} (${c.time})`)),
      h("table", { class: "diff" },
        h("tr", {}, h("th", { class: "no" }), h("th", {}, `local: the conflict copy (${c.device})`),
          h("th", { class: "no" }), h("th", {}, `remote: the text at ${c.path}`)),
        c.rows.map((r) => h("tr", { class: r.op },
          h("td", { class: "no" }, r.left_no), h("td", { class: `text left ${r.left === null ? "gone" : ""}` }, r.left),
          h("td", { class: "no" }, r.right_no), h("td", { class: `text right ${r.right === null ? "gone" : ""}` }, r.right)))),
      h("div", { class: "buttons" },
        h("button", { "data-keep": "local", onclick: () => keep("local") }, `Keep local (${c.device}'s copy)`),
        h("button", { "data-keep": "remote", onclick: () => keep("remote") }, `Keep remote (the text at ${c.path})`),
        h("button", { class: "plain", "data-keep": "both", onclick: () => keep("both") }, "Keep both"))));
  }
};

VIEWS.problems = async (main) => {
  const data = await api("problems");
  add(main, h("h2", {}, "Problems (memoryd inspect)"));
  if (!data.problems.length) {
    add(main, h("p", { id: "no-problems", class: "ok" }, `No problems found in ${data.memories} memories.`));
    return;
  }
  add(main, h("p", {}, `${data.problems.length} problem(s) in ${data.memories} memories:`),
    ...data.problems.map((p) => h("div", { class: "card problem" },
      h("div", {}, h("span", { class: "badge" }, p.check || "check"), " ", h("strong", {}, p.path)),
      h("div", { class: "summary" }, p.message),
      h("div", {}, "fix: ", h("span", { class: "fix" }, p.fix)))));
};

// -- routing -------------------------------------------------------------------------------

function go(view, params) {
  location.hash = `#${view}?${new URLSearchParams(params)}`;
}

let rendering = 0;
async function render() {
  const [name, query] = (location.hash.slice(1) || "search").split("?");
  const view = VIEWS[name] ? name : "search";
  const main = document.getElementById("main");
  const ticket = ++rendering;
  for (const a of document.querySelectorAll("#tabs a")) {
    a.classList.toggle("active", a.dataset.view === view || (view === "memory" && a.dataset.view === "memories"));
  }
  const fresh = h("div", { id: `view-${view}`, class: "view loading", "data-params": query || "" });
  main.replaceChildren(fresh);
  try {
    await VIEWS[view](fresh, new URLSearchParams(query || ""));
  } catch (err) {
    if (ticket === rendering) fresh.append(errorBox(err));
  }
  fresh.classList.remove("loading");
  fresh.classList.add("ready");
}

async function status() {
  try {
    const data = await api("overview");
    const daemon = data.daemon.running ? `daemon running (pid ${data.daemon.pid})` : "no daemon: the page reads the files itself";
    document.getElementById("status").textContent = `${data.device} · ${daemon} · ${data.roots.length} root(s)`;
  } catch (err) {
    document.getElementById("status").textContent = err.message;
  }
}

window.addEventListener("hashchange", render);
status();
render();
