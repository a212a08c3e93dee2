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
  date: "date match",
};
// What the context block's other fields mean, in words (never the internal key).
const CONTEXT_FIELDS = {
  query_terms_left_out: "search terms of the prompt left out (recall is given the first ones; a pasted log is cut)",
  rules_left_out: "iron rules left out (they do not fit in the total)",
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

// The exact time, in UTC and as the reader's clock says it.
function exact(ms) {
  const date = new Date(ms);
  return `${date.toISOString().replace("T", " ").slice(0, 19)} UTC (${date.toLocaleString()})`;
}

// A date for people: "3 days ago", the exact time on hover (title) and for machines
// (datetime). ``value``: epoch milliseconds or an ISO 8601 string.
function dateEl(value, now) {
  if (value === null || value === undefined || value === "") return "never";
  const ms = typeof value === "number" ? value : Date.parse(value);
  if (Number.isNaN(ms)) return String(value);
  const later = ms > (now || Date.now());
  const span = later ? ago(2 * (now || Date.now()) - ms, now) : ago(ms, now);
  return h("time", { datetime: new Date(ms).toISOString(), title: exact(ms), tabindex: "0" },
    later ? `in ${span}` : `${span} ago`);
}

function when(ms) {
  return ms ? dateEl(ms) : "never";
}

const DATE_FIELDS = new Set(["created", "updated"]);

// A frontmatter value as a person reads it: dates as dates, lists as lists, no JSON.
function metaValue(key, value) {
  if (DATE_FIELDS.has(key) && typeof value === "number") return dateEl(value);
  if (DATE_FIELDS.has(key) && typeof value === "string" && value.endsWith(" UTC")) {
    return dateEl(value.replace(" UTC", "Z").replace(" ", "T"));  // the server's "YYYY-MM-DD hh:mm:ss UTC"
  }
  if (Array.isArray(value)) {
    return value.length ? h("ul", { class: "plain" }, value.map((v) => h("li", {}, typeof v === "string" ? v : JSON.stringify(v)))) : "(none)";
  }
  if (value === true) return "yes";
  if (value === false) return "no";
  if (value === null) return "(empty)";
  return typeof value === "string" ? value : JSON.stringify(value);
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

// A table that turns into cards on a narrow screen: each cell carries its column's name.
function cardTable(attrs, heads, rows) {
  return h("table", { ...attrs, class: `cards ${attrs.class || ""}` },
    h("thead", {}, h("tr", {}, heads.map(([label, cls]) => h("th", { scope: "col", class: cls || null }, label)))),
    h("tbody", {}, rows.map(([rowAttrs, cells]) => h("tr", rowAttrs,
      cells.map((cell, i) => h("td", { "data-label": heads[i][0] || null, class: heads[i][1] || null }, cell))))));
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
    placeholder: "words to recall, in any language", autofocus: true, "aria-label": "Search memory" });
  const results = h("div", { id: "search-results" });
  add(main, h("h2", {}, "Search: what recall returns"),
    h("form", { class: "bar", role: "search", onsubmit: (e) => { e.preventDefault(); go("search", { q: input.value }); } },
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
  const box = h("textarea", { id: "context-q", rows: 3, placeholder: "a prompt, as the agent would get it",
    "aria-label": "A prompt" }, prompt);
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
    "rules_left_out", "cut_roots", "query_terms_left_out"]);
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
      data.query_terms_left_out ? h("li", {}, `${data.query_terms_left_out} search term(s) of the prompt left out: recall is given the first ones (a pasted log is cut).`) : null,
      cutEntries.map((e) => h("li", {}, `The body of ${e.id} was cut at the budget.`))),
    more.length ? h("dl", { class: "meta", id: "context-more" }, more.map(([k, v]) =>
      [h("dt", {}, CONTEXT_FIELDS[k] || k.replaceAll("_", " ")), h("dd", {}, metaValue(k, v))])) : null,
    data.entries.length ? cardTable({ id: "context-entries" },
      [["memory"], ["scope"], ["kind"], ["summary"], ["cut"]],
      data.entries.map((e) => [{ "data-id": e.id }, [e.ref ? memoryLink(e.root, e.rel, e.id, e.ref) : e.id,
        e.scope, e.kind || "—", e.summary || "", e.cut ? "cut" : "whole"]])) : null,
    h("h3", {}, "The block"),
    h("pre", { id: "context-block" }, data.text));
};

const PAGE = 50;
const FLAGS = { pinned: "pinned", superseded: "superseded", problems: "with problems", never: "never hit" };

// A labelled control: every input and select has a visible name (screen readers, axe).
function labelled(text, control) {
  return h("label", { class: "field" }, h("span", { class: "field-name" }, text), control);
}

// The Memories view asks the server for one page at a time: filters, sort and page are
// done in the index (SQL), so 100k memories cost what 50 do.
VIEWS.memories = async (main) => {
  const state = { sort: "id", desc: false, offset: 0 };
  const first = await api("memories", { facets: "1", limit: PAGE });
  const text = h("input", { type: "search", id: "memories-filter", placeholder: "id, summary or folder" });
  const kind = h("select", { id: "memories-kind" }, h("option", { value: "*" }, "every kind"),
    first.facets.kinds.map((k) => h("option", { value: k }, k || "(no kind)")));
  const folder = h("select", { id: "memories-folder" }, h("option", { value: "*" }, "every folder"),
    first.facets.folders.map((f) => h("option", { value: f }, f || "(top)")));
  const scope = h("select", { id: "memories-scope" }, h("option", { value: "*" }, "every scope"),
    h("option", { value: "global" }, "global"), h("option", { value: "team" }, "team"),
    h("option", { value: "project" }, "project"));
  const flag = h("select", { id: "memories-flag" }, h("option", { value: "*" }, "all"),
    Object.entries(FLAGS).map(([k, v]) => h("option", { value: k }, v)));
  const body = h("tbody", {});
  const count = h("p", { class: "muted", id: "memories-count", role: "status" });
  const prev = h("button", { type: "button", class: "plain", id: "memories-prev",
    onclick: () => { state.offset = Math.max(0, state.offset - PAGE); load(); } }, "← Previous");
  const next = h("button", { type: "button", class: "plain", id: "memories-next",
    onclick: () => { state.offset += PAGE; load(); } }, "Next →");
  const heads = {};
  const head = (key, label, cls) => {
    const button = h("button", { type: "button", class: "sort", "data-sort": key,
      onclick: () => { state.desc = state.sort === key ? !state.desc : key === "hits" || key === "problems";
        state.sort = key; state.offset = 0; load(); } }, label);
    heads[key] = h("th", { class: `sortable ${cls || ""}`, scope: "col" }, button);
    return heads[key];
  };
  const roots = h("ul", { id: "roots" }, first.roots.map((r) => h("li", {}, `${r.path} `,
    h("span", { class: "badge" }, r.scope), " ", h("span", { class: "badge" }, r.layout), " ",
    `${r.count} memory files`, r.exists ? "" : " (missing)")));
  add(main, h("h2", {}, "Memories"), roots,
    h("div", { class: "filters", role: "search" }, labelled("Filter", text), labelled("Kind", kind),
      labelled("Folder", folder), labelled("Scope", scope), labelled("Show", flag)),
    count,
    h("table", { id: "memories-table", class: "cards" },
      h("caption", { class: "sr-only" }, "Memories; the column buttons sort"),
      h("thead", {}, h("tr", {}, head("id", "id"), head("kind", "kind"), head("scope", "scope"),
        head("folder", "folder"), h("th", { scope: "col" }, "flags"), head("age", "age", "num"),
        head("hits", "hits", "num"), head("problems", "problems"))),
      body),
    h("div", { class: "buttons pager" }, prev, next));
  let ticket = 0;
  async function load(data) {
    const mine = ++ticket;
    const params = { sort: state.sort, desc: state.desc ? "1" : "0", offset: state.offset, limit: PAGE, q: text.value.trim() };
    if (kind.value !== "*") params.kind = kind.value;
    if (folder.value !== "*") params.folder = folder.value;
    if (scope.value !== "*") params.scope = scope.value;
    if (flag.value !== "*") params.flag = flag.value;
    main.classList.add("loading");
    main.classList.remove("ready");
    const page = data || await api("memories", params);
    if (mine !== ticket) return;
    draw(page);
    main.classList.remove("loading");
    main.classList.add("ready");
  }
  function draw(page) {
    for (const [key, th] of Object.entries(heads)) {
      th.setAttribute("aria-sort", key === state.sort ? (state.desc ? "descending" : "ascending") : "none");
    }
    const shown = page.memories.length;
    count.textContent = shown ? `${page.offset + 1}–${page.offset + shown} of ${page.total} memories` : `0 of ${page.total} memories`;
    prev.disabled = page.offset === 0;
    next.disabled = page.offset + shown >= page.total;
    body.replaceChildren(...page.memories.map((m) => h("tr", { "data-id": m.id },
      h("td", { "data-label": "id" }, memoryLink(m.root, m.path, m.id, m.ref), m.summary ? h("div", { class: "muted" }, m.summary) : null),
      h("td", { "data-label": "kind" }, m.kind || "—"), h("td", { "data-label": "scope" }, m.scope),
      h("td", { "data-label": "folder" }, m.folder || "(top)"),
      h("td", { "data-label": "flags" }, m.pinned ? h("span", { class: "badge pinned" }, "pinned") : null,
        m.pinned && m.superseded ? " " : null,
        m.superseded ? h("span", { class: "badge superseded" }, `superseded by ${m.superseded_by}`) : null),
      h("td", { class: "num", "data-label": "age" }, m.stamp ? h("time", { datetime: new Date(m.stamp).toISOString(), title: exact(m.stamp) }, ago(m.stamp, page.now)) : "—"),
      h("td", { class: "num", "data-label": "hits" }, m.hits),
      h("td", { "data-label": "problems" }, m.problems.map((p) => h("div", { class: "badge bad", title: p.fix || null }, p.message))))));
  }
  for (const el of [text, kind, folder, scope, flag]) el.addEventListener("input", () => { state.offset = 0; load(); });
  await load(first);
};

// What a person can do with a memory: the same library calls as memoryd forget / accept.
function actions(data) {
  const message = h("div", { id: "memory-message", role: "status" });
  const run = async (question, name, body, done) => {
    if (!window.confirm(question)) return;
    message.replaceChildren(h("p", { class: "muted" }, "Working…"));
    try {
      done(await post(name, body));
    } catch (err) {
      message.replaceChildren(errorBox(err));
    }
  };
  const forget = h("button", { type: "button", class: "danger", "data-action": "forget",
    onclick: () => run(`Forget ${data.id}? (memoryd forget ${data.id} --scope ${data.scope}; git history keeps it)`,
      "forget", { id: data.id, scope: data.scope }, (gone) => message.replaceChildren(
        h("div", { class: "ok" }, `forgot ${gone.id}: removed ${gone.path}`,
          gone.unlinked.length ? h("ul", { class: "plain" }, gone.unlinked.map((u) => h("li", {}, `cleared the link in ${u}`))) : null,
          h("div", {}, h("a", { href: "#memories" }, "← all memories"))))) }, "Forget");
  const proposal = data.meta.kind === "rule-proposal";
  const accept = proposal ? h("button", { type: "button", "data-action": "accept",
    onclick: () => run(`Accept ${data.id} as an iron rule? (memoryd accept ${data.id} --scope ${data.scope})`,
      "accept", { id: data.id, scope: data.scope }, (rule) => message.replaceChildren(
        h("div", { class: "ok" }, `accepted ${data.id} as ${rule.id}: it is now an iron rule `,
          memoryLink(rule.root, rule.path.slice(rule.root.length + 1), `open ${rule.id}`)))) }, "Accept as an iron rule")
    : data.proposed ? h("button", { type: "button", "data-action": "accept",
      onclick: () => run(`Accept ${data.id} for team ${data.team}? Every device of the team recalls it after its next sync. (memoryd accept ${data.id} --scope ${data.scope})`,
        "accept", { id: data.id, scope: data.scope }, (done) => message.replaceChildren(
          h("div", { class: "ok" }, `accepted ${done.id}: every device of team ${data.team} recalls it after its next sync`))) },
      "Accept for the team") : null;
  const pinned = data.meta.pinned === true;
  const pin = h("button", { type: "button", class: "plain", "data-action": pinned ? "unpin" : "pin",
    onclick: () => run(`${pinned ? "Unpin" : "Pin"} ${data.id}? (memoryd pin ${data.id} --scope ${data.scope}${pinned ? " --off" : ""})`,
      "pin", { id: data.id, scope: data.scope, on: !pinned }, () => render()) }, pinned ? "Unpin" : "Pin");
  return h("div", { class: "actions", id: "memory-actions" }, pin, accept, forget, message);
}

// Who or what wrote a memory: the fields its writer recorded, and git's first and last commit.
function origin(data) {
  const fields = Object.entries(data.origin || {});
  const first = data.history[data.history.length - 1];
  const last = data.history[0];
  return h("div", { id: "memory-origin" },
    data.by ? h("p", { id: "memory-provenance" }, `Team ${data.team}'s memory, ${data.by}`) : null,
    data.proposed ? h("p", { class: "paused" }, "Proposed: only the device that wrote it recalls it until a person accepts it.") : null,
    fields.length ? h("dl", { class: "meta" }, fields.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])) :
      h("p", { class: "muted" }, "Its frontmatter records no source, session or agent."),
    first ? h("p", {}, "First committed by ", h("strong", {}, first.author), " ", dateEl(first.date),
      ` (${first.commit.slice(0, 10)}: ${first.subject})`) : null,
    last && last !== first ? h("p", {}, "Last changed by ", h("strong", {}, last.author), " ", dateEl(last.date),
      ` (${last.commit.slice(0, 10)}: ${last.subject})`) : null);
}

// The text of a memory at one commit of its history, under the history table.
async function showAt(data, change, box) {
  box.replaceChildren(h("p", { class: "muted" }, "Reading…"));
  try {
    const got = await api("memory-at", { root: data.root, ref: data.ref, commit: change.commit });
    box.replaceChildren(h("h4", {}, `The text at ${change.commit.slice(0, 10)} (${change.author}, `, dateEl(change.date), ")"),
      h("pre", { id: "memory-at-text" }, got.text || "(the file was deleted in this commit)"));
  } catch (err) {
    box.replaceChildren(errorBox(err));
  }
}

VIEWS.memory = async (main, params) => {
  const data = await api("memory", { root: params.get("root") || "", path: params.get("path") || "",
    ref: params.get("ref") || "" });
  const meta = Object.entries(data.meta);
  const at = h("div", { id: "memory-at", "aria-live": "polite" });
  add(main, 
    h("p", {}, h("a", { href: "#memories" }, "← all memories")),
    h("h2", { id: "memory-title" }, data.id),
    h("p", { class: "muted" }, `${data.root}/${data.path} · ${data.scope} root · ${data.size} bytes`),
    data.problems.length ? h("div", { class: "error" }, data.problems.map((p) => h("div", {}, `${p.code}: ${p.message}`))) : null,
    actions(data),
    h("h3", {}, "Frontmatter"),
    meta.length ? h("dl", { class: "meta", id: "memory-meta" }, meta.map(([k, v]) =>
      [h("dt", {}, k), h("dd", { "data-key": k }, metaValue(k, v))])) : h("p", { class: "muted" }, "(none)"),
    h("h3", {}, "Body"),
    h("pre", { id: "memory-body" }, data.body),
    data.cut ? h("p", { class: "muted" }, "(the file is longer; the rest is not shown)") : null,
    h("h3", {}, "Supersedes chain"),
    data.chain.length ? h("ol", { class: "chain", id: "memory-chain" }, data.chain.map((c) =>
      h("li", { class: c.self ? "self" : "" }, c.exists && c.path && !c.self ? memoryLink(data.root, c.path, c.id) : c.id,
        c.summary ? ` — ${c.summary}` : "", c.exists ? "" : " (missing)"))) :
      h("p", { class: "muted" }, "It supersedes nothing and nothing supersedes it."),
    h("h3", {}, "Where it came from"),
    origin(data),
    h("h3", {}, "History in git (git log --follow)"),
    data.history.length ? cardTable({ id: "memory-history" }, [["date"], ["author"], ["commit"], ["subject"]],
      data.history.map((c) => [{ "data-commit": c.commit }, [dateEl(c.date), c.author,
        h("button", { type: "button", class: "plain", "aria-label": `Show the text at commit ${c.commit.slice(0, 10)}`,
          onclick: () => showAt(data, c, at) }, c.commit.slice(0, 10)), c.subject]])) :
      h("p", { class: "muted" }, data.commits ? "Not in git (yet): the next sync commits it."
        : "Not in git: this root does not commit (its sync.commit is off)."),
    at);
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
    cardTable({ id: "sync-table" },
      [["root"], ["last sync"], ["last status"], ["not pushed", "num"], ["error / pause"], ["actions", "actions"]],
      data.sync.map((s) => [{ "data-root": s.root }, [
        [s.root, " ", h("span", { class: "badge" }, s.scope), s.syncs ? "" : h("span", { class: "muted" }, " (does not sync)")],
        when(s.last_sync_ms),
        s.last_status || "—",
        s.not_pushed,
        [s.paused ? h("div", { class: "paused" }, `paused: ${s.paused.reason}`) : null,
          s.last_error && !s.paused ? h("div", {}, s.last_error) : null,
          s.ahead ? h("div", { class: "paused", "data-problem": "ahead" }, s.ahead) : null,
          s.quarantined.map((q) => h("div", { class: "muted" }, `kept out: ${q.path}:${q.line} ${q.rule}`))],
        [s.paused ? h("button", { class: "danger", "data-action": "confirm-delete",
            onclick: () => { if (window.confirm(`Commit the deletion that paused ${s.root}? (memoryd sync --allow-mass-delete)`)) act("Syncing", async () => (await post("sync", { root: s.root, allow_mass_delete: true })).text); } },
          "Commit the deletion") : null,
          s.syncs ? h("button", { class: "plain", "data-action": "sync",
            onclick: () => act("Syncing", async () => (await post("sync", { root: s.root })).text) }, "Sync now") : null]]])));
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
          h("th", { class: "no" }), h("th", { class: "right" }, `remote: the text at ${c.path}`)),
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
      h("div", {}, h("span", { class: "badge" }, p.check || "check"), " ",
        p.ref ? memoryLink(p.root, p.rel, p.path, p.ref) : h("strong", {}, p.path)),
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
    const on = a.dataset.view === view || (view === "memory" && a.dataset.view === "memories");
    a.classList.toggle("active", on);
    if (on) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
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
